"""referee in verl: ``compute_score`` for ``custom_reward_function`` (every reward manager), and
``compute_score_float`` for ``verl.trainer.main_eval``.

verl calls a custom reward function per sample, by keyword, as
``compute_score(data_source=..., solution_str=..., ground_truth=..., extra_info=..., **reward_kwargs)``
(the ``naive``, ``dapo``, ``remote`` and ``rate_limited`` managers verl 0.7+ registers, and the
reward loop, which awaits an ``async`` function and runs a sync one in a thread); verl 0.6 and
earlier also had ``prime``, which calls it positionally as ``compute_score(data_source,
solution_str, ground_truth, extra_info)`` in worker processes, and ``batch``, which passes lists to
``compute_score_batch(data_sources=..., solution_strs=..., ground_truths=..., extra_infos=...)``.
``verl.trainer.main_eval`` averages what it gets with ``np.mean``: give it ``compute_score_float``.

Every call returns a :class:`VerlScore`: a dict with the same numeric keys on every sample
(``score``, ``acc``, ``referee_error``, ``referee_timeout``, ``referee_no_answer``), never
``None``, so the ``reward_extra_info`` schema verl fixes on sample 0 holds. verl has no ``None``
reward: an ``error`` (bad gold, failed sandbox) scores the ``fallback`` option with
``referee_error = 1``, and too many errors stop the run (:class:`~referee.rewards.trainers.adapters.ErrorRateExceeded`).

Config (``reward_kwargs`` are :class:`~referee.rewards.trainers.adapters.AdapterOptions`), verl 0.7 and later
(verl 0.6 and earlier: the same keys without ``reward.``; verl 0.9's ``main_ppo`` ignores them there)::

    reward.custom_reward_function.path=pkg://referee.rewards.trainers.verl
    reward.custom_reward_function.name=compute_score_async   # or compute_score
    +reward.custom_reward_function.reward_kwargs.fallback=0.0
    +reward.custom_reward_function.reward_kwargs.verifier_options.math.timeout=5
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from referee.rewards.trainers.adapters import SampleScore, Scorer, TrainerSample, scorer_for

# Keyword arguments verl's reward loop adds for model-based rewards: not referee options.
VERL_CALL_KWARGS: frozenset[str] = frozenset({"reward_router_address", "reward_model_tokenizer"})


class VerlScore(dict):
    """The dict verl gets for one sample; ``result[0]`` is its score too.

    verl's ``prime`` reward manager reads ``float(result[0])`` from any result that is not a
    number, so the score answers at index 0 as well; ``0`` is not a key (``items()`` and
    ``keys()`` show only the metrics, which the other managers log).

    Example:
        >>> result = VerlScore(score=1.0, acc=1.0)
        >>> result[0], result["score"], list(result)
        (1.0, 1.0, ['score', 'acc'])
    """

    def __getitem__(self, key: Any) -> Any:
        if type(key) is int and key == 0 and not dict.__contains__(self, 0):
            return dict.__getitem__(self, "score")
        return dict.__getitem__(self, key)


def _scorer(kwargs: Mapping[str, Any]) -> Scorer:
    return scorer_for({k: v for k, v in kwargs.items() if k not in VERL_CALL_KWARGS}, name="referee_verl")


def _result(score: SampleScore) -> VerlScore:
    return VerlScore(score.metrics())


def compute_score(
    data_source: Any,
    solution_str: str,
    ground_truth: Any,
    extra_info: Mapping[str, Any] | None = None,
    **kwargs: Any,
) -> VerlScore:
    """Score one verl sample with the verifier its ``data_source`` (or ``extra_info["verifier"]``) names.

    Args:
        data_source: verl's dataset name (``openai/gsm8k``, ``lighteval/MATH``, ``math_dapo``,
            ``aime*``, ``codecontests``, ``apps``, ``taco``, ...; see :mod:`referee.rewards.trainers.routing`).
        solution_str: the decoded response.
        ground_truth: ``reward_model.ground_truth``: the answer, or the code tests.
        extra_info: verl's ``extra_info``; ``verifier`` and ``tests`` are read from it.
        **kwargs: verl's ``reward_kwargs``, the options of :class:`~referee.rewards.trainers.adapters.AdapterOptions`.

    Raises :class:`~referee.rewards.trainers.routing.RefereeStop` (past ``except Exception``) for an
    unknown ``data_source`` or option, and once errors pass ``max_error_share``.

    Example:
        >>> compute_score("openai/gsm8k", "9 * 2 = 18\\n#### 18", "18")
        {'score': 1.0, 'acc': 1.0, 'referee_error': 0.0, 'referee_timeout': 0.0, 'referee_no_answer': 0.0}
        >>> compute_score("lighteval/MATH", "so $\\\\boxed{\\\\frac{1}{2}}$", "0.5")["acc"]
        1.0
        >>> compute_score("openai/gsm8k", "#### 18", "not a number", None, fallback=-1.0)["score"]
        -1.0
    """
    [score] = _scorer(kwargs).score([TrainerSample(solution_str, ground_truth, data_source, extra_info)])
    return _result(score)


async def compute_score_async(
    data_source: Any,
    solution_str: str,
    ground_truth: Any,
    extra_info: Mapping[str, Any] | None = None,
    **kwargs: Any,
) -> VerlScore:
    """:func:`compute_score` for verl's reward loop, which awaits ``async`` reward functions:
    the verifiers run in a worker thread, never on the loop.

    Example:
        >>> import asyncio
        >>> asyncio.run(compute_score_async(data_source="openai/gsm8k", solution_str="#### 17", ground_truth="18"))["score"]
        0.0
    """
    [score] = await _scorer(kwargs).score_async([TrainerSample(solution_str, ground_truth, data_source, extra_info)])
    return _result(score)


def compute_score_float(
    data_source: Any,
    solution_str: str,
    ground_truth: Any,
    extra_info: Mapping[str, Any] | None = None,
    **kwargs: Any,
) -> float:
    """:func:`compute_score`'s score alone, a float: for ``verl.trainer.main_eval``, which averages the
    results with ``np.mean`` (referee's dicts cannot be added) and calls it positionally.

    Example:
        >>> import numpy as np
        >>> float(np.mean([compute_score_float("openai/gsm8k", r, "18") for r in ("#### 18", "#### 17")]))
        0.5
    """
    return float(compute_score(data_source, solution_str, ground_truth, extra_info, **kwargs)["score"])


def compute_score_batch(
    data_sources: Sequence[Any],
    solution_strs: Sequence[str],
    ground_truths: Sequence[Any],
    extra_infos: Sequence[Mapping[str, Any] | None] | None = None,
    **kwargs: Any,
) -> list[VerlScore]:
    """Score a whole batch (verl's ``batch`` reward manager): one ``verify_batch`` per verifier.

    Example:
        >>> [r["score"] for r in compute_score_batch(["openai/gsm8k", "math_dapo"], ["#### 18", "Answer: 7"],
        ...                                          ["18", "8"], [{}, {}])]
        [1.0, 0.0]
    """
    count = len(solution_strs)
    infos = list(extra_infos) if extra_infos is not None else [None] * count
    samples = [TrainerSample(text, gold, source, info)
               for source, text, gold, info in zip(data_sources, solution_strs, ground_truths, infos)]
    if len(samples) != count or len(data_sources) != count or len(ground_truths) != count or len(infos) != count:
        raise ValueError(f"compute_score_batch got {len(data_sources)} data_sources, {count} solution_strs, "
                         f"{len(ground_truths)} ground_truths and {len(infos)} extra_infos; pass one of each per sample.")
    return [_result(score) for score in _scorer(kwargs).score(samples)]
