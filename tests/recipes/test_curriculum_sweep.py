"""The sweep sampler and the forgetting posterior: coverage, prompts never seen first, retirement, forgetting."""

from __future__ import annotations

import json

import pytest

from referee.recipes.train.curriculum import CurriculumSettings, PassRatePosterior, draw_prompts
from referee.recipes.train.sweep import SweepSampler


def skewed_posterior(size: int) -> PassRatePosterior:
    """Prompt 0 solved half the time (the most learnable); every other prompt solved nearly always."""
    posterior = PassRatePosterior(size)
    posterior.update([0] * 40, [True, False] * 20)
    posterior.update([i for i in range(1, size) for _ in range(400)], [True] * 400 * (size - 1))
    return posterior


def test_every_live_prompt_is_drawn_once_in_each_sweep_however_skewed_the_pass_rates():
    posterior, sampler = skewed_posterior(10), SweepSampler(10, retire_after=0)
    draws = [index for seed in range(10) for index in sampler.draw(posterior, 3, seed=seed)]  # 30 draws: 3 sweeps
    for sweep in range(3):
        assert sorted(draws[10 * sweep:10 * (sweep + 1)]) == list(range(10))
    assert sampler.sweep == 2


def test_the_learnability_sampler_starves_the_prompts_the_sweep_covers():
    """What the sweep sampler guards against: weighted draws, fresh at every step, return to the most
    learnable prompt every time and leave others undrawn, where one sweep draws each prompt once."""
    posterior = skewed_posterior(20)
    weighted = [index for seed in range(10) for index in draw_prompts(posterior, CurriculumSettings("learnability"), 2, seed=seed)]
    assert weighted.count(0) >= 8 and len(set(weighted)) < 20
    sampler = SweepSampler(20, retire_after=0)
    swept = [index for seed in range(10) for index in sampler.draw(posterior, 2, seed=seed)]
    assert sorted(swept) == list(range(20))


def test_prompts_never_seen_come_first():
    posterior, sampler = PassRatePosterior(6), SweepSampler(6)
    posterior.update([0, 1, 2, 3], [True, False, True, False])  # counts from seed_from: seen, never drawn
    assert sorted(sampler.draw(posterior, 2, seed=0)) == [4, 5]
    sampler.record([4, 4, 5, 5], [True, False, True, False], group_size=2, step=0)
    assert sorted(sampler.draw(posterior, 4, seed=1)) == [0, 1, 2, 3]  # the sweep ends with the seen ones


def test_a_prompt_solved_or_failed_for_good_is_retired_with_the_reason_and_never_drawn_again():
    sampler, posterior = SweepSampler(5, retire_after=2, min_live=2), PassRatePosterior(5)
    sampler.record([0, 0, 1, 1, 2, 2], [True, True, False, False, True, True], group_size=2, step=1)
    sampler.record([0, 0, 1, 1, 2, 2], [True, True, False, False, True, False], group_size=2, step=2)
    assert sampler.retired == {0: {"reason": "solved", "step": 2, "sweep": 0, "visits": 2},
                               1: {"reason": "failed", "step": 2, "sweep": 0, "visits": 2}}
    assert sampler.streak[2] == 0  # a mixed group breaks the streak
    drawn = [index for seed in range(6) for index in sampler.draw(posterior, 1, seed=seed)]
    assert sorted(drawn) == [2, 2, 3, 3, 4, 4]  # two sweeps of the live prompts


def test_retiring_never_leaves_fewer_live_prompts_than_a_batch_draws():
    sampler = SweepSampler(3, retire_after=1, min_live=2)
    sampler.record([0, 1, 2], [True, True, True], group_size=1, step=0)
    assert len(sampler.retired) == 1 and len(sampler.live()) == 2


def test_the_posterior_forgets_what_an_earlier_policy_did():
    """A prompt solved 20 times, then failed 4 times once the policy moved: with a half-life of 2 steps
    and 10 steps between, the posterior believes the failures; without forgetting it does not."""
    kept, forgetting = PassRatePosterior(1), PassRatePosterior(1)
    for posterior, half_life in ((kept, None), (forgetting, 2.0)):
        posterior.update([0] * 20, [True] * 20)
        posterior.age(10, half_life)
        posterior.update([0] * 4, [False] * 4)
    assert kept.means()[0] > 0.75
    assert forgetting.means()[0] < 0.3
    assert forgetting.alpha[0] == pytest.approx(1 + 20 * 0.5 ** 5)


def test_forgetting_in_steps_or_at_once_is_the_same():
    at_once, by_steps = PassRatePosterior(2, (2.0, 3.0)), PassRatePosterior(2, (2.0, 3.0))
    for posterior in (at_once, by_steps):
        posterior.update([0, 0, 1], [True, False, True])
    at_once.age(12, 4.0)
    for step in (3, 7, 7, 12):
        by_steps.age(step, 4.0)
    assert by_steps.alpha == pytest.approx(at_once.alpha) and by_steps.beta == pytest.approx(at_once.beta)
    by_steps.age(5, 4.0)  # an earlier step never un-forgets
    assert by_steps.step == 12 and by_steps.alpha == pytest.approx(at_once.alpha)


def test_a_prompt_never_seen_keeps_exactly_the_prior_while_others_forget():
    posterior = PassRatePosterior(2)
    posterior.update([0], [True])
    posterior.age(10, 1.0)
    assert (posterior.alpha[1], posterior.beta[1]) == posterior.prior
    assert posterior.alpha[0] == 1 + 0.5 ** 10  # shrunk, but still seen


def test_the_sweep_state_survives_json_exactly():
    posterior, sampler = skewed_posterior(7), SweepSampler(7, retire_after=1, min_live=2)
    first = sampler.draw(posterior, 3, seed=4)
    sampler.record([first[0], first[0]], [True, True], group_size=2, step=9)
    restored = SweepSampler(7, retire_after=1, min_live=2)
    restored.load_state_dict(json.loads(json.dumps(sampler.state_dict())))
    assert restored.state_dict() == sampler.state_dict() and restored.retired == sampler.retired
    assert restored.draw(posterior, 5, seed=11) == sampler.draw(posterior, 5, seed=11)


def test_a_sweep_state_of_other_data_is_refused():
    with pytest.raises(ValueError, match="for 3 prompts, not this training set's 4"):
        SweepSampler(4).load_state_dict(SweepSampler(3).state_dict())


@pytest.mark.parametrize(("settings", "message"), [
    ({"half_life": -1}, "curriculum.half_life is -1"),
    ({"retire_after": 1.5}, "curriculum.retire_after is 1.5"),
    ({"retire_after": -1}, "curriculum.retire_after is -1"),
])
def test_bad_forgetting_or_retirement_settings_are_refused_in_one_line(settings, message):
    with pytest.raises(ValueError, match=message):
        CurriculumSettings.from_dict(settings)
