"""benchmarks.code --humaneval-x on a one-row file per language it is given: the canonical solution
passes, the wrong program fails, mutants are judged as the dataset's own harness judges them, and a
program on which referee and that harness disagree is reported with both words."""

import gzip
import json

from benchmarks import code as bench

PROMPT = 'def add(a: int, b: int) -> int:\n    """Add two numbers."""\n'
ROW = {"task_id": "Python/0", "prompt": PROMPT, "declaration": PROMPT, "canonical_solution": "    return a + b\n",
       "test": "def check(candidate):\n    assert candidate(1, 2) == 3\n\ncheck(add)\n"}


def run(tmp_path, row):
    data, out = tmp_path / "humaneval_python.jsonl.gz", tmp_path / "out.json"
    with gzip.open(data, "wt") as handle:
        handle.write(json.dumps(row) + "\n")
    bench.humaneval_x_report([str(data)], workers=1, timeout=5.0, path=str(out))
    [result] = json.loads(out.read_text())["rows"]
    return result


def test_a_python_row_agrees_every_way(tmp_path, capsys):
    result = run(tmp_path, ROW)
    assert result["disagreements"] == [], result
    assert result["cases"]["mutant"] == {"programs": 1, "judge_passed": 0, "harness_passed": 0, "agreed": 1}, result
    assert "| python | 1 / 1 of 1 | 1/1 | 0 / 0 of 1, 1 | 3/3 |" in capsys.readouterr().out


def test_a_canonical_solution_that_fails_fails_in_the_datasets_harness_too(tmp_path):
    result = run(tmp_path, {**ROW, "canonical_solution": "    return a - b\n"})
    assert result["cases"]["canonical"]["harness_passed"] == 0 and result["disagreements"] == [], result


def test_a_program_the_two_judge_differently_is_reported_with_both_words(tmp_path):
    """A test with no check of its own: HumanEval-X's harness passes every program, referee calls it the row's."""
    result = run(tmp_path, {**ROW, "test": "def check(candidate):\n    pass\n"})
    [canonical, *_] = result["disagreements"]
    assert (canonical["kind"], canonical["status"], canonical["dataset_harness"]) == ("canonical", "error", "passed")


def test_the_go_harness_adds_the_packages_the_body_names_not_the_prompt():
    from benchmarks.humaneval_x_harness import harness_sources

    row = {"prompt": "import (\n    \"math\"\n)\n// Each operand. Accepts strings.\nfunc F(x int) int {\n", "import": "import (\n    \"math\"\n)\n",
           "test": "func TestF(t *testing.T) {}\n", "test_setup": "package main\n\nimport (\n    \"testing\"\n)\n"}
    [source] = harness_sources(row, "go", "    return int(math.Sqrt(float64(x)))\n}\n").values()
    assert '"math"' in source and '"math/rand"' not in source and '"strings"' not in source, source
