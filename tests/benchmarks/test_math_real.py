"""benchmarks.math_real's per-rule table: what each hedge rule un-paid and what it rightly refused."""

from benchmarks.math_real import rule_effects
from referee.verifiers import math as maths

ROWS = [
    {"id": "hedge", "completion": "So \\boxed{12}. Alternatively, \\boxed{15}.", "gold": "15", "label": False},
    {"id": "labelled right", "completion": "So \\boxed{12}. Alternatively, \\boxed{15}.", "gold": "15", "label": True},
    {"id": "wrong anyway", "completion": "It is probably \\boxed{14}.", "gold": "15", "label": False},
    {"id": "plain", "completion": "So \\boxed{15}.", "gold": "15", "label": True},
    {"id": "negated", "completion": "20 + 4 = 24. The answer is not 24.", "gold": "24", "label": False},
]


def test_each_rule_counts_right_answers_unpaid_and_hedges_refused():
    verdicts = maths.verify_batch([row["completion"] for row in ROWS], [row["gold"] for row in ROWS])
    table = {entry["rule"]: entry for entry in rule_effects(ROWS, verdicts)}
    assert set(table) == {"several answers", "disowned", "hedged"}
    several = table["several answers"]
    assert (several["fired"], several["right_unpaid"], several["hedges_refused"], several["wrong_anyway"]) == (2, 1, 1, 0)
    assert several["unpaid_ids"] == ["labelled right"]
    assert (table["hedged"]["fired"], table["hedged"]["wrong_anyway"]) == (1, 1)
    assert (table["disowned"]["fired"], table["disowned"]["hedges_refused"]) == (1, 1)
