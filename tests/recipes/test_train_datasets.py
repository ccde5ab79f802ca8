"""Dataset loaders: real row shapes of GSM8K, MATH, MBPP and HumanEval map to a chat prompt and the gold."""

from __future__ import annotations

import gzip
import json

import pytest

from referee.recipes.train.datasets import DATASET_FORMATS, load_training_dataset, to_training_row
from referee.rewards import get_reward

# Rows as the public datasets store them (first rows of each, trimmed).
GSM8K_ROW = {"question": "Janet\u2019s ducks lay 16 eggs per day. She eats three for breakfast every morning and bakes "
                         "muffins for her friends every day with four. She sells the remainder at the farmers' market "
                         "daily for $2 per fresh duck egg. How much in dollars does she make every day?",
             "answer": "Janet sells 16 - 3 - 4 = <<16-3-4=9>>9 duck eggs a day.\nShe makes 9 * 2 = $<<9*2=18>>18 every "
                       "day at the farmer\u2019s market.\n#### 18"}
MATH500_ROW = {"problem": "Convert the point $(0,3)$ in rectangular coordinates to polar coordinates.",
               "solution": "... the polar coordinates are $\\boxed{\\left( 3, \\frac{\\pi}{2} \\right)}.$",
               "answer": "\\left( 3, \\frac{\\pi}{2} \\right)", "subject": "Precalculus", "level": 2,
               "unique_id": "test/precalculus/807.json"}
MATH_LIGHTEVAL_ROW = {"problem": "What is $1+1$?", "level": "Level 1", "type": "Algebra",
                      "solution": "$1+1=\\boxed{2}$."}
MBPP_ROW = {"task_id": 2, "text": "Write a function to find the similar elements from the given two tuple lists.",
            "code": "def similar_elements(test_tup1, test_tup2):\r\n  res = tuple(set(test_tup1) & set(test_tup2))\r\n  "
                    "return (res) ", "test_setup_code": "",
            "test_list": ["assert similar_elements((3, 4, 5, 6),(5, 7, 4, 10)) == (4, 5)",
                          "assert similar_elements((1, 2, 3, 4),(5, 4, 3, 7)) == (3, 4)"],
            "challenge_test_list": []}
HUMANEVAL_ROW = {"task_id": "HumanEval/53", "prompt": "\n\ndef add(x: int, y: int):\n    \"\"\"Add two numbers x and y\n"
                 "    >>> add(2, 3)\n    5\n    \"\"\"\n", "entry_point": "add",
                 "canonical_solution": "    return x + y\n",
                 "test": "\n\ndef check(candidate):\n    assert candidate(0, 1) == 1\n    assert candidate(2, 3) == 5\n"}


def test_gsm8k_row_keeps_the_solution_as_gold_and_asks_for_the_answer_line():
    row = to_training_row(GSM8K_ROW, "gsm8k")
    system, user = row["prompt"]
    assert system == {"role": "system", "content": DATASET_FORMATS["gsm8k"].system_prompt} and "'#### N'" in system["content"]
    assert user == {"role": "user", "content": GSM8K_ROW["question"]}
    reward = get_reward("gsm8k_accuracy")
    assert reward(completions=["9 eggs * $2 = $18\n#### 18", "#### 16"], answer=[row["answer"]] * 2) == [1.0, 0.0]


def test_math_rows_keep_the_gold_columns_they_have():
    assert set(to_training_row(MATH500_ROW, "math")) == {"prompt", "answer", "solution"}
    assert set(to_training_row(MATH_LIGHTEVAL_ROW, "math")) == {"prompt", "solution"}
    assert "\\boxed{}" in to_training_row(MATH_LIGHTEVAL_ROW, "math")["prompt"][0]["content"]


def test_mbpp_row_becomes_asserts_and_shows_one_test():
    row = to_training_row(MBPP_ROW, "code")
    assert row["tests"] == {"format": "asserts", "asserts": MBPP_ROW["test_list"], "setup": ""}
    user = row["prompt"][-1]["content"]
    assert MBPP_ROW["test_list"][0] in user and MBPP_ROW["test_list"][1] not in user


def test_humaneval_row_becomes_a_check_with_the_prompt():
    tests = to_training_row(HUMANEVAL_ROW, "code")["tests"]
    assert tests == {"format": "humaneval", "test": HUMANEVAL_ROW["test"], "entry_point": "add",
                     "prompt": HUMANEVAL_ROW["prompt"]}


def test_prepared_code_rows_pass_through():
    tests = {"format": "call", "fn_name": "f", "inputs": [[1]], "outputs": [2]}
    assert to_training_row({"prompt": "Write f.", "tests": tests}, "code")["tests"] == tests


def test_system_prompt_override_and_removal():
    assert to_training_row(GSM8K_ROW, "gsm8k", system_prompt="Answer briefly.")["prompt"][0]["content"] == "Answer briefly."
    assert [m["role"] for m in to_training_row(GSM8K_ROW, "gsm8k", system_prompt="")["prompt"]] == ["user"]


@pytest.mark.parametrize("fmt, row, missing", [
    ("gsm8k", {"question": "q"}, "'answer'"),
    ("gsm8k", {"problem": "p", "answer": "1"}, "'question'"),
    ("math", {"problem": "p"}, "'answer'"),
    ("code", {"text": "t"}, "'prompt'"),
])
def test_missing_columns_are_named(fmt, row, missing):
    with pytest.raises(ValueError, match=f"The {fmt}.*loader needs the {missing} column"):
        to_training_row(row, fmt)


def test_jsonl_gz_file_loads_with_max_rows(tmp_path):
    path = tmp_path / "mbpp.jsonl.gz"
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        for task in range(5):
            handle.write(json.dumps({**MBPP_ROW, "task_id": task}) + "\n")
    dataset = load_training_dataset(str(path), "code", max_rows=3)
    assert len(dataset) == 3 and dataset.column_names == ["prompt", "tests"]
    assert dataset[0]["tests"]["asserts"] == MBPP_ROW["test_list"]


def test_bad_rows_stop_the_load_with_their_position(tmp_path):
    path = tmp_path / "gsm8k.jsonl"
    path.write_text(json.dumps(GSM8K_ROW) + "\n{not json\n")
    with pytest.raises(ValueError, match="row 2 cannot be read"):
        load_training_dataset(str(path), "gsm8k")
    path.write_text(json.dumps(GSM8K_ROW) + "\n" + json.dumps({"question": "no gold"}) + "\n")
    with pytest.raises(ValueError, match="row 2: The gsm8k loader needs the 'answer' column"):
        load_training_dataset(str(path), "gsm8k")


def test_unknown_format_and_missing_file():
    with pytest.raises(ValueError, match="Unknown dataset_format 'svamp'; choose one of gsm8k, math, code"):
        load_training_dataset("whatever.jsonl", "svamp")
    with pytest.raises(ValueError, match="No file or folder"):
        load_training_dataset("./missing.jsonl", "gsm8k")
