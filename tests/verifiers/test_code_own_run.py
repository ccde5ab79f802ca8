"""Python tests that call their own check (HumanEval-X's trailing ``check(f)``, MultiPL-E's
``test_check()``): the program is judged, not the prompt's empty stub; a broken test stays ``error``."""

from referee.verifiers import code
from referee.verifiers.code.formats import parse_tests
from referee.verifiers.code.own_run import own_check_target, split_own_run

OPTIONS = {"timeout": 5.0, "workers": 1}
PROMPT = 'def add(a: int, b: int) -> int:\n    """Add two numbers.\n    >>> add(1, 2)\n    3\n    """\n'
CHECK = "METADATA = {}\n\n\ndef check(candidate):\n    assert candidate(1, 2) == 3\n    assert candidate(-4, 4) == 0\n\n"
HUMANEVAL_X = {"format": "humaneval", "language": "python", "prompt": PROMPT, "test": CHECK + "check(add)\n"}
MULTIPL_E = {"format": "humaneval", "prompt": PROMPT, "entry_point": "add",
             "test": CHECK + "def test_check():\n    check(add)\n\ntest_check()\n"}
RIGHT = PROMPT + "    return a + b\n"
WRONG = PROMPT + "    return a - b\n"


def judge(programs, tests):
    return [(v.status, v.reason) for v in code.verify_batch([f"```python\n{p}```" for p in programs],
                                                            [tests] * len(programs), **OPTIONS)]


def test_a_test_that_calls_its_own_check_judges_the_program_not_the_prompts_stub():
    right, wrong, crashes, stub = judge([RIGHT, WRONG, PROMPT + "    raise ValueError('no')\n", PROMPT], HUMANEVAL_X)
    assert right[0] == "correct", right
    assert wrong[0] == "wrong" and "assert candidate(1, 2) == 3" in wrong[1], wrong
    assert crashes[0] == "wrong" and "ValueError" in crashes[1], crashes
    assert stub[0] == "wrong", stub  # the prompt alone (a stub returning None) is the program's, and wrong


def test_multipl_e_style_test_check_runs_the_program():
    right, wrong = judge([RIGHT, WRONG], MULTIPL_E)
    assert right[0] == "correct" and wrong[0] == "wrong", (right, wrong)


def test_the_entry_point_is_read_from_the_tests_own_check_call():
    assert parse_tests(HUMANEVAL_X).entry_point == "add"
    assert own_check_target(CHECK) is None and own_check_target(CHECK + "check(add)") == "add"


def test_the_split_keeps_the_tests_line_numbers():
    definitions, own_run = split_own_run(CHECK + "check(add)\n")
    assert definitions == CHECK and own_run.splitlines()[CHECK.count("\n")] == "check(add)"
    assert split_own_run(CHECK) == (CHECK, "")
    assert split_own_run("x = 1; check(add)\n") == ("x = 1; check(add)\n", "")  # one line: left whole


def test_a_test_that_really_is_broken_is_still_the_datasets_error():
    broken = {
        "checks another function": {**HUMANEVAL_X, "prompt": PROMPT + "\n\ndef helper(x):\n    return x\n",
                                    "entry_point": "add", "test": CHECK + "check(helper)\n"},
        "calls what it never defines": {**HUMANEVAL_X, "test": CHECK + "check(add)\nreport(add)\n"},
        "its setup raises": {**HUMANEVAL_X, "test": "METADATA = 1 / 0\n" + CHECK + "check(add)\n"},
        "does not compile": {**HUMANEVAL_X, "entry_point": "add", "test": CHECK + "check(add\n"},
    }
    for name, tests in broken.items():
        [(status, reason)] = judge([RIGHT], tests)
        assert status == "error" and "fix the dataset row" in reason, (name, status, reason)


def test_a_completion_that_writes_only_the_body_continues_the_prompt():
    right, wrong, unrelated = judge(["    return a + b\n", "    return a * b\n", "print('hello')\n"], HUMANEVAL_X)
    assert right[0] == "correct" and wrong[0] == "wrong" and unrelated[0] == "wrong", (right, wrong, unrelated)
