"""A pass-rate curriculum: a Beta posterior per training prompt, and prompts drawn where the model learns most.

GRPO's signal peaks at pass rate 0.5 and vanishes at 0 and 1. The posterior of each prompt's
pass rate starts from a prior (optionally seeded with a ``referee prefilter`` or ``referee eval``
result: its per-row ``num_correct`` of ``num_samples``) and is updated with every generation's
verdicts; its evidence halves every ``half_life`` optimizer steps, so it follows the policy as it
moves. Each step's prompts are drawn by one of four rules: ``sweep`` (every live prompt once per
pass over the data, prompts never seen first, then the most learnable; prompts solved or failed
for good retired, see :mod:`referee.recipes.train.sweep`), ``band`` (prompts whose estimate lies in
a band), ``learnability`` (weight ``p(1-p)``) or ``thompson`` (weight ``t(1-t)`` for ``t`` drawn
from the posterior). Draws are seeded with the run's seed and the step, and the state is saved
with each checkpoint, so a resumed run draws what the uninterrupted one would have.
Pure Python and torch; :class:`~referee.recipes.train.trainer.RefereeGRPOTrainer` runs it.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import torch

from ..common.mappings import from_mapping

SAMPLERS = ("sweep", "band", "learnability", "thompson")
STATE_FILE = "curriculum_state.json"
STATE_VERSION = 2
# The weight of a prompt the rule does not want, so that a draw can still fill its batch.
_FLOOR = 1e-6


@dataclass(frozen=True)
class CurriculumSettings:
    """The recipe's ``curriculum:`` block.

    Attributes:
        sampler: ``sweep`` (default), ``band``, ``learnability`` or ``thompson``; ``docs/training.md``
            gives each one's held-out accuracy against plain GRPO over seeds.
        seed_from: a ``referee prefilter`` / ``referee eval`` ``all.jsonl`` of the training set
            (same rows, same order) whose per-row counts seed the posterior.
        state: a file the posterior is also written to at each checkpoint and at the end.
        band: the pass-rate band ``band`` keeps, inclusive (default 0.125 to 0.875); prompts above
            its top count as solved in ``curriculum/solved_share``.
        prior: the Beta prior ``(a, b)`` of every prompt (default ``(1, 1)``: uniform).
        half_life: optimizer steps after which a verdict weighs half as much (default 100);
            ``None`` keeps every verdict at full weight.
        retire_after: ``sweep`` retires a prompt after this many visits in a row whose group all
            passed (solved) or all failed (failed), recording why (default 3; 0 never retires).

    Example:
        >>> CurriculumSettings.from_dict({"sampler": "band", "band": [0.2, 0.8]}).band
        (0.2, 0.8)
        >>> CurriculumSettings.from_dict({"sampler": "bandit"})
        Traceback (most recent call last):
        ...
        ValueError: curriculum.sampler is 'bandit'; choose one of sweep, band, learnability, thompson.
        >>> CurriculumSettings.from_dict({"half_life": 0})
        Traceback (most recent call last):
        ...
        ValueError: curriculum.half_life is 0; give a number of optimizer steps > 0, or null to never forget.
    """

    sampler: Literal["sweep", "band", "learnability", "thompson"] = "sweep"
    seed_from: str | None = None
    state: str | None = None
    band: tuple[float, float] = (0.125, 0.875)
    prior: tuple[float, float] = (1.0, 1.0)
    half_life: float | None = 100.0
    retire_after: int = 3

    def __post_init__(self) -> None:
        if self.sampler not in SAMPLERS:
            raise ValueError(f"curriculum.sampler is {self.sampler!r}; choose one of {', '.join(SAMPLERS)}.")
        band, prior = tuple(self.band), tuple(self.prior)
        if len(band) != 2 or not 0 <= band[0] <= band[1] <= 1:
            raise ValueError(f"curriculum.band is {list(band)!r}; give [low, high] with 0 <= low <= high <= 1.")
        if len(prior) != 2 or not all(isinstance(v, (int, float)) and v > 0 for v in prior):
            raise ValueError(f"curriculum.prior is {list(prior)!r}; give [a, b], both > 0 (e.g. [1, 1]).")
        if self.half_life is not None and not (isinstance(self.half_life, (int, float)) and self.half_life > 0):
            raise ValueError(f"curriculum.half_life is {self.half_life!r}; give a number of optimizer steps > 0, "
                             "or null to never forget.")
        if isinstance(self.retire_after, bool) or not isinstance(self.retire_after, int) or self.retire_after < 0:
            raise ValueError(f"curriculum.retire_after is {self.retire_after!r}; give a whole number of visits "
                             ">= 0 (0 never retires).")
        object.__setattr__(self, "band", (float(band[0]), float(band[1])))
        object.__setattr__(self, "prior", (float(prior[0]), float(prior[1])))

    @classmethod
    def from_dict(cls, values: Any) -> CurriculumSettings:
        """The settings of a ``curriculum:`` mapping, unknown keys refused with a suggestion."""
        return from_mapping(cls, values, "curriculum")


def learnability(p: float) -> float:
    """How much GRPO can learn from a prompt solved with probability ``p``: ``p(1-p)``, at least a tiny
    floor so that a prompt the rule does not want can still fill a batch.

    Example:
        >>> learnability(0.5), learnability(1.0)
        (0.25, 1e-06)
    """
    return max(_FLOOR, p * (1 - p))


class PassRatePosterior:
    """A Beta(alpha, beta) posterior of the pass rate of each of ``size`` prompts.

    Example:
        >>> posterior = PassRatePosterior(3)
        >>> posterior.update([0, 0, 0, 1], [True, True, False, False])
        >>> [round(p, 3) for p in posterior.means()]
        [0.6, 0.333, 0.5]
    """

    def __init__(self, size: int, prior: tuple[float, float] = (1.0, 1.0)) -> None:
        if size < 1:
            raise ValueError("A curriculum needs at least one training prompt.")
        self.prior = (float(prior[0]), float(prior[1]))
        self.alpha = [self.prior[0]] * size
        self.beta = [self.prior[1]] * size
        #: The optimizer step the evidence was last aged to (see :meth:`age`).
        self.step = 0

    def __len__(self) -> int:
        return len(self.alpha)

    def update(self, indices: Sequence[int], passed: Sequence[bool | None]) -> None:
        """Count each sample's pass (``True``), failure (``False``) or nothing (``None``: not scored)."""
        for index, result in zip(indices, passed):
            if result is True:
                self.alpha[index] += 1.0
            elif result is False:
                self.beta[index] += 1.0

    def seed(self, rows: Iterable[dict[str, Any]]) -> int:
        """Add the counts of pre-filter/eval result rows (``row_index``, ``num_correct``, ``num_samples``);
        returns how many rows carried counts.

        Example:
            >>> posterior = PassRatePosterior(2)
            >>> posterior.seed([{"row_index": 1, "num_correct": 3, "num_samples": 4}]), posterior.means()[1]
            (1, 0.6666666666666666)
        """
        seeded = 0
        for row in rows:
            index, correct, samples = row.get("row_index"), row.get("num_correct"), row.get("num_samples")
            if not isinstance(index, int) or not 0 <= index < len(self):
                raise ValueError(f"curriculum.seed_from has a row_index {index!r} outside the training set's "
                                 f"{len(self)} rows; seed from a result of this training set.")
            if isinstance(correct, int) and isinstance(samples, int) and 0 <= correct <= samples:
                self.alpha[index] += correct
                self.beta[index] += samples - correct
                seeded += samples > 0
        return seeded

    def age(self, step: int, half_life: float | None) -> None:
        """Shrink every prompt's evidence (what it holds beyond the prior) by ``0.5 ** (elapsed / half_life)``
        for the optimizer steps elapsed since the last call, so that old verdicts of a policy that has
        since moved weigh less; ``half_life=None`` keeps them whole.

        Example:
            >>> posterior = PassRatePosterior(1)
            >>> posterior.update([0] * 4, [True] * 4)
            >>> posterior.age(10, half_life=10)
            >>> posterior.alpha, posterior.beta, posterior.step
            ([3.0], [1.0], 10)
        """
        if half_life is not None and step > self.step:
            keep = 0.5 ** ((step - self.step) / half_life)
            (a, b) = self.prior
            self.alpha = [a + keep * (value - a) for value in self.alpha]
            self.beta = [b + keep * (value - b) for value in self.beta]
        self.step = max(self.step, step)

    def means(self) -> list[float]:
        """Each prompt's posterior mean pass rate."""
        return [a / (a + b) for a, b in zip(self.alpha, self.beta)]

    def weights(self, settings: CurriculumSettings, generator: random.Random) -> list[float]:
        """Each prompt's draw weight under ``settings.sampler`` (``band``, ``learnability`` or ``thompson``;
        ``sweep`` draws with :class:`~referee.recipes.train.sweep.SweepSampler`).

        Example:
            >>> posterior = PassRatePosterior(3)
            >>> posterior.update([1] * 9 + [2] * 9, [True] * 9 + [True, False] * 4 + [False])
            >>> [round(w, 3) for w in posterior.weights(CurriculumSettings("learnability"), random.Random(0))]
            [0.25, 0.083, 0.248]
            >>> posterior.weights(CurriculumSettings("band"), random.Random(0))
            [1.0, 1e-06, 1.0]
        """
        if settings.sampler == "sweep":
            raise ValueError("The sweep sampler draws with SweepSampler.draw, not by weights.")
        if settings.sampler == "thompson":
            return [learnability(generator.betavariate(a, b)) for a, b in zip(self.alpha, self.beta)]
        means = self.means()
        if settings.sampler == "band":
            low, high = settings.band
            return [1.0 if low <= p <= high else _FLOOR for p in means]
        return [learnability(p) for p in means]

    def state_dict(self) -> dict[str, Any]:
        """What :meth:`load_state_dict` restores (JSON-ready)."""
        return {"version": STATE_VERSION, "rows": len(self), "alpha": list(self.alpha), "beta": list(self.beta),
                "step": self.step}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore a saved state of a posterior over the same number of prompts (a version-1 state, saved
        before the posterior forgot, restores as aged to step 0).

        Example:
            >>> posterior = PassRatePosterior(2)
            >>> posterior.update([1], [True])
            >>> restored = PassRatePosterior(2)
            >>> restored.load_state_dict(posterior.state_dict())
            >>> restored.state_dict() == posterior.state_dict()
            True
        """
        if state.get("version") not in (1, STATE_VERSION) or state.get("rows") != len(self):
            raise ValueError(f"The saved curriculum state is for {state.get('rows')} prompts (version "
                             f"{state.get('version')}), not this training set's {len(self)}; resume with the same data.")
        self.alpha, self.beta = [float(v) for v in state["alpha"]], [float(v) for v in state["beta"]]
        self.step = int(state.get("step", 0))


def draw_prompts(posterior: PassRatePosterior, settings: CurriculumSettings, count: int, seed: int) -> list[int]:
    """``count`` distinct prompts (as many as there are, repeating beyond) drawn by the rule's weights
    with a generator seeded by ``seed``: the same draw for the same state and seed on every process.

    Example:
        >>> posterior = PassRatePosterior(4)
        >>> posterior.update([0] * 8 + [1] * 8, [True] * 8 + [False] * 8)  # prompt 0 solved, prompt 1 hopeless
        >>> sorted(draw_prompts(posterior, CurriculumSettings("band"), 2, seed=7))
        [2, 3]
        >>> draw_prompts(posterior, CurriculumSettings("band"), 2, seed=7) == draw_prompts(
        ...     posterior, CurriculumSettings("band"), 2, seed=7)
        True
    """
    generator = random.Random(seed)
    weights = torch.tensor(posterior.weights(settings, generator), dtype=torch.float64)
    torch_generator = torch.Generator().manual_seed(seed % 2**63)
    distinct = min(count, len(weights))
    picks = torch.multinomial(weights, distinct, replacement=False, generator=torch_generator).tolist()
    return [picks[i % distinct] for i in range(count)]


def read_seed_rows(path: str | Path) -> list[dict[str, Any]]:
    """The rows of a ``referee prefilter``/``referee eval`` ``all.jsonl`` (only the fields the seed reads)."""
    rows = []
    with open(path, encoding="utf-8") as source:
        for number, line in enumerate(source, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                raise ValueError(f"curriculum.seed_from {path}, line {number}: not valid JSON; give the all.jsonl "
                                 "of a referee prefilter or referee eval run.") from None
            rows.append({key: row.get(key) for key in ("row_index", "num_correct", "num_samples")})
    return rows
