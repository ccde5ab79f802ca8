"""The maths verifier on the project's imitation probes (``benchmarks/probes``): no set may lose
ground. The bounds are the counts measured when each set's work was done (docs/benchmarks.md);
a change that reads more right raises nothing here, one that reads less fails."""

import json
from pathlib import Path

import pytest

from referee.verifiers import math as maths

PROBES = Path(__file__).resolve().parents[2] / "benchmarks" / "probes"

# set: (most false accepts, most misses) allowed
BOUNDS = {"gsm8k": (0, 2), "math": (0, 1), "unboxed": (0, 5), "precision": (11, 0), "mixed": (0, 0),
          "small_models": (0, 2), "math_forms": (0, 1), "gsm8k_styles": (0, 0),
          "adversarial": (3, 0), "shapes": (0, 0)}


@pytest.mark.parametrize("name", sorted(BOUNDS))
def test_no_probe_set_loses_ground(name):
    rows = [json.loads(line) for line in (PROBES / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()]
    verdicts = maths.verify_batch([row["completion"] for row in rows], [row["gold"] for row in rows],
                                  timeout=30.0)  # what is read is under test, not how fast on a loaded machine
    false_accepts = [row["id"] for row, verdict in zip(rows, verdicts) if verdict.correct and not row["label"]]
    misses = [row["id"] for row, verdict in zip(rows, verdicts) if not verdict.correct and row["label"]]
    most_false, most_missed = BOUNDS[name]
    assert len(false_accepts) <= most_false, false_accepts
    assert len(misses) <= most_missed, misses
