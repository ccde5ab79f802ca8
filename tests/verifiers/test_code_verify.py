"""Honest programs pass and wrong ones fail in all four test formats, each with the right status,
score and reason; unusable tests and failed infrastructure are ``error``, never a silent 0."""

import json
import subprocess
import sys

import pytest

from referee.verifiers import Verdict, get_verifier
from referee.verifiers import code

OPTIONS = {"timeout": 2.0, "workers": 2}

HUMANEVAL_PROMPT = 'def poly(xs, x):\n    return sum(c * x ** i for i, c in enumerate(xs))\n\n\ndef find_zero(xs):\n    """..."""\n'
HUMANEVAL = {
    "format": "humaneval",
    "prompt": HUMANEVAL_PROMPT,
    "entry_point": "find_zero",
    "test": "def check(candidate):\n    for xs in ([1, 2], [-6, 11, -6, 1]):\n"
            "        assert abs(poly(xs, candidate(list(xs)))) < 1e-4\n",
}
FIND_ZERO = ("def find_zero(xs):\n    lo, hi = -1.0, 1.0\n    while poly(xs, lo) * poly(xs, hi) > 0:\n"
             "        lo, hi = 2 * lo, 2 * hi\n    for _ in range(100):\n        mid = (lo + hi) / 2\n"
             "        if poly(xs, mid) * poly(xs, lo) > 0:\n            lo = mid\n        else:\n            hi = mid\n"
             "    return lo\n")
ASSERTS = {"format": "asserts", "setup": "import math",
           "asserts": ["assert math.isclose(area(1), 3.14159, rel_tol=1e-3)", "assert area(0) == 0",
                       "assert round(area(2), 2) == 12.57"]}
CALL = {"format": "call", "fn_name": "twoSum", "inputs": [[[2, 7, 11, 15], 9], [[3, 2, 4], 6], [[3, 3], 6]],
        "outputs": [[0, 1], [1, 2], [[0, 1]]]}
STDIO = {"format": "stdio", "inputs": ["2\n1 2\n3 4\n", "1\n-5 5\n"], "outputs": ["3\n7\n", "0\n"]}


def chat(code_text: str) -> str:
    return f"Let me think step by step.\n\nHere is the solution:\n\n```python\n{code_text}```\n\nThis runs in O(n)."


HONEST = [
    ("humaneval", chat(HUMANEVAL_PROMPT + FIND_ZERO), HUMANEVAL),
    ("humaneval, body only after the prompt", HUMANEVAL_PROMPT + FIND_ZERO, HUMANEVAL),
    ("asserts", chat("import math\n\ndef area(r):\n    return math.pi * r * r\n"), ASSERTS),
    ("call", chat("def twoSum(nums, target):\n    seen = {}\n    for i, n in enumerate(nums):\n"
                  "        if target - n in seen:\n            return [seen[target - n], i]\n        seen[n] = i\n"), CALL),
    ("call, LeetCode class", chat("from typing import List\n\nclass Solution:\n"
                                  "    def twoSum(self, nums: List[int], target: int) -> List[int]:\n"
                                  "        for i in range(len(nums)):\n            for j in range(i + 1, len(nums)):\n"
                                  "                if nums[i] + nums[j] == target:\n                    return (i, j)\n"), CALL),
    ("stdio", chat("import sys\n\ndef main():\n    data = sys.stdin.read().split()\n    n = int(data[0])\n"
                   "    for i in range(n):\n        print(int(data[1 + 2 * i]) + int(data[2 + 2 * i]))\n\n"
                   "if __name__ == '__main__':\n    main()\n"), STDIO),
    ("stdio, input() and os._exit after flushing", chat(
        "import os, sys\nfor _ in range(int(input())):\n    a, b = map(int, input().split())\n    print(a + b)\n"
        "sys.stdout.flush()\nos._exit(0)\n"), STDIO),
    ("stdio, sys.exit(1) at the end: exit codes never count", chat(
        "import sys\nn = int(input())\nprint('\\n'.join(str(sum(map(int, input().split()))) for _ in range(n)))\n"
        "sys.exit(1)\n"), STDIO),
]


@pytest.mark.parametrize(("name", "completion", "tests"), HONEST, ids=[h[0] for h in HONEST])
def test_honest_programs_pass(name, completion, tests):
    verdict = code.verify(completion, tests, **OPTIONS)
    assert verdict.status == "correct", verdict.reason
    assert verdict.score == 1.0 and verdict.details["passed"] == verdict.details["total"]
    assert verdict.extracted and "```" not in verdict.extracted


WRONG = [
    ("humaneval, wrong root", chat(HUMANEVAL_PROMPT + "def find_zero(xs):\n    return 0.5\n"), HUMANEVAL, 0.0, "wrong",
     "assertion failed at assert abs(poly(xs, candidate(list(xs)))) < 1e-4"),
    ("humaneval, returns None", HUMANEVAL_PROMPT + "def find_zero(xs):\n    return None\n", HUMANEVAL, 0.0, "wrong",
     "TypeError"),
    ("asserts, 2 of 3", chat("def area(r):\n    return 3.14159 * r * r if r < 2 else 12\n"), ASSERTS, 2 / 3, "wrong",
     "test 3: assertion failed at assert round(area(2), 2) == 12.57"),
    ("asserts, misnamed function", chat("def circle_area(r):\n    return 3.14159 * r * r\n"), ASSERTS, 0.0, "wrong",
     "NameError"),
    ("call, one wrong", chat("def twoSum(nums, target):\n    return [0, 1]\n"), CALL, 2 / 3, "wrong",
     "twoSum([3, 2, 4], 6) returned [0, 1], expected [1, 2]"),
    ("call, raises", chat("def twoSum(nums, target):\n    raise ValueError('no pair')\n"), CALL, 0.0, "wrong",
     "the program raised ValueError: no pair"),
    ("stdio, off by one", chat("n = int(input())\nfor _ in range(n):\n    a, b = map(int, input().split())\n"
                               "    print(a + b + 1)\n"), STDIO, 0.0, "wrong", "line 1: got '4', expected '3'"),
    ("stdio, crash after printing the right answer", chat(
        "n = int(input())\nfor _ in range(n):\n    print(sum(map(int, input().split())))\nraise RuntimeError('late')\n"),
     STDIO, 0.0, "wrong", "raised RuntimeError: late"),
    ("syntax error", chat("def twoSum(nums, target)\n    return [0, 1]\n"), CALL, 0.0, "wrong",
     "raised SyntaxError while loading"),
    ("no code at all", "I don't know how to solve this.", CALL, 0.0, "no_answer", "holds no code"),
    ("empty code block", "```python\n\n```", CALL, 0.0, "no_answer", "holds no code"),
]


@pytest.mark.parametrize(("name", "completion", "tests", "score", "status", "reason"), WRONG, ids=[w[0] for w in WRONG])
def test_wrong_programs_fail_with_a_reason(name, completion, tests, score, status, reason):
    verdict = code.verify(completion, tests, **OPTIONS)
    assert verdict.status == status, verdict.reason
    assert verdict.score == pytest.approx(score)
    assert reason in verdict.reason


def test_details_say_how_each_test_went():
    verdict = code.verify("def twoSum(nums, target):\n    return [0, 1]\n", CALL, **OPTIONS)
    assert [t["kind"] for t in verdict.details["tests"]] == ["passed", "wrong", "passed"]
    assert verdict.details["isolation"] in code.LEVELS
    json.dumps(verdict.to_dict())


def test_program_exceptions_reach_tests_that_expect_them():
    tests = {"format": "humaneval", "entry_point": "parse", "test": (
        "def check(candidate):\n    try:\n        candidate('x')\n    except ValueError:\n        pass\n"
        "    else:\n        raise AssertionError('no ValueError')\n    assert candidate('7') == 7\n")}
    assert code.verify("def parse(s):\n    return int(s)\n", tests, **OPTIONS).correct
    assert not code.verify("def parse(s):\n    return 7\n", tests, **OPTIONS).correct


def test_the_programs_imports_reach_the_asserts_only_under_their_own_names():
    tests = {"format": "asserts", "asserts": ["assert math.isclose(area(1), 3.14159, rel_tol=1e-3)"]}  # no setup
    assert code.verify("import math\ndef area(r):\n    return math.pi * r * r\n", tests, **OPTIONS).correct
    verdict = code.verify("import statistics as math\ndef area(r):\n    return 3.14159 * r * r\n", tests, **OPTIONS)
    assert verdict.status == "wrong" and "NameError" in verdict.reason  # never statistics bound as math


def test_a_program_that_times_out_on_one_test_is_restarted_for_the_next():
    tests = {"format": "call", "fn_name": "f", "inputs": [[1], [0], [2]], "outputs": [1, 0, 2]}
    program = "import time\ndef f(x):\n    if x == 0:\n        time.sleep(60)\n    return x\n"
    verdict = code.verify(program, tests, timeout=0.5, workers=2)  # the middle test would sleep a minute
    assert verdict.status == "wrong" and verdict.score == pytest.approx(2 / 3)
    assert [t["kind"] for t in verdict.details["tests"]] == ["passed", "timeout", "passed"]
    assert verdict.details["jobs"] == 2


def test_everything_timing_out_is_the_timeout_status():
    verdict = code.verify("while True:\n    pass\n", CALL, timeout=0.5, workers=2)
    assert verdict.status == "timeout" and verdict.score == 0.0
    assert verdict.details["jobs"] == 1  # a program that never loads is not reloaded per test


def test_state_persists_between_calls_within_a_test_like_in_a_single_process():
    tests = {"format": "humaneval", "entry_point": "counter",
             "test": "def check(candidate):\n    assert [candidate() for _ in range(3)] == [1, 2, 3]\n"}
    program = "calls = 0\ndef counter():\n    global calls\n    calls += 1\n    return calls\n"
    assert code.verify(program, tests, **OPTIONS).correct


def test_float_tolerance_is_opt_in():
    tests = {"format": "call", "fn_name": "third", "inputs": [[1]], "outputs": [0.333333]}
    program = "def third(x):\n    return x / 3\n"
    assert code.verify(program, tests, **OPTIONS).status == "wrong"
    assert code.verify(program, tests, abs_tol=1e-5, **OPTIONS).correct
    stdio = {"format": "stdio", "inputs": [""], "outputs": ["0.333333\n"]}
    assert code.verify("print(1 / 3)", stdio, rel_tol=1e-5, **OPTIONS).correct


@pytest.mark.parametrize(("tests", "reason"), [
    ({"format": "mbpp", "test_list": []}, "is not one of"),
    ({"format": "humaneval", "test": "def check(candidate):\n    assert candidate(1) ==\n", "entry_point": "f"},
     "does not compile"),
    ({"format": "humaneval", "test": "def test():\n    pass\n", "entry_point": "f"}, "no check(candidate)"),
    ({"format": "asserts", "asserts": ["assert f(1) == 1"], "setup": "import no_such_module_here"},
     "ModuleNotFoundError"),
    ({"format": "humaneval", "test": "def check(candidate):\n    assert candidate(print) is None\n",
      "entry_point": "f"}, "not plain data"),
])
def test_unusable_tests_are_errors_not_the_completions_fault(tests, reason):
    verdict = code.verify("def f(x):\n    return x\n", tests, **OPTIONS)
    assert verdict.status == "error" and not verdict.is_completion_fault
    assert reason in verdict.reason


def test_test_code_that_hangs_is_an_error_within_its_budget(monkeypatch):
    from referee.verifiers.code import grading

    monkeypatch.setattr(grading, "judge_budget", lambda timeout, tests: 1.0)
    monkeypatch.setattr(grading, "_SANDBOX_START_SECONDS", 0.0)
    tests = {"format": "humaneval", "entry_point": "f", "test": "def check(candidate):\n    while True:\n        pass\n"}
    verdict = code.verify("def f(x):\n    return x\n", tests, **OPTIONS)  # the test code never ends on its own
    assert verdict.status == "error" and "did not finish" in verdict.reason
    monkeypatch.undo()  # the replaced judge may take its time to start its sandbox
    echo = {"format": "call", "fn_name": "f", "inputs": [[1], [2]], "outputs": [1, 2]}
    assert code.verify("def f(x):\n    return x\n", echo, **OPTIONS).correct  # the replaced judge works


@pytest.mark.parametrize("options", [{"timeout": 0}, {"timeout": "3"}, {"memory_mb": 0}, {"workers": 0},
                                     {"abs_tol": -1.0}, {"isolation": "chroot"}])
def test_bad_options_are_error_verdicts(options):
    verdict = code.verify("def f():\n    return 1\n", CALL, **options)
    assert verdict.status == "error"
    assert next(iter(options)) in verdict.reason


@pytest.mark.parametrize("completion", ["def f(x):\n    return x\x00", "def f(x):\n    return '\ud800'", "```python",
                                        "```python\n```\n```python\n", "x = 1\n" * 100_000, "(" * 10_000,
                                        "def f(x):\n" + "    if x:\n" * 200 + "        pass", "\u00e9\u4e2d\U0001f600 = 1"])
def test_junk_completions_fail_as_the_completions_fault(completion):
    verdict = code.verify(completion, CALL, **OPTIONS)
    assert verdict.status in ("wrong", "no_answer") and verdict.score == 0.0, verdict.reason


def test_verify_batch_keeps_order_and_survives_bad_items():
    good = "def twoSum(nums, target):\n    return [nums.index(target - nums[-1]), len(nums) - 1]\n"
    verdicts = code.verify_batch([good, None, "```python\n```", good, "oops("], [CALL, CALL, CALL, {"format": "?"}, CALL],
                                 **OPTIONS)
    assert [v.status for v in verdicts] == ["wrong", "error", "no_answer", "error", "wrong"]
    assert verdicts[0].score == pytest.approx(2 / 3)  # the first input has no pair with the last number
    with pytest.raises(ValueError, match="one tests dict per completion"):
        code.verify_batch(["x"], [], **OPTIONS)


def test_registered_as_the_code_verifier():
    assert get_verifier("code") is code
    assert isinstance(code.verify("def f():\n    return 1\n", {"format": "call", "fn_name": "f", "inputs": [[]],
                                                                 "outputs": [1]}), Verdict)


def test_referee_score_judges_a_file_with_the_code_verifier(tmp_path):
    rows = [{"completion": chat("def f(x):\n    return x * 2\n"),
             "tests": {"format": "call", "fn_name": "f", "inputs": [[2]], "outputs": [4]}},
            {"completion": "def f(x):\n    return x", "tests": {"format": "call", "fn_name": "f", "inputs": [[2]],
                                                                  "outputs": [4]}}]
    source = tmp_path / "in.jsonl"
    source.write_text("".join(json.dumps(row) + "\n" for row in rows))
    done = subprocess.run([sys.executable, "-m", "referee.recipes.cli", "score", "code", str(source), "--no-progress",
                           "-O", "timeout=5"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert [json.loads(line)["status"] for line in done.stdout.splitlines()] == ["correct", "wrong"]


@pytest.mark.parametrize("timeout", [1e10, 1e300])
def test_a_timeout_no_clock_holds_is_one_clear_error(timeout):
    verdict = code.verify("def f():\n    return 1\n", CALL, timeout=timeout)
    assert verdict.status == "error" and "is over a day" in verdict.reason
    from referee.verifiers.code.run import run_program

    run = run_program("print(1)", timeout=timeout)
    assert run.ended == "error" and "is over a day" in run.reason


def test_the_longest_timeout_works_with_many_tests():
    # The judge's budget grows with the tests (here past the 24.8 days poll() can wait at once).
    many = {"format": "call", "fn_name": "f", "inputs": [[n] for n in range(13)], "outputs": list(range(13))}
    assert code.verify("def f(x):\n    return x\n", many, timeout=86400.0).correct
