"""Read a GRPO run's logged metrics and name what is going wrong, with the seeds' remedy.

Pure Python (no torch): :class:`DiagnosticsMonitor` takes the metrics TRL 1.16's
``GRPOTrainer`` logs (``frac_reward_zero_std``, ``completions/clipped_ratio``,
``clip_ratio/region_mean``, ``kl``, ``entropy``, ``completions/mean_length``, ``reward``,
``reward_std``) plus the batch's mean advantage, keeps a sliding window of each, and
reports every cause once. ``referee.recipes.DiagnosticsCallback`` feeds it from a trainer.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

ADVANTAGE_MEAN = "diagnostics/advantage_mean"  # logged by DiagnosticsCallback, not by TRL

# The metrics read, by TRL 1.16's names.
DEGENERATE = "frac_reward_zero_std"
CLIPPED = "completions/clipped_ratio"
CLIP_RATIO = "clip_ratio/region_mean"
KL = "kl"
ENTROPY = "entropy"
LENGTH = "completions/mean_length"
REWARD = "reward"
REWARD_STD = "reward_std"
WATCHED = (DEGENERATE, CLIPPED, CLIP_RATIO, KL, ENTROPY, LENGTH, REWARD, REWARD_STD, ADVANTAGE_MEAN)
# Logged by referee.recipes.heldout.EvalCallback at each held-out evaluation.
EVAL_PASS1 = "eval/pass@1"
EVAL_TRAIN_REWARD = "eval/train_reward"
EVAL_WATCHED = (EVAL_PASS1, EVAL_TRAIN_REWARD)
# Logged by RefereeGRPOTrainer with dynamic_sampling.
SHORTFALL = "dynamic_sampling/shortfall_share"
DROPPED_CORRECT = "dynamic_sampling/dropped_all_correct"
DROPPED_WRONG = "dynamic_sampling/dropped_all_wrong"
SAMPLING_WATCHED = (SHORTFALL, DROPPED_CORRECT, DROPPED_WRONG)

# cause -> the seeds' remedy, one sentence each.
REMEDIES: dict[str, str] = {
    "reward_never_parses": "your model never writes what your reward reads, so every group scores alike and "
                           "nothing is learnt: read completion_samples.jsonl, then prompt the model for the format "
                           "the reward reads (referee audit names it) or pick a reward that reads what the model "
                           "writes; pre-filtering cannot help.",
    "degenerate_groups": "most groups score all-equal and give no gradient because the prompts became too easy or "
                         "too hard: pre-filter them by pass rate (referee prefilter) or raise num_generations.",
    "truncated_completions": "completions run into max_completion_length: raise it, or keep "
                             "mask_truncated_completions=True and shape overlong answers (soft_overlong).",
    "policy_clipping": "the policy moved too far from the one that sampled: lower the learning rate or "
                       "num_iterations.",
    "negative_kl": "a KL estimate below zero means the k1 estimator: use k3, exp(ref - logp) - (ref - logp) - 1, "
                   "which is never negative.",
    "entropy_collapse": "the policy is turning deterministic and stops exploring: use clip-higher "
                        "(epsilon_high=0.28), a lower learning rate or a higher temperature.",
    "length_bias": "length grows while reward stays flat: that is the length bias of per-sequence loss averaging, "
                   "not longer thinking; use loss_type='dapo' or 'dr_grpo'.",
    "zero_reward_std": "every completion got the same reward, so there is no gradient: check the reward on golden "
                       "answers (referee check) and sample with temperature >= 0.7.",
    "advantages_not_centred": "advantages average to 0 by construction, so a non-zero mean is an arithmetic bug "
                              "(the group baseline taken over the wrong axis).",
    "reward_eval_divergence": "the training reward rises but held-out accuracy does not, the mark of reward hacking: "
                              "read the samples (completion_samples.jsonl, eval/step-N.jsonl), tighten the verifier "
                              "(strict options, after_think) and lower the format weights.",
    "dynamic_sampling_exhausted": "dynamic sampling runs out of rounds before the batch holds enough groups that "
                                  "differ: pre-filter the data by pass rate (referee prefilter --keep 0.125:0.875), "
                                  "or raise dynamic_sampling.max_rounds or num_generations.",
    "format_without_correctness": "the format reward is being learnt but correctness is not, so the model collects "
                                  "shaping reward: lower the format weights, check the correctness reward on golden "
                                  "answers (referee check) and pre-filter for prompts the model can solve.",
}
CAUSES: tuple[str, ...] = tuple(REMEDIES)


@dataclass(frozen=True)
class DiagnosticsConfig:
    """Thresholds of the diagnostics and how often to write sample completions.

    Windows count log events (one per ``logging_steps``). Trend checks compare the mean of
    the newer half of the window with the older half.

    - ``window`` (10): log events a check looks back over.
    - ``no_answer_share_min`` (0.9): a correctness reward's ``rewards/<name>/no_answer`` window
      mean at or above this means the model never writes what the reward reads (checked before
      ``degenerate_groups``, whose remedy it would mislead).
    - ``min_points`` (4): values a window check needs before it speaks.
    - ``degenerate_share_max`` (0.5): ``frac_reward_zero_std`` window mean above this is high.
    - ``degenerate_rise`` (0.2): newer-half mean this much above the older half is rising.
    - ``clipped_share_max`` (0.2): ``completions/clipped_ratio`` window mean above this.
    - ``clip_ratio_max`` (0.3): ``clip_ratio/region_mean`` window mean above this.
    - ``kl_tolerance`` (1e-6): a ``kl`` value below minus this is negative.
    - ``entropy_collapse_ratio`` (0.3): newer-half entropy below this share of the run's first
      ``min_points`` values is a collapse.
    - ``length_rise`` (0.2): newer-half mean length at least this share above the older half...
    - ``reward_flat`` (0.02): ...while the reward moved by at most this much is the length bias.
    - ``zero_std_logs`` (3): this many log events in a row with ``reward_std`` = 0.
    - ``advantage_mean_max`` (0.01): a batch's mean advantage further from 0 than this.
    - ``eval_min_points`` (3): held-out evaluations the divergence check needs (windows of
      evaluations, not of logs).
    - ``divergence_reward_rise`` (0.1): the training correctness reward's newer-half mean this
      much above its older half...
    - ``divergence_eval_flat`` (0.02): ...while eval pass@1 rose by at most this much is divergence.
    - ``shortfall_max`` (0.5): ``dynamic_sampling/shortfall_share`` window mean above this means
      the rounds run out (dynamic sampling).
    - ``format_rise`` (0.2): a format reward's newer-half mean this much above its older half
      while every correctness reward moved by at most ``reward_flat`` is format without correctness.
    - ``samples_every`` (50): steps between sample files; 0 turns samples off.
    - ``num_samples`` (4): completions written each time.

    Example:
        >>> DiagnosticsConfig().clip_ratio_max, DiagnosticsConfig(window=20).window
        (0.3, 20)
    """

    window: int = 10
    min_points: int = 4
    no_answer_share_min: float = 0.9
    degenerate_share_max: float = 0.5
    degenerate_rise: float = 0.2
    clipped_share_max: float = 0.2
    clip_ratio_max: float = 0.3
    kl_tolerance: float = 1e-6
    entropy_collapse_ratio: float = 0.3
    length_rise: float = 0.2
    reward_flat: float = 0.02
    zero_std_logs: int = 3
    advantage_mean_max: float = 0.01
    eval_min_points: int = 3
    divergence_reward_rise: float = 0.1
    divergence_eval_flat: float = 0.02
    format_rise: float = 0.2
    shortfall_max: float = 0.5
    samples_every: int = 50
    num_samples: int = 4

    def __post_init__(self) -> None:
        if self.min_points < 2 or self.window < self.min_points:
            raise ValueError(f"window={self.window} and min_points={self.min_points} need 2 <= min_points <= window.")
        if self.eval_min_points < 2:
            raise ValueError(f"eval_min_points={self.eval_min_points} must be at least 2.")
        if self.zero_std_logs < 1 or self.samples_every < 0 or self.num_samples < 0:
            raise ValueError("zero_std_logs must be at least 1 and samples_every, num_samples at least 0.")


@dataclass(frozen=True)
class Finding:
    """One cause seen at one step: what was measured and what to do.

    Example:
        >>> print(Finding("negative_kl", 12, "kl = -0.0300 < 0").message())
        step 12, negative_kl: kl = -0.0300 < 0; a KL estimate below zero means the k1 estimator: use k3, exp(ref - logp) - (ref - logp) - 1, which is never negative.
    """

    cause: str
    step: int
    evidence: str

    def message(self) -> str:
        """The warning line: step, cause, evidence and remedy."""
        return f"step {self.step}, {self.cause}: {self.evidence}; {REMEDIES[self.cause]}"


class DiagnosticsMonitor:
    """A sliding window over logged metrics that flags each cause and reports it once.

    ``correctness`` and ``formats`` name the rewards (TRL's ``rewards/<name>/mean``) the
    format-without-correctness check compares; the divergence check reads the held-out
    evaluations (``eval/pass@1`` and ``eval/train_reward``).

    Example:
        >>> monitor = DiagnosticsMonitor()
        >>> for step in range(1, 5):
        ...     new = monitor.update(step, {"frac_reward_zero_std": 0.9, "reward_std": 0.3})
        >>> [finding.cause for finding in new], monitor.flags()["diagnostics/degenerate_groups"]
        (['degenerate_groups'], 1.0)
        >>> monitor.update(5, {"frac_reward_zero_std": 0.9, "reward_std": 0.3})
        []
    """

    def __init__(self, config: DiagnosticsConfig | None = None, *, correctness: Iterable[str] = (),
                 formats: Iterable[str] = ()) -> None:
        self.config = config or DiagnosticsConfig()
        self.correctness = tuple(f"rewards/{name}/mean" for name in correctness)
        self.unread = tuple(f"rewards/{name}/no_answer" for name in correctness)
        self.formats = tuple(f"rewards/{name}/mean" for name in formats)
        self._watched = (*WATCHED, *EVAL_WATCHED, *SAMPLING_WATCHED, *self.correctness, *self.unread, *self.formats)
        self._values = {name: deque(maxlen=self.config.window) for name in self._watched}
        self._evals: deque[tuple[float, float]] = deque(maxlen=self.config.window)
        self._entropy_start: list[float] = []
        self._active: dict[str, str] = {}
        self.reported: list[Finding] = []

    def update(self, step: int, metrics: Mapping[str, object]) -> list[Finding]:
        """Add one log event's metrics; return the findings reported for the first time.

        Missing, ``None`` and NaN values are skipped; metrics other than the watched ones
        are ignored.
        """
        for name in self._watched:
            value = metrics.get(name)
            if _finite(value):
                self._values[name].append(float(value))
                if name == ENTROPY and len(self._entropy_start) < self.config.min_points:
                    self._entropy_start.append(float(value))
        if _finite(metrics.get(EVAL_PASS1)) and _finite(metrics.get(EVAL_TRAIN_REWARD)):
            self._evals.append((float(metrics[EVAL_TRAIN_REWARD]), float(metrics[EVAL_PASS1])))
        self._active = {cause: evidence for cause, evidence in self._evidence().items() if evidence}
        seen = {finding.cause for finding in self.reported}
        new = [Finding(cause, step, evidence) for cause, evidence in self._active.items() if cause not in seen]
        self.reported += new
        return new

    def flags(self) -> dict[str, float]:
        """``{"diagnostics/<cause>": 1.0 or 0.0}`` for every cause, as of the last update."""
        return {f"diagnostics/{cause}": float(cause in self._active) for cause in CAUSES}

    def _evidence(self) -> dict[str, str | None]:
        never_parses = self._never_parses()
        return {
            "reward_never_parses": never_parses,
            "degenerate_groups": None if never_parses else self._degenerate(),
            "truncated_completions": self._above(CLIPPED, self.config.clipped_share_max),
            "policy_clipping": self._above(CLIP_RATIO, self.config.clip_ratio_max),
            "negative_kl": self._negative_kl(),
            "entropy_collapse": self._entropy_collapse(),
            "length_bias": self._length_bias(),
            "zero_reward_std": self._zero_reward_std(),
            "advantages_not_centred": self._advantages_not_centred(),
            "dynamic_sampling_exhausted": self._dynamic_sampling_exhausted(),
            "reward_eval_divergence": self._reward_eval_divergence(),
            "format_without_correctness": self._format_without_correctness(),
        }

    def _halves(self, name: str) -> tuple[float, float] | None:
        values = list(self._values[name])
        if len(values) < self.config.min_points:
            return None
        middle = len(values) // 2
        return _mean(values[:middle]), _mean(values[middle:])

    def _above(self, name: str, limit: float, *, inclusive: bool = False) -> str | None:
        values = self._values[name]
        if len(values) < self.config.min_points or _mean(values) < limit or (_mean(values) == limit and not inclusive):
            return None
        return f"{name} averages {_mean(values):.2f} over the last {len(values)} logs (limit {limit:g})"

    def _never_parses(self) -> str | None:
        for name in self.unread:
            high = self._above(name, self.config.no_answer_share_min, inclusive=True)
            if high:
                return high
        return None

    def paid_nothing(self) -> bool:
        """Whether the reward was 0 for every completion over the last ``min_points`` logs or more while no
        correctness reward logged a ``no_answer`` share: a format the model never writes then looks just
        like prompts too hard, and the degenerate-groups warning says so.

        Example:
            >>> monitor = DiagnosticsMonitor()
            >>> for step in range(1, 5):
            ...     _ = monitor.update(step, {"frac_reward_zero_std": 1.0, "reward": 0.0, "reward_std": 0.0})
            >>> monitor.paid_nothing(), DiagnosticsMonitor(correctness=["accuracy"]).paid_nothing()
            (True, False)
        """
        rewards = self._values[REWARD]
        return (len(rewards) >= self.config.min_points and not any(rewards)
                and not any(self._values[name] for name in self.unread))

    def _degenerate(self) -> str | None:
        evidence = self._above(DEGENERATE, self.config.degenerate_share_max)
        halves = self._halves(DEGENERATE)
        if evidence is None and halves and halves[1] - halves[0] >= self.config.degenerate_rise:
            evidence = f"{DEGENERATE} rose from {halves[0]:.2f} to {halves[1]:.2f}"
        if evidence and self.paid_nothing():
            evidence += (f"; the reward was 0 for every completion of the last {len(self._values[REWARD])} logs and "
                         "no reward logs what it could not read, so your model may never write what your reward "
                         "reads (then pre-filtering cannot help): compare completion_samples.jsonl with the format "
                         "referee audit finds your reward reads; referee prefilter exits 3 when that is the cause")
        return evidence

    def _negative_kl(self) -> str | None:
        lowest = min(self._values[KL], default=0.0)
        return f"kl = {lowest:.4f} < 0" if lowest < -self.config.kl_tolerance else None

    def _entropy_collapse(self) -> str | None:
        halves = self._halves(ENTROPY)
        if halves is None or len(self._entropy_start) < self.config.min_points:
            return None
        start = _mean(self._entropy_start)
        if start > 0 and halves[1] < self.config.entropy_collapse_ratio * start:
            return f"entropy fell from {start:.3f} to {halves[1]:.3f}"
        return None

    def _length_bias(self) -> str | None:
        length, reward = self._halves(LENGTH), self._halves(REWARD)
        if length is None or reward is None or length[0] <= 0:
            return None
        if length[1] >= (1 + self.config.length_rise) * length[0] and abs(reward[1] - reward[0]) <= self.config.reward_flat:
            return (f"mean length rose from {length[0]:.0f} to {length[1]:.0f} tokens while reward stayed "
                    f"at {reward[1]:.3f}")
        return None

    def _zero_reward_std(self) -> str | None:
        recent = list(self._values[REWARD_STD])[-self.config.zero_std_logs:]
        if len(recent) == self.config.zero_std_logs and all(value == 0.0 for value in recent):
            return f"reward_std was 0 in the last {len(recent)} logs"
        return None

    def _advantages_not_centred(self) -> str | None:
        values = self._values[ADVANTAGE_MEAN]
        if values and abs(values[-1]) > self.config.advantage_mean_max:
            return f"the batch's mean advantage is {values[-1]:.4f}"
        return None


    def _dynamic_sampling_exhausted(self) -> str | None:
        high = self._above(SHORTFALL, self.config.shortfall_max)
        if high is None:
            return None
        correct, wrong = sum(self._values[DROPPED_CORRECT]), sum(self._values[DROPPED_WRONG])
        which = "too easy (most dropped groups were all right)" if correct > wrong else \
            "too hard (most dropped groups were all wrong)" if wrong > correct else "neither easy nor hard"
        return f"{high}; the data is {which}"

    def _reward_eval_divergence(self) -> str | None:
        if len(self._evals) < self.config.eval_min_points:
            return None
        middle = len(self._evals) // 2
        older, newer = list(self._evals)[:middle], list(self._evals)[middle:]
        rewards = _mean(r for r, _ in older), _mean(r for r, _ in newer)
        passes = _mean(p for _, p in older), _mean(p for _, p in newer)
        if rewards[1] - rewards[0] >= self.config.divergence_reward_rise and \
                passes[1] - passes[0] <= self.config.divergence_eval_flat:
            return (f"the training correctness reward rose from {rewards[0]:.2f} to {rewards[1]:.2f} while eval "
                    f"pass@1 went from {passes[0]:.2f} to {passes[1]:.2f} over the last {len(self._evals)} evaluations")
        return None

    def _format_without_correctness(self) -> str | None:
        moved = [self._halves(name) for name in self.correctness]
        if not moved or any(halves is None or halves[1] - halves[0] > self.config.reward_flat for halves in moved):
            return None
        for name in self.formats:
            halves = self._halves(name)
            if halves and halves[1] - halves[0] >= self.config.format_rise:
                return (f"{name} rose from {halves[0]:.2f} to {halves[1]:.2f} while the correctness reward stayed at "
                        f"{moved[0][1]:.2f}")
        return None


def _finite(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _mean(values: Iterable[float]) -> float:
    items = list(values)
    return sum(items) / len(items)
