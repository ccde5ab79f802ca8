"""benchmarks.code --humaneval-x on a one-row file per language it is given: the canonical solution
passes, the wrong program fails, and a row that fails is reported with the dataset harness's word."""

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


def test_a_python_row_agrees_both_ways(tmp_path, capsys):
    result = run(tmp_path, ROW)
    assert (result["right_passed"], result["wrong_failed"], result["failures"]) == (1, 1, []), result
    assert "| python | 1/1 | 1/1 | 2/2 |" in capsys.readouterr().out


def test_a_canonical_solution_that_fails_is_run_in_the_datasets_harness(tmp_path):
    result = run(tmp_path, {**ROW, "canonical_solution": "    return a - b\n"})
    [failure] = result["failures"]
    assert result["right_passed"] == 0 and failure["dataset_harness"].startswith("fails there too"), failure
