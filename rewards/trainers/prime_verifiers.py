"""referee in Prime Intellect's ``verifiers``: Rubric reward functions (v0) and the ``@vf.reward`` pattern (v1).

**v0 (``vf.Rubric``).** A Rubric inspects each reward function's signature, passes the
arguments it names (``prompt``, ``completion``, ``answer``, ``state``, ``info``, ``task``, or all
of them to ``**kwargs``), awaits it if it is a coroutine and takes ``float()`` of the result.
:class:`RubricReward` is such a function, ``async`` (the verifiers run in a worker thread, off
the event loop), named for the Rubric's metrics; :func:`rubric_functions` adds weight-0 metrics
that show referee's errors, timeouts and missing answers::

    import verifiers as vf
    from referee.rewards.trainers.prime_verifiers import rubric_functions

    funcs, weights = rubric_functions("gsm8k")            # or "math", "code", or None to route by info
    rubric = vf.Rubric(funcs=funcs, weights=weights)

The gold is the ``answer`` column; ``info`` is read like verl's ``extra_info`` (``verifier``,
``data_source``, ``tests``: put a code row's tests there). A Rubric scores an exception 0 and
logs it, so errors are not raised: they score ``fallback`` and show in the ``referee_error`` metric
(the breaker still stops the run past ``max_error_share``).

The v0 ``vf.Rubric(funcs=..., weights=...)`` is verifiers 0.3.x (``import verifiers as vf``); 0.4
has no top-level ``Rubric``.

**v1 (``verifiers.v1``, 0.4).** A task's reward is a decorated ``async`` method; await
:func:`score_completion` in it. ``Task.score`` runs the metrics before the rewards, so a metric
cannot read what a reward left behind: the metric judges too, and :func:`score_completion`
remembers its recent results, so the verifier runs once per rollout whichever asks first::

    import verifiers.v1 as vf
    from referee.rewards.trainers.prime_verifiers import fault_signals, score_completion

    class MathData(vf.TaskData):
        answer: str

    class MathTask(vf.Task[MathData]):
        async def judged(self, trace: vf.Trace):
            return await score_completion(trace.last_reply or "", self.data.answer, verifier="math")

        @vf.reward(weight=1.0)
        async def correct(self, trace: vf.Trace) -> float:
            return (await self.judged(trace)).score

        @vf.metric
        async def referee(self, trace: vf.Trace) -> dict[str, float]:  # referee_error, _timeout, _no_answer
            return fault_signals(await self.judged(trace))
"""

from __future__ import annotations

import asyncio
import collections
from collections.abc import Mapping
from typing import Any

from referee.rewards.trainers.adapters import SampleScore, Scorer, TrainerSample, scorer_for
from referee.rewards.trainers.routing import VERIFIERS_FIELDS, verifier_for_source

# The weight-0 metrics rubric_functions() adds, each read from the reward's result in `state`.
METRICS: tuple[str, ...] = ("referee_error", "referee_timeout", "referee_no_answer")
STATE_KEY = "referee"
# score_completion's memory of recent judgements (a v1 metric and reward of one rollout share one).
RECENT = 4096
_recent: collections.OrderedDict[str, asyncio.Task[SampleScore]] = collections.OrderedDict()


def _sample(completion: Any, answer: Any, info: Any, task: Any, verifier: str | None) -> TrainerSample:
    extra = dict(info) if isinstance(info, Mapping) else {}
    if verifier is not None and extra.get("verifier") is None:
        extra["verifier"] = verifier
    data_source = extra.get("data_source")
    if data_source is None and verifier_for_source(task) is not None:  # an environment named for its dataset
        data_source = task
    return TrainerSample(completion, answer, data_source, extra)


async def score_completion(
    completion: Any,
    gold: Any,
    *,
    verifier: str | None = None,
    data_source: str | None = None,
    info: Mapping[str, Any] | None = None,
    **options: Any,
) -> SampleScore:
    """Score one completion (text or chat messages) off the event loop: the v1 ``@vf.reward`` building block.

    ``options`` are :class:`~referee.rewards.trainers.adapters.AdapterOptions` (``fallback``, ...).

    The same call again (same completion, gold and options) while its result is among the last
    :data:`RECENT` gets that result: a v1 task's metric and reward judge a rollout once, and the
    breaker counts it once.

    Example:
        >>> import asyncio
        >>> result = asyncio.run(score_completion([{"role": "assistant", "content": "#### 18"}], "18", verifier="gsm8k"))
        >>> result.score, result.verdict.status
        (1.0, 'correct')
    """
    extra = dict(info or {})
    if verifier is not None:
        extra["verifier"] = verifier
    sample = TrainerSample(completion, gold, data_source if data_source is not None else extra.get("data_source"), extra)
    key = repr((completion, gold, sample.data_source, sorted(extra.items(), key=str), sorted(options.items(), key=str)))
    loop = asyncio.get_running_loop()
    task = _recent.get(key)
    if task is None or task.get_loop() is not loop or (task.done() and (task.cancelled() or task.exception() is not None)):
        scorer = scorer_for(options, name="referee_verifiers", fields=VERIFIERS_FIELDS)
        task = _recent[key] = loop.create_task(_score_one(scorer, sample))
    _recent.move_to_end(key)
    while len(_recent) > RECENT:
        _recent.popitem(last=False)
    return await asyncio.shield(task)


async def _score_one(scorer: Scorer, sample: TrainerSample) -> SampleScore:
    [score] = await scorer.score_async([sample])
    return score


def fault_signals(score: SampleScore) -> dict[str, float]:
    """The signals of faults that are not the model's answer being wrong: ``referee_error``,
    ``referee_timeout``, ``referee_no_answer`` (a v1 ``@vf.metric`` can return this dict).

    Example:
        >>> from referee.verifiers import Verdict
        >>> fault_signals(SampleScore(0.0, Verdict("error", reason="the sandbox failed"), "code"))
        {'referee_error': 1.0, 'referee_timeout': 0.0, 'referee_no_answer': 0.0}
    """
    metrics = score.metrics()
    return {name: metrics[name] for name in METRICS}


class RubricReward:
    """An ``async (completion, answer, **kwargs) -> float`` reward function for a ``vf.Rubric``.

    Args:
        verifier: ``gsm8k``, ``math`` or ``code``; ``None`` routes by ``info`` (``verifier`` or
            ``data_source``) or the ``task`` name.
        name: the function's ``__name__`` (the Rubric's metric name).
        **options: :class:`~referee.rewards.trainers.adapters.AdapterOptions` (``fallback``, ``verifier_options``, ...).

    Example:
        >>> import asyncio
        >>> reward = RubricReward("gsm8k")
        >>> state = {}
        >>> asyncio.run(reward(completion="9 * 2 = 18\\n#### 18", answer="18", state=state)), state["referee"]["acc"]
        (1.0, 1.0)
    """

    def __init__(self, verifier: str | None = None, *, name: str | None = None, **options: Any) -> None:
        self.verifier = verifier
        self.__name__ = name or f"referee_{verifier or 'reward'}"
        self.options = options
        self._scorer: Scorer = scorer_for(options, name="referee_verifiers", fields=VERIFIERS_FIELDS)

    def __repr__(self) -> str:
        return f"RubricReward({self.verifier!r}, name={self.__name__!r}, options={self.options!r})"

    async def __call__(self, completion: Any, answer: Any, **kwargs: Any) -> float:
        sample = _sample(completion, answer, kwargs.get("info"), kwargs.get("task"), self.verifier)
        [score] = await self._scorer.score_async([sample])
        state = kwargs.get("state")
        if isinstance(state, dict):
            state[STATE_KEY] = score.metrics()
        return float(score.score)


def _metric(name: str) -> Any:
    def metric(state: Any = None, **kwargs: Any) -> float:
        found = state.get(STATE_KEY) if isinstance(state, Mapping) else None
        return float(found.get(name, 0.0)) if isinstance(found, Mapping) else 0.0

    metric.__name__ = name
    metric.__doc__ = f"1.0 when referee's Verdict for this rollout was {name.removeprefix('referee_')} (weight 0: logged only)."
    return metric


def rubric_functions(verifier: str | None = None, *, weight: float = 1.0, **options: Any) -> tuple[list[Any], list[float]]:
    """``(funcs, weights)`` for ``vf.Rubric``: the :class:`RubricReward` and its weight-0 metrics.

    Example:
        >>> funcs, weights = rubric_functions("math")
        >>> [f.__name__ for f in funcs], weights
        (['referee_math', 'referee_error', 'referee_timeout', 'referee_no_answer'], [1.0, 0.0, 0.0, 0.0])
    """
    return [RubricReward(verifier, **options), *(_metric(name) for name in METRICS)], [float(weight), 0.0, 0.0, 0.0]
