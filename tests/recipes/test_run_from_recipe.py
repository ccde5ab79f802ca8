"""``referee eval --recipe R`` and ``referee prefilter --recipe R`` see the prompts training sends.

Written from a new user's failure: ``referee eval`` on the demo's data read the raw ``question``
column without the chat template and scored 2% where the recipe's prompt gives 49%, and its
default of 512 new tokens did not fit the demo model's 256-token context.
"""

import json
from pathlib import Path

import pytest
import torch

from referee.recipes.cli import main
from referee.recipes.prefilter.recipe_prompts import read_recipe_prompts

torch.set_num_threads(1)

SYSTEM = "Answer with '#### N'."


def write_recipe(folder: Path, model: str, data: str, **keys) -> str:
    values = {"model_name_or_path": model, "dataset_name": data, "dataset_format": "gsm8k", "system_prompt": SYSTEM,
              "reward_funcs": ["gsm8k_accuracy", "gsm8k_format"], "reward_weights": [1.0, 0.1],
              "max_completion_length": 24, "temperature": 0.7, "output_dir": str(folder / "run"), "use_cpu": True,
              "bf16": False, **keys}
    path = folder / "recipe.yaml"
    path.write_text("".join(f"{key}: {json.dumps(value)}\n" for key, value in values.items()))
    return str(path)


@pytest.fixture
def gsm8k_rows(tmp_path):
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps({"question": f"What is {a} + 1?", "answer": f"{a} + 1 = {a + 1}\n#### {a + 1}"})
                            + "\n" for a in range(3)))
    return str(path)


def test_eval_with_a_recipe_samples_its_chat_prompts_with_its_reward_and_budget(tmp_path, model_dir, gsm8k_rows):
    recipe = write_recipe(tmp_path, model_dir, gsm8k_rows)
    out = tmp_path / "eval"
    assert main(["eval", "--recipe", recipe, "--data", gsm8k_rows, "-k", "2", "--out", str(out),
                 "--backend", "transformers", "--no-progress"]) == 0
    settings = json.loads((out / "state/run.json").read_text())["settings"]
    assert settings["model"] == model_dir and settings["rewards"] == ["gsm8k_accuracy"]  # the correctness reward only
    assert settings["sampling"]["max_tokens"] == 24 and settings["sampling"]["temperature"] == 0.7
    assert settings["prompt"]["recipe"] == recipe
    row = json.loads((out / "all.jsonl").read_text().splitlines()[0])
    assert row["prompt"] == [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "What is 0 + 1?"}]


def test_flags_win_over_the_recipe(tmp_path, model_dir, gsm8k_rows):
    recipe = write_recipe(tmp_path, model_dir, gsm8k_rows)
    out = tmp_path / "prefilter"
    assert main(["prefilter", "--recipe", recipe, "--data", gsm8k_rows, "--keep", "0:1", "--num-generations", "2",
                 "--reward", "gsm8k_format", "--max-tokens", "8", "--temperature", "1.0", "--out", str(out),
                 "--backend", "transformers", "--no-progress"]) == 0
    settings = json.loads((out / "state/run.json").read_text())["settings"]
    assert settings["rewards"] == ["gsm8k_format"]
    assert settings["sampling"]["max_tokens"] == 8 and settings["sampling"]["temperature"] == 1.0


def test_a_recipe_budget_beyond_the_context_is_lowered_to_fit(tmp_path, model_dir, gsm8k_rows, capsys):
    recipe = write_recipe(tmp_path, model_dir, gsm8k_rows, max_completion_length=4096)
    out = tmp_path / "eval"
    assert main(["eval", "--recipe", recipe, "--data", gsm8k_rows, "-k", "1", "--out", str(out), "--max-rows", "1",
                 "--backend", "transformers", "--no-progress"]) == 0
    budget = json.loads((out / "state/run.json").read_text())["settings"]["sampling"]["max_tokens"]
    assert 0 < budget < 256  # the tiny model's context, less the chat prompt
    assert f"max tokens {budget}: the model's context of 256 tokens" in capsys.readouterr().err


def test_a_recipe_with_another_prompt_column_is_refused_in_one_line(tmp_path, model_dir, gsm8k_rows, capsys):
    recipe = write_recipe(tmp_path, model_dir, gsm8k_rows)
    assert main(["eval", "--recipe", recipe, "--data", gsm8k_rows, "--prompt-column", "question", "-k", "1",
                 "--out", str(tmp_path / "eval"), "--backend", "transformers", "--no-progress"]) == 2
    assert "writes the prompt to the 'prompt' column; drop --prompt-column question" in capsys.readouterr().err


def test_a_shipped_recipe_names_its_correctness_reward_first():
    for name, reward in (("gsm8k_qwen2.5-1.5b_lora", "gsm8k_accuracy"), ("math_qwen2.5-1.5b_full", "math_accuracy"),
                         ("code_qwen2.5-coder-1.5b_lora", "code_pass_rate")):
        assert read_recipe_prompts(name).reward == reward


def test_eval_on_data_without_the_prompt_column_names_it_instead_of_the_budget(tmp_path, model_dir, gsm8k_rows,
                                                                                 capsys):
    """The issue's command: no --max-tokens, no --prompt-column, on a model of 256 tokens of context."""
    command = ["eval", "--model", model_dir, "--data", gsm8k_rows, "--reward", "gsm8k_accuracy", "-k", "2",
               "--backend", "transformers", "--no-progress"]
    assert main([*command, "--out", str(tmp_path / "no-column")]) == 2
    err = capsys.readouterr().err
    assert err == ("referee eval: no row of --data has a prompt to generate from: row has no 'prompt' column (choose "
                   "the prompt column with --prompt-column).\n")
    out = tmp_path / "question"
    assert main([*command, "--prompt-column", "question", "--out", str(out)]) == 0
    budget = json.loads((out / "state/run.json").read_text())["settings"]["sampling"]["max_tokens"]
    assert budget == 256 - len("What is 2 + 1?")  # the context less the longest prompt (a character tokenizer)
