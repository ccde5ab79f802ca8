"""The core every trainer adapter shares: route, judge, score where the trainer has no ``None``, stop on an outage.

verl, OpenRLHF, slime and the ``verifiers`` library (:mod:`referee.rewards.trainers.verl`,
:mod:`~referee.rewards.trainers.openrlhf`, :mod:`~referee.rewards.trainers.slime`,
:mod:`~referee.rewards.trainers.prime_verifiers`) differ only in how they call a reward. Each turns its
call into :class:`TrainerSample` values and asks a :class:`Scorer` for :class:`SampleScore` values:

* **routing** by :func:`referee.rewards.trainers.routing.route` (explicit ``verifier``, ``data_source``
  table, ``default_verifier`` option);
* **judging** with each verifier's ``verify_batch`` (through
  :class:`~referee.rewards.verdict_rewards.VerifierReward`, so one batch per verifier, with its
  pools and deadlines);
* **the error policy** (:mod:`referee.rewards.policy`): the completion's fault scores its
  Verdict's score; an ``error`` is not the completion's fault, and since these trainers have no
  ``None`` reward it scores the ``fallback`` option (default 0.0) and is flagged
  ``referee_error = 1`` in the metrics;
* **the circuit breaker** (:class:`ErrorBreaker`): once more than ``max_error_share`` (5%) of the
  last ``error_window`` (512) samples were errors, every call raises :class:`ErrorRateExceeded`,
  so that an outage (a dead sandbox, a wrong gold column) stops the run instead of training on
  fallback rewards.

Sync entry points run in the caller's thread; their ``async`` twins wait in a worker thread
(:meth:`Scorer.score_async`), never on the event loop.
"""

from __future__ import annotations

import asyncio
import math
import threading
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, fields
from typing import Any

from referee.verifiers import VERIFIER_NAMES, Verdict

from referee.rewards.breaker import ErrorBreaker, ErrorRateExceeded  # noqa: F401 (ErrorRateExceeded: re-exported, its old home)
from referee.rewards.completions import completion_text
from referee.rewards.policy import error_verdict, reward_of, warn_once
from referee.rewards.trainers.routing import VERL_FIELDS, ConfigurationError, FieldNames, RefereeStop, Route, referee_stop, route
from referee.rewards.verdict_rewards import VerifierReward

# The numeric keys every adapter reports for every sample, in this order.
METRIC_KEYS: tuple[str, ...] = ("score", "acc", "referee_error", "referee_timeout", "referee_no_answer")


@dataclass(frozen=True)
class TrainerSample:
    """One sample as a trainer hands it over.

    Attributes:
        completion: the model's text (or chat messages).
        ground_truth: the gold: an answer, a tests dict, or a label dict (``{"verifier", "answer"}``).
        data_source: the dataset's name (verl's ``data_source``), if the trainer has one.
        extra_info: the trainer's per-sample dict (verl's ``extra_info``, slime's ``metadata``).
        problem: why the sample cannot be judged, when the trainer's call says so before any verifier
            runs (OpenRLHF's query without its prompt): it then scores as an ``error``, never judged.

    Example:
        >>> TrainerSample("#### 18", "18", "openai/gsm8k").data_source
        'openai/gsm8k'
    """

    completion: Any
    ground_truth: Any
    data_source: Any = None
    extra_info: Mapping[str, Any] | None = None
    problem: str | None = None


@dataclass(frozen=True)
class SampleScore:
    """A sample's reward, the Verdict behind it, and the verifier that judged it.

    Example:
        >>> s = SampleScore(0.0, Verdict("timeout", reason="ran past 3 s"), "code")
        >>> s.metrics()
        {'score': 0.0, 'acc': 0.0, 'referee_error': 0.0, 'referee_timeout': 1.0, 'referee_no_answer': 0.0}
    """

    score: float
    verdict: Verdict
    verifier: str | None

    def metrics(self) -> dict[str, float]:
        """The :data:`METRIC_KEYS`, all numbers, whatever happened (trainers fix their schema on sample 0)."""
        status = self.verdict.status
        return {"score": float(self.score), "acc": 1.0 if status == "correct" else 0.0,
                "referee_error": float(status == "error"), "referee_timeout": float(status == "timeout"),
                "referee_no_answer": float(status == "no_answer")}


def mean_metrics(scores: Sequence[SampleScore]) -> dict[str, float]:
    """The mean of each :data:`METRIC_KEYS` entry over ``scores`` (0.0 each for none).

    Example:
        >>> mean_metrics([SampleScore(1.0, Verdict("correct", 1.0), "gsm8k"), SampleScore(0.0, Verdict("error"), "gsm8k")])
        {'score': 0.5, 'acc': 0.5, 'referee_error': 0.5, 'referee_timeout': 0.0, 'referee_no_answer': 0.0}
    """
    total = dict.fromkeys(METRIC_KEYS, 0.0)
    for score in scores:
        for key, value in score.metrics().items():
            total[key] += value
    return {key: value / len(scores) if scores else 0.0 for key, value in total.items()}


@dataclass(frozen=True)
class AdapterOptions:
    """The options every trainer adapter takes (verl's ``reward_kwargs``, a slime config, ...).

    Attributes:
        default_verifier: the verifier for samples that name neither a verifier nor a ``data_source``
            (``gsm8k``, ``math``, ``code``); a named but unknown ``data_source`` is refused, never sent here.
        data_sources: more ``data_source`` names and their verifiers, e.g. ``{"my/set": "math"}``;
            ``"*"`` names the verifier of every source referee does not know.
        fallback: the reward of an ``error`` sample (not the completion's fault), default 0.0.
        max_error_share: the share of errors in the window that stops the run (default 0.05).
        error_window: how many recent samples the breaker looks at (default 512).
        all_or_nothing: reward 1.0 only for ``correct`` (no partial credit for code).
        verifier_options: each verifier's own options, e.g. ``{"math": {"timeout": 5}}``.

    Example:
        >>> AdapterOptions.parse({"fallback": 0.0, "verifier_options": {"gsm8k": {"mode": "strict"}}}).verifier_options
        {'gsm8k': {'mode': 'strict'}}
        >>> AdapterOptions.parse({"fallbak": 0.0})
        Traceback (most recent call last):
        ...
        referee.rewards.trainers.routing.ConfigurationError: unknown referee option 'fallbak'; the options are default_verifier, data_sources, fallback, max_error_share, error_window, all_or_nothing, verifier_options.
    """

    default_verifier: str | None = None
    data_sources: Mapping[str, str] = field(default_factory=dict)
    fallback: float = 0.0
    max_error_share: float = 0.05
    error_window: int = 512
    all_or_nothing: bool = False
    verifier_options: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    @classmethod
    def parse(cls, options: Mapping[str, Any]) -> AdapterOptions:
        """Check ``options`` (a dict, or OmegaConf's DictConfig) and build the options; a bad one
        raises :class:`~referee.rewards.trainers.routing.ConfigurationError` naming it."""
        names = [f.name for f in fields(cls)]
        unknown = [key for key in options if key not in names]
        if unknown:
            raise ConfigurationError(f"unknown referee option {unknown[0]!r}; the options are {', '.join(names)}.")
        values = dict(options)
        verifier = values.get("default_verifier")
        if verifier is not None and verifier not in VERIFIER_NAMES:
            raise ConfigurationError(f"default_verifier={verifier!r}; use one of {', '.join(VERIFIER_NAMES)}.")
        sources = values.get("data_sources") or {}
        if not isinstance(sources, Mapping) or not all(
                isinstance(name, str) and target in VERIFIER_NAMES for name, target in sources.items()):
            raise ConfigurationError(f"data_sources={sources!r} must map data_source names (or '*') to verifier "
                                     f"names ({', '.join(VERIFIER_NAMES)}), e.g. {{'my/set': 'math'}}.")
        fallback = values.get("fallback", 0.0)
        if isinstance(fallback, bool) or not isinstance(fallback, (int, float)) or not math.isfinite(fallback):
            raise ConfigurationError(f"fallback={fallback!r} must be a finite number (the reward of an error sample).")
        share = values.get("max_error_share", 0.05)
        if isinstance(share, bool) or not isinstance(share, (int, float)) or not 0.0 <= share <= 1.0:
            raise ConfigurationError(f"max_error_share={share!r} must be a number in [0, 1].")
        window = values.get("error_window", 512)
        if isinstance(window, bool) or not isinstance(window, int) or window < 1:
            raise ConfigurationError(f"error_window={window!r} must be a positive whole number of samples.")
        per_verifier = values.get("verifier_options") or {}
        if not isinstance(per_verifier, Mapping) or not all(
                name in VERIFIER_NAMES and isinstance(opts, Mapping) for name, opts in per_verifier.items()):
            raise ConfigurationError(f"verifier_options={per_verifier!r} must map verifier names "
                                     f"({', '.join(VERIFIER_NAMES)}) to option dicts, e.g. {{'math': {{'timeout': 5}}}}.")
        values.update(fallback=float(fallback), max_error_share=float(share),
                      all_or_nothing=bool(values.get("all_or_nothing", False)),
                      verifier_options={name: dict(opts) for name, opts in per_verifier.items()},
                      data_sources=dict(sources))
        return cls(**values)


_executor: ThreadPoolExecutor | None = None
_executor_lock = threading.Lock()


def _thread_pool() -> ThreadPoolExecutor:
    global _executor
    with _executor_lock:
        if _executor is None:
            _executor = ThreadPoolExecutor(max_workers=32, thread_name_prefix="referee-score")
        return _executor


class Scorer:
    """Scores trainer samples with the shared routing, verifiers and error policy.

    One scorer per set of options is shared by every call (see :func:`scorer_for`), so its
    breaker sees every sample and each verifier's pools start once.

    Example:
        >>> scorer = Scorer(AdapterOptions(fallback=-1.0))
        >>> [(s.score, s.verdict.status) for s in scorer.score([
        ...     TrainerSample("9 * 2 = 18\\n#### 18", "#### 18", "openai/gsm8k"),
        ...     TrainerSample("#### 18", "eighteen", "openai/gsm8k")])]
        [(1.0, 'correct'), (-1.0, 'error')]
    """

    def __init__(self, options: AdapterOptions | None = None, *, name: str = "referee",
                 fields: FieldNames = VERL_FIELDS) -> None:
        self.options = options or AdapterOptions()
        self.name = name
        self.fields = fields
        self.breaker = ErrorBreaker(self.options.max_error_share, self.options.error_window)
        self._rewards: dict[str, VerifierReward] = {}
        self._lock = threading.Lock()
        for verifier in self.options.verifier_options:  # bad verifier options fail here, not at a later sample
            self._reward(verifier)

    def _reward(self, verifier: str) -> VerifierReward:
        with self._lock:
            if verifier not in self._rewards:
                options = dict(self.options.verifier_options.get(verifier, {}))
                try:
                    self._rewards[verifier] = VerifierReward(f"{self.name}_{verifier}", verifier, gold_column="gold", **options)
                except ValueError as exc:
                    raise ConfigurationError(f"verifier_options[{verifier!r}]: {exc}") from None
            return self._rewards[verifier]

    def route(self, sample: TrainerSample) -> Route:
        """The sample's route (raises :class:`~referee.rewards.trainers.routing.UnknownDataSource`).

        Example:
            >>> Scorer(AdapterOptions(default_verifier="math")).route(TrainerSample("x", "1/2")).decided_by
            'the default_verifier option'
        """
        return route(sample.data_source, sample.ground_truth, sample.extra_info,
                     default_verifier=self.options.default_verifier, data_sources=self.options.data_sources,
                     fields=self.fields)

    def score(self, samples: Sequence[TrainerSample], *, record: bool = True) -> list[SampleScore]:
        """Score ``samples`` in order, one ``verify_batch`` per verifier.

        Raises :class:`~referee.rewards.trainers.routing.RefereeStop` subclasses only: an unknown source or
        bad option (:class:`~referee.rewards.trainers.routing.ConfigurationError`), or a tripped breaker
        (:class:`ErrorRateExceeded`). Anything a verifier raises becomes an ``error`` Verdict.
        ``record=False`` leaves the breaker out (neither checked nor counted), for a caller with a
        policy of its own (``referee serve`` judges each request's errors alone).

        Example:
            >>> [s.verdict.status for s in Scorer().score([TrainerSample("#### 3", "3", "gsm8k"),
            ...                                            TrainerSample("no idea", "3", "gsm8k")])]
            ['correct', 'no_answer']
        """
        if record:
            self.breaker.check()
        routes = [self.route(sample) for sample in samples]
        verdicts: list[Verdict | None] = [None] * len(samples)
        by_verifier: dict[str, list[int]] = {}
        for i, (sample, where) in enumerate(zip(samples, routes)):
            if sample.problem is not None:
                verdicts[i] = error_verdict("bad_sample", sample.problem)
            elif where.problem is not None:
                verdicts[i] = error_verdict("bad_gold", where.problem)
            elif completion_text(sample.completion) is None:
                verdicts[i] = error_verdict("bad_completion", "the completion is neither text nor chat messages")
            else:
                by_verifier.setdefault(where.verifier, []).append(i)
        for verifier, indices in by_verifier.items():
            reward = self._reward(verifier)
            try:
                judged = reward.verdicts([samples[i].completion for i in indices], gold=[routes[i].gold for i in indices])
            except Exception as exc:  # a verifier bug is an error, never the completion's fault
                if (stop := referee_stop(exc)) is not None:  # a stop that came back through Ray: still a stop
                    raise stop from None
                judged = [error_verdict("exception", f"the {verifier} verifier raised {type(exc).__name__}: {exc}")] * len(indices)
            for i, verdict in zip(indices, judged):
                verdicts[i] = verdict
        final: list[Verdict] = [v if v is not None else error_verdict("exception", "not judged") for v in verdicts]
        self._warn(final)
        scores = []
        for where, verdict in zip(routes, final):
            reward_value = reward_of(verdict, all_or_nothing=self.options.all_or_nothing)
            scores.append(SampleScore(self.options.fallback if reward_value is None else reward_value, verdict, where.verifier))
        if record:
            errors = [verdict.status == "error" for verdict in final]
            last = next((v.reason for v in reversed(final) if v.status == "error"), "")
            self.breaker.record(errors, last_reason=last)
        return scores

    def _warn(self, verdicts: Sequence[Verdict]) -> None:
        """Warn once per kind of error: the trainer has no None, so say what the sample scored instead."""
        for verdict in verdicts:
            if verdict.status == "error":
                kind = str(verdict.details.get("kind", "verifier"))
                warn_once(self.name, kind, f"{self.name}: {verdict.reason.rstrip('.')}. Not the completion's fault: it "
                                           f"scores the fallback {self.options.fallback} with referee_error = 1; further "
                                           f"'{kind}' errors are only counted (the run stops past "
                                           f"{self.options.max_error_share:.0%} of the last {self.options.error_window}).")

    async def score_async(self, samples: Sequence[TrainerSample]) -> list[SampleScore]:
        """:meth:`score`, waited for in a worker thread so the event loop keeps running.

        Example:
            >>> asyncio.run(Scorer().score_async([TrainerSample("#### 18", "18", "gsm8k")]))[0].score
            1.0
        """
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(_thread_pool(), self.score, list(samples))


_scorers: dict[str, Scorer] = {}
_scorers_lock = threading.Lock()


def scorer_for(options: Mapping[str, Any] | None = None, *, name: str = "referee",
               fields: FieldNames = VERL_FIELDS) -> Scorer:
    """The shared :class:`Scorer` for these options (checked; one per distinct set and ``name``);
    ``fields`` words its messages as the trainer names its fields.

    Example:
        >>> scorer_for({"fallback": 0.0}) is scorer_for({"fallback": 0.0})
        True
    """
    options = dict(options or {})
    key = f"{name}|{fields!r}|{sorted(options.items(), key=lambda item: item[0])!r}"
    with _scorers_lock:
        scorer = _scorers.get(key)
        if scorer is None:
            scorer = _scorers[key] = Scorer(AdapterOptions.parse(options), name=name, fields=fields)
        return scorer
