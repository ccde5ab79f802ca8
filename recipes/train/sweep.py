"""The ``sweep`` curriculum sampler: pass rate steers the order, never the coverage.

Prompts are drawn in sweeps (passes over the data): within a sweep no live prompt is drawn twice,
so every live prompt is drawn once per sweep whatever its pass rate. Within a sweep, prompts never
seen yet (never drawn, no ``seed_from`` counts) come first, in a seeded random order; then prompts
are drawn without replacement with weight ``p(1-p)`` of the curriculum's (forgetting) posterior, so
the most learnable come early and dynamic sampling's refills still find them. A prompt whose group
all passed (or all failed) ``retire_after`` visits in a row is retired for good, with a record of
why and when; retiring never leaves fewer live prompts than one generation batch draws. The state
(sweep number, who was drawn this sweep, visits, streaks, retirements) is plain JSON, saved and
restored with the posterior, and every process updates it alike from the same gathered rewards.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from .curriculum import PassRatePosterior, learnability


class SweepSampler:
    """Draws prompts sweep by sweep and retires those solved or failed for good.

    Args:
        size: the number of training prompts.
        retire_after: visits in a row whose group was all passed (or all failed) that retire a
            prompt; 0 never retires.
        min_live: retiring never leaves fewer live prompts than this (the groups one generation draws).

    Example:
        >>> sampler = SweepSampler(4, retire_after=2, min_live=2)
        >>> posterior = PassRatePosterior(4)
        >>> first = sampler.draw(posterior, 2, seed=0)
        >>> second = sampler.draw(posterior, 2, seed=1)
        >>> sorted(first + second), sampler.sweep  # one sweep: every prompt once
        ([0, 1, 2, 3], 0)
        >>> for _ in range(2):  # prompt 0's group of two all passed on two visits in a row
        ...     sampler.record([0, 0, 1, 1], [True, True, True, False], group_size=2, step=5)
        >>> sampler.retired
        {0: {'reason': 'solved', 'step': 5, 'sweep': 0, 'visits': 2}}
    """

    def __init__(self, size: int, *, retire_after: int = 3, min_live: int = 1) -> None:
        self.retire_after, self.min_live = retire_after, max(1, min_live)
        self.sweep = 0
        self.drawn = [False] * size
        self.visits = [0] * size
        #: Visits in a row whose group all passed (> 0) or all failed (< 0).
        self.streak = [0] * size
        #: Retired prompts: index -> reason (``solved`` or ``failed``), step, sweep and visits.
        self.retired: dict[int, dict[str, Any]] = {}

    def live(self) -> list[int]:
        """The prompts not retired, in index order."""
        return [index for index in range(len(self.drawn)) if index not in self.retired]

    def draw(self, posterior: PassRatePosterior, count: int, seed: int) -> list[int]:
        """``count`` prompts of this sweep (starting the next sweep when it runs out), distinct unless
        fewer live prompts than ``count`` remain; the same for the same state and seed.

        Example:
            >>> sampler, posterior = SweepSampler(3), PassRatePosterior(3)
            >>> picks = sampler.draw(posterior, 5, seed=0)  # a whole sweep, then two of the next
            >>> sorted(set(picks[:3])), len(set(picks[3:])), sampler.sweep
            ([0, 1, 2], 2, 1)
        """
        generator = torch.Generator().manual_seed(seed % 2**63)
        means = posterior.means()
        picks: list[int] = []
        while len(picks) < count:
            pool = [index for index in self.live() if not self.drawn[index]]
            if not pool:
                self.sweep += 1
                self.drawn = [False] * len(self.drawn)
                continue
            taken = set(picks)
            fresh = [index for index in pool if index not in taken] or pool
            unseen = [index for index in fresh if self.visits[index] == 0
                      and (posterior.alpha[index], posterior.beta[index]) == posterior.prior]
            candidates = unseen or fresh
            weights = [1.0 if unseen else learnability(means[i]) for i in candidates]
            take = min(count - len(picks), len(candidates))
            chosen = torch.multinomial(torch.tensor(weights, dtype=torch.float64), take, replacement=False,
                                       generator=generator).tolist()
            for position in chosen:
                self.drawn[candidates[position]] = True
                picks.append(candidates[position])
        return picks

    def record(self, indices: Sequence[int], passed: Sequence[bool | None], *, group_size: int, step: int) -> None:
        """Count one visit per group (``group_size`` consecutive completions of one prompt) and retire
        the prompts whose streak reached ``retire_after``.

        Example:
            >>> sampler = SweepSampler(2, retire_after=1)
            >>> sampler.record([0, 0, 1, 1], [False, False, True, None], group_size=2, step=3)
            >>> sampler.visits, sampler.streak, sampler.retired[0]["reason"]
            ([1, 1], [-1, 0], 'failed')
        """
        for start in range(0, len(indices), group_size):
            index, group = indices[start], list(passed[start:start + group_size])
            self.visits[index] += 1
            before = self.streak[index]
            if all(value is True for value in group):
                self.streak[index] = max(before, 0) + 1
            elif all(value is False for value in group):
                self.streak[index] = min(before, 0) - 1
            else:
                self.streak[index] = 0
            retire = self.retire_after and abs(self.streak[index]) >= self.retire_after
            if retire and index not in self.retired and len(self.drawn) - len(self.retired) > self.min_live:
                self.retired[index] = {"reason": "solved" if self.streak[index] > 0 else "failed", "step": step,
                                       "sweep": self.sweep, "visits": self.visits[index]}

    def state_dict(self) -> dict[str, Any]:
        """What :meth:`load_state_dict` restores (JSON-ready: retired indices become strings)."""
        return {"sweep": self.sweep, "drawn": [int(value) for value in self.drawn], "visits": list(self.visits),
                "streak": list(self.streak), "retired": {str(index): dict(why) for index, why in self.retired.items()}}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore a saved state of a sampler over the same number of prompts.

        Example:
            >>> sampler = SweepSampler(3, retire_after=1)
            >>> sampler.record([2, 2], [True, True], group_size=2, step=1)
            >>> restored = SweepSampler(3, retire_after=1)
            >>> restored.load_state_dict(sampler.state_dict())
            >>> restored.retired == sampler.retired and restored.state_dict() == sampler.state_dict()
            True
        """
        if len(state.get("drawn", ())) != len(self.drawn):
            raise ValueError(f"The saved sweep state is for {len(state.get('drawn', ()))} prompts, not this training "
                             f"set's {len(self.drawn)}; resume with the same data.")
        self.sweep = int(state["sweep"])
        self.drawn = [bool(value) for value in state["drawn"]]
        self.visits = [int(value) for value in state["visits"]]
        self.streak = [int(value) for value in state["streak"]]
        self.retired = {int(index): dict(why) for index, why in state["retired"].items()}
