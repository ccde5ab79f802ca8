"""referee audit on code rows: the code probes, referee's code rewards against them, and naive
code rewards peers write (pay exit status 0; read printed output and a success marker) caught.

The naive rewards run only the audit's own probes and the rows' gold solutions (harmless
programs: exit, raise, print), each in a subprocess with a timeout."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.recipes.cli import main
from referee.rewards import get_reward
from referee.rewards.audit import audit_reward, probe_family
from referee.rewards.code_probes import CODE_PROBES, code_row
from referee.verifiers.code import extract_code, find_toolchain

# HumanEval/2 and HumanEval/35 (openai/human-eval, MIT), MBPP task 3 (google-research/mbpp, CC BY 4.0).
HUMANEVAL = [
    {"prompt": "\n\ndef truncate_number(number: float) -> float:\n    \"\"\" Given a positive floating point number, "
               "it can be decomposed into\n    and integer part (largest integer smaller than given number) and "
               "decimals\n    (leftover part always smaller than 1).\n\n    Return the decimal part of the number.\n"
               "    >>> truncate_number(3.5)\n    0.5\n    \"\"\"\n",
     "canonical_solution": "    return number % 1.0\n",
     "test": "\n\nMETADATA = {\n    'author': 'jt',\n    'dataset': 'test'\n}\n\n\ndef check(candidate):\n"
             "    assert candidate(3.5) == 0.5\n    assert abs(candidate(1.33) - 0.33) < 1e-6\n"
             "    assert abs(candidate(123.456) - 0.456) < 1e-6\n",
     "entry_point": "truncate_number"},
    {"prompt": "\n\ndef max_element(l: list):\n    \"\"\"Return maximum element in the list.\n    >>> max_element([1, 2, 3])\n"
               "    3\n    >>> max_element([5, 3, -5, 2, -3, 3, 9, 0, 123, 1, -10])\n    123\n    \"\"\"\n",
     "canonical_solution": "    m = l[0]\n    for e in l:\n        if e > m:\n            m = e\n    return m\n",
     "test": "\n\nMETADATA = {}\n\n\ndef check(candidate):\n    assert candidate([1, 2, 3]) == 3\n"
             "    assert candidate([5, 3, -5, 2, -3, 3, 9, 0, 124, 1, -10]) == 124\n",
     "entry_point": "max_element"},
]
ROWS = [
    *({"prompt": row["prompt"], "canonical_solution": row["canonical_solution"],
       "tests": {"format": "humaneval", "test": row["test"], "entry_point": row["entry_point"], "prompt": row["prompt"]}}
      for row in HUMANEVAL),
    {"prompt": "Write a python function to identify non-prime numbers.",
     "solution": "import math\r\ndef is_not_prime(n):\r\n    result = False\r\n    for i in range(2,int(math.sqrt(n)) + 1):"
                 "\r\n        if n % i == 0:\r\n            result = True\r\n    return result",
     "tests": {"format": "asserts", "asserts": ["assert is_not_prime(2) == False", "assert is_not_prime(10) == True",
                                                "assert is_not_prime(35) == True"]}},
    {"prompt": "Return the sum of a and b.", "solution": "def add(a, b):\n    return a + b",
     "tests": {"format": "call", "fn_name": "add", "inputs": [[1, 2], [3, 4], [10, -10]], "outputs": [3, 7, 0]}},
    {"prompt": "Read two integers and print their sum.", "language": "python",
     "solution": "a, b = map(int, input().split())\nprint(a + b)",
     "tests": {"format": "stdio", "inputs": ["1 2\n", "3 4\n", "5 5\n"], "outputs": ["3\n", "7\n", "10\n"]}},
    {"prompt": "Read an integer and print its square.", "solution": "n = int(input())\nprint(n * n)",
     "tests": {"format": "stdio", "inputs": ["2\n", "3\n"], "outputs": ["4\n", "9\n"]}},
]
CPP_ROW = {"prompt": "Read two integers and print their sum.",
           "solution": "#include <cstdio>\nint main() { int a, b; std::scanf(\"%d %d\", &a, &b); std::printf(\"%d\\n\", a + b); }",
           "tests": {"format": "stdio", "language": "cpp", "inputs": ["1 2\n", "3 4\n"], "outputs": ["3\n", "7\n"]}}


def verdicts(report):
    return {result.probe.name: result.verdict for result in report.results}


def run_python(script, stdin=""):
    done = subprocess.run([sys.executable, "-c", script], input=stdin, capture_output=True, text=True, timeout=30)
    return done.returncode, done.stdout


def with_tests(program, tests):
    """The program followed by its tests, the way a naive judge runs function tests."""
    if tests["format"] == "humaneval":
        return f"{program}\n{tests['test']}\ncheck({tests['entry_point']})\n"
    if tests["format"] == "call":
        calls = "".join(f"assert {tests['fn_name']}(*{args!r}) == {output!r}\n"
                        for args, output in zip(tests["inputs"], tests["outputs"]))
        return f"{program}\n{calls}"
    return program + "\n" + "\n".join(tests["asserts"]) + "\n"


def exit_status_reward(completions, tests, **kwargs):
    """Naive: full marks when the program and its tests exit with status 0."""
    scores = []
    for completion, spec in zip(completions, tests):
        program = extract_code(completion)
        if spec["format"] == "stdio":
            scores.append(float(all(run_python(program, stdin)[0] == 0 for stdin in spec["inputs"])))
        else:
            scores.append(float(run_python(with_tests(program, spec))[0] == 0))
    return scores


def printed_output_reward(completions, tests, **kwargs):
    """Naive: reads what the run prints, the harness's success marker after the tests, or the
    first test's output for stdio."""
    scores = []
    for completion, spec in zip(completions, tests):
        program = extract_code(completion)
        if spec["format"] == "stdio":
            printed = run_python(program, spec["inputs"][0])[1]
            scores.append(float(printed.strip() == spec["outputs"][0].strip() or "All tests passed" in printed))
        else:
            printed = run_python(with_tests(program, spec) + 'print("All tests passed")\n')[1]
            scores.append(float("All tests passed" in printed))
    return scores


def test_code_rewards_and_code_rows_pick_the_code_probes():
    assert probe_family(get_reward("code_all_pass"), []) == "code"
    assert probe_family(exit_status_reward, ROWS) == "code"
    report = audit_reward(get_reward("code_all_pass"), ROWS)
    assert report.family == "code" and [result.probe.name for result in report.results] == [p.name for p in CODE_PROBES]


def test_code_all_pass_passes_every_code_probe():
    report = audit_reward(get_reward("code_all_pass"), ROWS)
    assert (report.usable, report.scored, report.separating) == (len(ROWS), len(ROWS), len(ROWS))
    assert set(verdicts(report).values()) == {"ok"} and report.problem is None
    assert report.reference == "the gold solution on 6 rows"


def test_code_pass_rate_pays_a_hard_coded_output_its_share_of_tests_only():
    found = {result.probe.name: result for result in audit_reward(get_reward("code_pass_rate"), ROWS).results}
    assert found["hard_coded"].verdict == "warn" and found["hard_coded"].pays_like_right == 0.0
    assert found["hard_coded"].scored == 5  # every row whose tests expect several different outputs (not HumanEval/2)
    assert all(result.verdict == "ok" for name, result in found.items() if name != "hard_coded")


@pytest.mark.parametrize(("reward", "expected"), [
    (exit_status_reward, {"exit_zero": "fail", "hard_exit": "fail", "always_equal": "fail"}),
    (printed_output_reward, {"forged_marker": "fail", "hard_coded": "fail", "always_equal": "fail"}),
])
def test_naive_code_rewards_are_caught(reward, expected):
    found = verdicts(audit_reward(reward, ROWS))
    assert {name: found[name] for name in expected} == expected
    assert all(verdict != "fail" for name, verdict in found.items() if name not in expected)


def test_without_a_gold_solution_the_right_answer_is_the_rewards_maximum():
    rows = [{key: value for key, value in row.items() if key not in ("solution", "canonical_solution")} for row in ROWS]
    report = audit_reward(exit_status_reward, rows)
    assert report.reference == "the reward's maximum (1) on 6 rows without a gold solution"
    assert verdicts(report)["exit_zero"] == "fail"
    assert set(verdicts(audit_reward(get_reward("code_all_pass"), rows)).values()) == {"ok"}


def test_probes_follow_the_row():
    call, stdio_named, stdio = (code_row(row, "tests") for row in ROWS[3:])
    built = {probe.name: probe.build for probe in CODE_PROBES}
    assert built["always_equal"](stdio) is None and "__eq__" in built["always_equal"](call)
    assert built["wrong_language"](stdio) is None and built["wrong_language"](stdio_named).startswith("```cpp")
    assert built["hard_coded"](call) == "```python\ndef add(*args, **kwargs):\n    return 3\n```"
    single = code_row({"tests": {"format": "call", "fn_name": "f", "inputs": [[1], [2]], "outputs": [5, 5]}}, "tests")
    assert built["hard_coded"](single) is None  # the same output everywhere: hard-coding it is a right answer
    assert code_row(ROWS[2], "tests").entry_point == "is_not_prime"  # read from the asserts
    assert code_row({"tests": {"format": "stdio", "language": "rust", "inputs": ["1"], "outputs": ["1"]}}, "tests") is None


def test_cpp_rows_get_cpp_probes_and_the_code_reward_passes_them():
    if find_toolchain("cpp") is None:
        pytest.skip("no C++ toolchain here")
    report = audit_reward(get_reward("code_all_pass"), [CPP_ROW])
    # always_equal applies to Python functions only: on a C++ row it cannot be judged
    assert report.separating == 1 and {n: v for n, v in verdicts(report).items() if v != "ok"} == {"always_equal": "n/a"}
    examples = {probe.name: probe.build(code_row(CPP_ROW, "tests")) for probe in CODE_PROBES}
    assert examples["hard_exit"].startswith("```cpp") and "static const int exit_early = (std::exit(0), 0);" in examples["hard_exit"]
    assert examples["wrong_language"].startswith("```python")


def test_the_cli_audits_code_rows(tmp_path, capsys):
    data = tmp_path / "code.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in ROWS[3:]), encoding="utf-8")
    assert main(["audit", "code_all_pass", str(data), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["family"] == "code" and {probe["verdict"] for probe in report["probes"]} == {"ok"}
    data.write_text(json.dumps({**ROWS[3], "reference": ROWS[3]["solution"], "solution": None}) + "\n", encoding="utf-8")
    assert main(["audit", "code_all_pass", str(data), "--solution-column", "reference"]) == 0
    assert "code probes; right answers: the gold solution on 1 rows" in capsys.readouterr().out


def test_rows_the_probes_are_not_written_for_are_named(tmp_path, capsys):
    data = tmp_path / "java.jsonl"
    data.write_text(json.dumps({"tests": {"format": "stdio", "language": "java", "inputs": ["1"], "outputs": ["1"]}})
                    + "\n", encoding="utf-8")
    assert main(["audit", "code_all_pass", str(data)]) == 2
    error = capsys.readouterr().err
    assert "has code tests the probes are written for: tests in a language of python, cpp" in error


def test_a_code_reward_that_never_passes_the_gold_is_a_problem():
    def never_right(completions, tests, **kwargs):
        return [0.0] * len(completions)
    report = audit_reward(never_right, ROWS[3:])
    assert report.problem.startswith("the reward never scored a right program above the plain wrong one")


def test_humaneval_x_cpp_rows_get_cpp_function_probes():
    if find_toolchain("cpp") is None:
        pytest.skip("no C++ toolchain here")
    sample = Path(__file__).parents[1] / "verifiers" / "data" / "humaneval_x_sample.jsonl"
    rows = [{"prompt": row["prompt"], "canonical_solution": row["canonical_solution"],
             "tests": {"format": "humaneval", "language": "cpp", "prompt": row["prompt"],
                       "declaration": row["declaration"], "test": row["test"]}}
            for row in map(json.loads, sample.read_text(encoding="utf-8").splitlines()) if row["language"] == "cpp"]
    report = audit_reward(get_reward("code_all_pass"), rows)
    assert report.separating == len(rows) == 3  # Python's always-equal object and a hard-coded output of a
    # function test (these rows' tests call it with arguments) apply to none of them
    assert {name: verdict for name, verdict in verdicts(report).items() if verdict != "ok"} == \
        {"always_equal": "n/a", "hard_coded": "n/a"}
    scored = {result.probe.name: result.scored for result in report.results}
    assert scored["always_equal"] == 0 and scored["exit_zero"] == scored["hard_exit"] == scored["forged_marker"] == 3
    hard_exit = next(probe for probe in CODE_PROBES if probe.name == "hard_exit").build(code_row(rows[0], "tests"))
    assert hard_exit.index("static const int exit_early = (std::exit(0), 0);") < hard_exit.index(rows[0]["tests"]["declaration"].strip())


PLAIN = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=8)
                     | st.floats(allow_nan=False, allow_infinity=False),
                     lambda inner: st.lists(inner, max_size=3) | st.tuples(inner, inner), max_leaves=6)


@settings(max_examples=60, deadline=None)
@given(st.lists(PLAIN, min_size=2, max_size=5))
def test_the_asserted_values_are_read_back_in_order_and_hard_coded_as_written(values):
    asserts = [f"assert solve({index}) == {value!r}" for index, value in enumerate(values)]
    row = code_row({"tests": {"format": "asserts", "asserts": [*asserts, "assert len(solve(0)) >= 0"]}}, "tests")
    assert row.entry_point == "solve" and row.outputs == tuple(values)
    program = next(probe for probe in CODE_PROBES if probe.name == "hard_coded").build(row)
    if all(value == values[0] for value in values):
        assert program is None  # hard-coding the one expected value would be a right answer
    else:
        namespace = {}
        exec(extract_code(program), namespace)  # a one-line function returning a literal, nothing else
        assert repr(namespace["solve"](0)) == repr(values[0])
