"""The multi-seed dynamic-sampling benchmark's bookkeeping: draws, tokens, paired intervals over common seeds."""

from __future__ import annotations

import math

import pytest

from benchmarks.dynamic_sampling import DrawLedger, summarise
from benchmarks.seed_interval import mean_interval


def run(arm, seed, accuracy, **extra):
    return {"arm": arm, "seed": seed, "held_out_accuracy": accuracy, "zero_gradient_share": 0.0, "tokens": 100,
            "steps": 10, "prompts_drawn_share": 1.0, "top_prompt_share": 0.01, **extra}


def test_the_ledger_counts_one_draw_per_group_and_every_generated_token():
    ledger = DrawLedger(group_size=2)
    ledger(prompts=[0] * 4, completions=["a"] * 4, completion_ids=[[1], [1, 2], [3], []], row=[7, 7, 3, 3])
    ledger(prompts=[0] * 2, completions=["a"] * 2, completion_ids=[[1], [1]], row=[7, 7])
    assert ledger.tokens == 6 and ledger.draws == {7: 2, 3: 1}


def test_the_difference_from_plain_is_paired_by_seed_over_the_seeds_every_arm_finished():
    runs = [run("plain", 0, 0.5), run("plain", 1, 0.9), run("plain", 2, 0.7),
            run("sweep", 0, 0.6), run("sweep", 1, 1.0)]  # seed 2 of sweep not finished
    table = summarise(runs, ["plain", "sweep"])
    assert table["plain"]["seeds"] == table["sweep"]["seeds"] == 2
    mean, low, high = table["sweep"]["difference"]
    assert mean == pytest.approx(0.1) and low == pytest.approx(0.1) and high == pytest.approx(0.1)  # +0.1 on both
    assert table["sweep"]["accuracy"][2] == 1.0  # the accuracy interval is clipped to 100%


def test_the_prompts_the_sweep_retired_are_counted_whatever_the_reason():
    runs = [run("plain", 0, 0.5), run("plain", 1, 0.5),
            run("sweep", 0, 0.5, retired={"solved": 300, "failed": 2}), run("sweep", 1, 0.5, retired={"solved": 10})]
    table = summarise(runs, ["plain", "sweep"])
    assert table["sweep"]["retired"] == 156 and table["plain"]["retired"] == 0


def test_the_interval_widens_with_fewer_seeds_and_is_unknown_for_one():
    five = mean_interval([0.5, 0.6, 0.7, 0.6, 0.6])
    three = mean_interval([0.5, 0.7, 0.6])
    assert three[2] - three[1] > five[2] - five[1] > 0
    assert mean_interval([0.3])[1:] == (-math.inf, math.inf)
