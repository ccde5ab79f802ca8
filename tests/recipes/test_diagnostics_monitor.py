"""DiagnosticsMonitor on synthetic metric streams: a healthy run stays quiet, each failure
mode fires exactly its warnings, once each."""

import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.recipes.diagnostics.monitor import (
    ADVANTAGE_MEAN,
    CAUSES,
    REMEDIES,
    WATCHED,
    DiagnosticsConfig,
    DiagnosticsMonitor,
)

LOGS = 40
FAULT_FROM = 12


def healthy(t, rng):
    """One log event of a run that learns: reward up, length steady, entropy easing down."""
    return {
        "frac_reward_zero_std": 0.2 + rng.uniform(-0.05, 0.05),
        "completions/clipped_ratio": 0.03 + rng.uniform(-0.01, 0.01),
        "clip_ratio/region_mean": 0.02 + rng.uniform(-0.01, 0.01),
        "kl": 0.001 + 0.0002 * t + rng.uniform(0, 0.0005),
        "entropy": 0.6 - 0.004 * t + rng.uniform(-0.01, 0.01),
        "completions/mean_length": 200 + 1.5 * t + rng.uniform(-5, 5),
        "reward": 0.3 + 0.01 * t + rng.uniform(-0.01, 0.01),
        "reward_std": 0.4 + rng.uniform(-0.03, 0.03),
        ADVANTAGE_MEAN: rng.uniform(-1e-7, 1e-7),
        # metrics the monitor does not read
        "loss": rng.uniform(-0.1, 0.1),
        "learning_rate": 1e-6,
        "grad_norm": None,
    }


def _fault(name, t, rng):
    """The metrics one failure mode changes at log event t >= FAULT_FROM (realistically coupled)."""
    k = t - FAULT_FROM
    return {
        "degenerate_high": {"frac_reward_zero_std": 0.7 + rng.uniform(-0.05, 0.05)},
        "degenerate_rising": {"frac_reward_zero_std": min(0.1 + 0.05 * k, 0.45)},
        "truncation": {"completions/clipped_ratio": 0.4 + rng.uniform(-0.05, 0.05)},
        "clipping": {"clip_ratio/region_mean": 0.45 + rng.uniform(-0.05, 0.05)},
        "k1_kl": {"kl": 0.01 * (-1) ** t},
        "entropy_collapse": {"entropy": 0.6 * 0.8 ** k},
        "length_bias": {"completions/mean_length": 200 + 25 * k, "reward": 0.42 + rng.uniform(-0.005, 0.005)},
        # every completion scores the same: no group has spread either
        "constant_reward": {"reward_std": 0.0, "frac_reward_zero_std": 1.0, "reward": 0.0},
        "uncentred_advantages": {ADVANTAGE_MEAN: 0.25},
    }[name]


EXPECTED = {
    "degenerate_high": ["degenerate_groups"],
    "degenerate_rising": ["degenerate_groups"],
    "truncation": ["truncated_completions"],
    "clipping": ["policy_clipping"],
    "k1_kl": ["negative_kl"],
    "entropy_collapse": ["entropy_collapse"],
    "length_bias": ["length_bias"],
    "constant_reward": ["degenerate_groups", "zero_reward_std"],
    "uncentred_advantages": ["advantages_not_centred"],
}


def run_stream(fault=None, seed=0, config=None):
    """(causes ever flagged, findings reported) over a LOGS-long stream."""
    rng = random.Random(seed)
    monitor = DiagnosticsMonitor(config)
    fired, flagged = [], set()
    for t in range(LOGS):
        metrics = healthy(t, rng)
        if fault and t >= FAULT_FROM:
            metrics.update(_fault(fault, t, rng))
        fired += monitor.update(10 * (t + 1), metrics)
        flagged |= {name.removeprefix("diagnostics/") for name, on in monitor.flags().items() if on}
    return flagged, fired


@pytest.mark.parametrize("seed", range(5))
def test_a_healthy_run_stays_quiet(seed):
    flagged, fired = run_stream(seed=seed)
    assert fired == [] and flagged == set()


@pytest.mark.parametrize("fault", sorted(EXPECTED))
@pytest.mark.parametrize("seed", range(3))
def test_each_failure_mode_fires_exactly_its_warnings_once(fault, seed):
    flagged, fired = run_stream(fault, seed)
    assert sorted(finding.cause for finding in fired) == EXPECTED[fault]
    assert all(finding.step > 10 * FAULT_FROM for finding in fired)
    assert flagged == set(EXPECTED[fault])


def test_findings_carry_evidence_and_the_seed_remedy():
    _, fired = run_stream("clipping")
    message = fired[0].message()
    assert message.startswith(f"step {fired[0].step}, policy_clipping: clip_ratio/region_mean averages 0.")
    assert "lower the learning rate or num_iterations" in message
    _, fired = run_stream("length_bias")
    assert "mean length rose from" in fired[0].evidence and "loss_type='dapo'" in fired[0].message()


def test_a_cause_that_clears_and_returns_is_not_repeated_but_its_flag_follows():
    monitor = DiagnosticsMonitor(DiagnosticsConfig(window=4, min_points=2))
    rng = random.Random(1)
    seen = []
    for t, clipped in enumerate([0.5, 0.5, 0.5, 0.0, 0.0, 0.0, 0.0, 0.5, 0.5, 0.5, 0.5]):
        seen += monitor.update(t, {**healthy(t, rng), "completions/clipped_ratio": clipped})
        if t == 6:
            assert monitor.flags()["diagnostics/truncated_completions"] == 0.0
    assert [finding.cause for finding in seen] == ["truncated_completions"]
    assert monitor.flags()["diagnostics/truncated_completions"] == 1.0


def test_window_checks_wait_for_enough_points():
    monitor = DiagnosticsMonitor(DiagnosticsConfig(min_points=4))
    for t in range(3):
        assert monitor.update(t, {"frac_reward_zero_std": 0.95}) == []
    assert [finding.cause for finding in monitor.update(3, {"frac_reward_zero_std": 0.95})] == ["degenerate_groups"]


def test_one_negative_kl_is_enough_and_a_zero_kl_is_not_negative():
    monitor = DiagnosticsMonitor()
    assert monitor.update(1, {"kl": 0.0}) == []
    assert monitor.update(2, {"kl": -5e-7}) == []  # float rounding of k3 near zero
    assert [f.cause for f in monitor.update(3, {"kl": -0.004})] == ["negative_kl"]


def test_a_run_without_kl_never_flags_it():
    fresh = DiagnosticsMonitor()
    for t in range(LOGS):
        metrics = healthy(t, random.Random(t))
        del metrics["kl"]
        assert fresh.update(t, metrics) == []
    assert fresh.flags()["diagnostics/negative_kl"] == 0.0


def test_reward_std_zero_needs_consecutive_logs():
    monitor = DiagnosticsMonitor(DiagnosticsConfig(zero_std_logs=3))
    for t, std in enumerate([0.0, 0.0, 0.3, 0.0, 0.0]):
        assert monitor.update(t, {"reward_std": std}) == []
    assert [f.cause for f in monitor.update(5, {"reward_std": 0.0})] == ["zero_reward_std"]


def test_every_cause_has_a_one_sentence_remedy():
    assert set(REMEDIES) == set(CAUSES)
    for remedy in REMEDIES.values():
        assert remedy.endswith(".") and remedy.count(". ") == 0


@pytest.mark.parametrize("bad", [dict(window=3, min_points=4), dict(min_points=1), dict(zero_std_logs=0),
                                 dict(samples_every=-1)])
def test_bad_configs_are_refused(bad):
    with pytest.raises(ValueError):
        DiagnosticsConfig(**bad)


junk = st.one_of(st.none(), st.floats(allow_nan=True, allow_infinity=True), st.integers(-5, 5), st.booleans(),
                 st.text(max_size=3))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.dictionaries(st.sampled_from(WATCHED + ("eval_reward", "loss")), junk), max_size=40))
def test_any_stream_reports_each_cause_at_most_once_and_flags_stay_binary(stream):
    monitor = DiagnosticsMonitor(DiagnosticsConfig(window=4, min_points=2, zero_std_logs=1))
    for step, metrics in enumerate(stream):
        monitor.update(step, metrics)
        flags = monitor.flags()
        assert set(flags) == {f"diagnostics/{cause}" for cause in CAUSES}
        assert set(flags.values()) <= {0.0, 1.0}
    causes = [finding.cause for finding in monitor.reported]
    assert len(causes) == len(set(causes))
    assert all(not math.isnan(float(f.step)) for f in monitor.reported)


def _unread_stream(monitor, no_answer, logs=8):
    """A run whose every group scores 0 (no spread) while the reward reads no answer in ``no_answer``."""
    fired = []
    for t in range(logs):
        fired += monitor.update(10 * (t + 1), {"frac_reward_zero_std": 1.0, "reward": 0.0, "reward_std": 0.1,
                                               "rewards/accuracy/mean": 0.0, "rewards/accuracy/no_answer": no_answer})
    return fired


def test_a_reward_that_never_parses_is_named_instead_of_degenerate_groups():
    monitor = DiagnosticsMonitor(correctness=["accuracy"])
    fired = _unread_stream(monitor, 1.0)
    assert [finding.cause for finding in fired] == ["reward_never_parses"]
    assert "rewards/accuracy/no_answer averages 1.00" in fired[0].evidence
    assert "never writes what your reward reads" in fired[0].message() and "pre-filtering cannot help" in fired[0].message()
    assert monitor.flags()["diagnostics/degenerate_groups"] == 0.0


def test_a_reward_that_reads_most_answers_leaves_the_degenerate_diagnosis():
    monitor = DiagnosticsMonitor(correctness=["accuracy"])
    assert [finding.cause for finding in _unread_stream(monitor, 0.5)] == ["degenerate_groups"]
    assert [finding.cause for finding in _unread_stream(DiagnosticsMonitor(), 1.0)] == ["degenerate_groups"]


def test_a_reward_of_ones_own_that_pays_nothing_is_not_only_blamed_on_the_prompts():
    """The issue: a reward reading a format the model never writes paid 0 at every step and the diagnostics said
    only 'prompts too easy or too hard: pre-filter them'. A reward of one's own logs no no_answer share, so the
    warning names the other cause too."""
    monitor = DiagnosticsMonitor()
    fired = []
    for t in range(5):
        fired += monitor.update(t + 1, {"frac_reward_zero_std": 1.0, "reward": 0.0, "reward_std": 0.0})
    degenerate = next(finding for finding in fired if finding.cause == "degenerate_groups")
    assert "your model may never write what your reward reads (then pre-filtering cannot help)" in degenerate.message()
    assert "the reward was 0 for every completion of the last 4 logs" in degenerate.evidence


@pytest.mark.parametrize("logs", [
    {"frac_reward_zero_std": 1.0, "reward": 0.25, "reward_std": 0.0},  # paid something: too easy or too hard
    {"frac_reward_zero_std": 1.0, "reward": 0.0, "reward_std": 0.0, "rewards/accuracy/no_answer": 0.2},  # reads them
])
def test_the_degenerate_warning_names_only_the_prompts_when_the_reward_pays_or_reads(logs):
    monitor = DiagnosticsMonitor(correctness=["accuracy"])
    fired = [finding for t in range(5) for finding in monitor.update(t + 1, logs)]
    degenerate = next(finding for finding in fired if finding.cause == "degenerate_groups")
    assert "never write what your reward reads" not in degenerate.message() and not monitor.paid_nothing()
