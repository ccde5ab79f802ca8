import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.verifiers import Verdict
from referee.verifiers.format import (
    CHECKS,
    check_answer_line,
    check_answer_tags,
    check_code_block,
    check_regex,
    check_tag_counts,
    check_think,
    get_check,
)

R1_STYLE = "<think>\nJanet has 16 eggs. 16 - 3 - 4 = 9. 9 * 2 = 18.\n</think>\n\nShe makes $18 a day.\n#### 18"
# Qwen3 / DeepSeek-R1-Distill templates end the prompt with "<think>\n": the completion starts inside.
PREFILLED = "Okay, let me see. 16 - 3 - 4 = 9 eggs, 9 * 2 = 18.\n</think>\n\nThe answer is 18."
OPEN_R1_STYLE = "<think>\n9 * 2 = 18\n</think>\n<answer>\n18\n</answer>"
QWEN3_NO_THINK = "<think>\n\n</think>\n\nThe answer is 18."

THINK_CASES = [
    (R1_STYLE, {}, "correct"),
    (PREFILLED, {}, "correct"),
    (PREFILLED, {"prefilled": True}, "correct"),
    (PREFILLED, {"prefilled": False}, "wrong"),
    (R1_STYLE, {"prefilled": True}, "wrong"),
    (R1_STYLE, {"prefilled": False}, "correct"),
    ("  \n" + R1_STYLE, {}, "correct"),
    (OPEN_R1_STYLE, {"answer_tag": "answer"}, "correct"),
    (QWEN3_NO_THINK, {}, "wrong"),  # empty reasoning block
    ("<think>\n9 * 2 = 18\n#### 18", {}, "wrong"),  # never closed
    ("<think>9 * 2 = 18</think>", {}, "wrong"),  # nothing after the block
    ("<think>9 * 2 = 18</think>\n   \n", {}, "wrong"),
    ("Sure! <think>9 * 2 = 18</think>#### 18", {}, "wrong"),  # text before the opener
    ("<think>a<think>b</think>c</think>#### 18", {}, "wrong"),  # nested
    ("<think>a</think>b</think>#### 18", {}, "wrong"),  # closed twice
    ("</think>18<think>", {}, "wrong"),  # mismatched
    ("#### 18", {}, "wrong"),
    ("", {}, "wrong"),
    ("<reasoning>9 * 2 = 18</reasoning>\n18", {"tag": "reasoning"}, "correct"),
    (OPEN_R1_STYLE + "\nHope this helps", {"answer_tag": "answer"}, "wrong"),  # text after the answer block
    ("<think>x</think>\nSo: <answer>18</answer>", {"answer_tag": "answer"}, "wrong"),
    ("<think>x</think>\n<answer>  </answer>", {"answer_tag": "answer"}, "wrong"),
]


@pytest.mark.parametrize(("completion", "options", "status"), THINK_CASES)
def test_think_structure(completion, options, status):
    verdict = check_think(completion, **options)
    assert verdict.status == status, verdict.reason
    assert verdict.score == (1.0 if status == "correct" else 0.0)


def test_think_reports_prefill_and_the_answer():
    assert check_think(PREFILLED).details["prefilled"] is True
    assert check_think(R1_STYLE).details["prefilled"] is False
    assert check_think(OPEN_R1_STYLE, answer_tag="answer").extracted == "18"


@pytest.mark.parametrize(("completion", "options", "status", "extracted"), [
    ("<answer>18</answer>", {}, "correct", "18"),
    ("<think>x</think>\n<answer>\n$18\n</answer>", {}, "correct", "$18"),
    ("<answer>18</answer> That's it.", {}, "correct", "18"),
    ("<answer>18</answer> That's it.", {"last": True}, "wrong", "18"),
    ("<answer>18</answer>\n\n", {"last": True}, "correct", "18"),
    ("<answer>17</answer><answer>18</answer>", {}, "wrong", None),
    ("<answer>18", {}, "wrong", None),
    ("</answer>18<answer>", {}, "wrong", None),
    ("<answer></answer>", {}, "wrong", None),
    ("<ANSWER>18</ANSWER>", {}, "wrong", None),
    ("<final>18</final>", {"tag": "final"}, "correct", "18"),
])
def test_answer_tags(completion, options, status, extracted):
    verdict = check_answer_tags(completion, **options)
    assert (verdict.status, verdict.extracted) == (status, extracted), verdict.reason


@pytest.mark.parametrize(("completion", "options", "score"), [
    (OPEN_R1_STYLE, {}, 1.0),
    ("9 * 2 = 18\n</think>\n<answer>18</answer>", {}, 1.0),  # <think> pre-filled by the template
    ("9 * 2 = 18\n</think>\n<answer>18</answer>", {"prefilled": False}, 0.75),
    (OPEN_R1_STYLE, {"prefilled": True}, 0.75),
    ("<think>x</think> 18", {}, 0.5),
    ("<think>x</think><answer>1</answer><answer>2</answer>", {}, 0.5),
    ("</think>x<think>\n<answer>18</answer>", {}, 0.5),  # mismatched pair earns nothing
    ("</answer>18<answer>", {"tags": ["answer"]}, 0.0),
    ("no tags at all", {}, 0.0),
    ("<think><think></think></think><answer></answer>", {}, 0.5),
])
def test_tag_counts_give_partial_credit(completion, options, score):
    verdict = check_tag_counts(completion, **options)
    assert verdict.score == score, verdict.reason
    assert verdict.status == ("correct" if score == 1.0 else "wrong")


@pytest.mark.parametrize(("completion", "status", "extracted"), [
    ("16 - 3 - 4 = 9\n9 * 2 = 18\n#### 18", "correct", "18"),
    ("#### $1,000", "correct", "$1,000"),
    ("> #### -3", "correct", "-3"),
    ("#### Step 1\nAdd them.\n#### 18", "correct", "18"),  # a markdown heading is not an answer line
    ("#### Step 1\nThe answer is 18.", "wrong", None),
    ("The answer is 18.", "wrong", None),
    ("#### 17\n#### 18", "wrong", None),
    ("Total #### 18", "wrong", None),
    ("####", "wrong", None),
])
def test_answer_line(completion, status, extracted):
    verdict = check_answer_line(completion)
    assert (verdict.status, verdict.extracted) == (status, extracted), verdict.reason


@pytest.mark.parametrize(("completion", "options", "status"), [
    ("Here is the code:\n```python\ndef add(a, b):\n    return a + b\n```\nDone.", {}, "correct"),
    ("```\nprint(1)\n```", {}, "correct"),
    ("```Python\nprint(1)\n```", {"language": "python"}, "correct"),
    ("```js\nf()\n```\n```python\nprint(1)\n```", {"language": "python"}, "correct"),
    ("```js\nf()\n```", {"language": "python"}, "wrong"),
    ("```python\ndef add(a, b):\n    return a + b", {}, "wrong"),  # never closed (truncated)
    ("```python\n\n```", {}, "wrong"),
    ("def add(a, b): return a + b", {}, "wrong"),
    ("Use `print(1)` inline.", {}, "wrong"),
])
def test_code_block(completion, options, status):
    assert check_code_block(completion, **options).status == status


def test_regex():
    assert check_regex("Final: 18", pattern=r"Final: (\d+)").extracted == "Final: 18"
    assert check_regex("line\nFinal: 18", pattern=r"^Final: \d+$").status == "wrong"
    assert check_regex("line\nFinal: 18", pattern=r"(?m)^Final: \d+$").correct
    assert check_regex("FINAL: 18", pattern=r"(?i)final: 18", fullmatch=True).correct
    assert check_regex("x", pattern="(").status == "error"
    assert check_regex("x", pattern=3).status == "error"


@pytest.mark.parametrize("bad", [None, 18, b"#### 18", ["#### 18"]])
@pytest.mark.parametrize("name", sorted(CHECKS))
def test_non_text_is_an_error_not_a_crash(name, bad):
    options = {"pattern": "x"} if name == "regex" else {}
    verdict = get_check(name)(bad, **options)
    assert verdict.status == "error" and "str" in verdict.reason


@pytest.mark.parametrize(("check", "options"), [
    (check_think, {"tag": "<think>"}),
    (check_think, {"prefilled": "yes"}),
    (check_think, {"answer_tag": ""}),
    (check_answer_tags, {"tag": "a b"}),
    (check_tag_counts, {"tags": "think"}),
    (check_tag_counts, {"tags": []}),
    (check_code_block, {"language": " "}),
])
def test_unusable_options_are_errors(check, options):
    verdict = check("<think>x</think>y", **options)
    assert verdict.status == "error", verdict.reason


def test_unknown_check_names_the_choices():
    with pytest.raises(ValueError, match="choose one of think, answer_tags"):
        get_check("thinking")


def test_huge_and_binary_inputs():
    huge = "<think>" + "step. " * 200_000 + "</think>\n#### 18"
    assert check_think(huge).correct
    assert check_answer_line(huge).correct
    junk = bytes(range(256)).decode("latin-1") * 100
    for name, check in CHECKS.items():
        assert isinstance(check(junk, **({"pattern": "x"} if name == "regex" else {})), Verdict)


_plain = st.text(alphabet=st.characters(blacklist_characters="<>", blacklist_categories=("Cs",)), max_size=60)
_filled = _plain.filter(lambda s: s.strip() != "")


@settings(max_examples=150, deadline=None)
@given(reasoning=_filled, answer=_filled, lead=st.sampled_from(["", " ", "\n"]))
def test_any_well_formed_block_passes_with_or_without_the_prefill(reasoning, answer, lead):
    assert check_think(f"{lead}<think>{reasoning}</think>{answer}").correct
    assert check_think(f"{reasoning}</think>{answer}").correct
    assert check_tag_counts(f"<think>{reasoning}</think><answer>{answer}</answer>").score == 1.0
    assert check_answer_tags(f"{reasoning}<answer>{answer}</answer>").extracted == answer.strip()


def test_an_answer_tag_inside_the_reasoning_is_not_one_answer_block():
    # Found by the property test below: the pre-filled reasoning held a stray <answer>.
    text = "<answer></think><answer>x</answer>"
    assert not check_think(text, answer_tag="answer").correct
    assert check_tag_counts(text).score == 0.75 and not check_answer_tags(text).correct


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["<think>", "</think>", "<answer>", "</answer>", "x", " ", "\n", "#### 18"]),
                max_size=12).map("".join))
def test_checks_never_raise_and_scores_stay_in_range(text):
    for name, check in CHECKS.items():
        verdict = check(text, **({"pattern": "x"} if name == "regex" else {}))
        assert 0.0 <= verdict.score <= 1.0
        assert verdict.status in ("correct", "wrong")
    tag_score = check_tag_counts(text).score
    assert tag_score * 4 == int(tag_score * 4)  # quarters: each of four markers is worth a share
    if check_think(text, answer_tag="answer").correct:
        assert check_tag_counts(text).score == 1.0 and check_answer_tags(text).correct
