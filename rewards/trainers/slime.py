"""referee in slime: an ``async`` reward for ``--custom-rm-path`` (and ``--group-rm``).

slime awaits ``reward(args, sample)`` once per sample (``--custom-rm-path
referee.rewards.trainers.slime.reward``), or, with ``--group-rm``, ``reward_group(args, samples)`` once per
group of samples (``--custom-rm-path referee.rewards.trainers.slime.reward_group``), on its rollout event
loop: referee judges in a worker thread, so generation keeps going meanwhile. Where a custom
generate function returns several samples (slime's fan-out, without ``--group-rm``), slime hands
the per-sample ``reward`` the list (``batched_async_rm``): it then returns one reward per sample,
in order.

A sample brings ``sample.response``, ``sample.label`` (the gold, or a dict such as
``{"verifier": "code", "tests": {...}}``) and ``sample.metadata`` (read like verl's
``extra_info``: ``verifier``, ``data_source``, ``tests``); messages name them so. The reward is a float; when slime is
given ``--reward-key`` it is a dict holding the score under that key plus the numeric metrics
``score``, ``acc``, ``referee_error``, ``referee_timeout``, ``referee_no_answer``.

Options (:class:`~referee.rewards.trainers.adapters.AdapterOptions`) come from ``args.referee``, which
slime's ``--custom-config-path`` YAML sets::

    referee:
      default_verifier: math
      fallback: 0.0
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from referee.rewards.trainers.adapters import SampleScore, Scorer, TrainerSample, scorer_for
from referee.rewards.trainers.routing import SLIME_FIELDS

# The attribute of slime's ``args`` holding referee's options (a ``--custom-config-path`` YAML key).
ARGS_OPTIONS = "referee"


def _scorer(args: Any) -> Scorer:
    options = getattr(args, ARGS_OPTIONS, None) or {}
    return scorer_for(options, name="referee_slime", fields=SLIME_FIELDS)


def _sample(sample: Any) -> TrainerSample:
    metadata = getattr(sample, "metadata", None)
    metadata = metadata if isinstance(metadata, Mapping) else {}
    return TrainerSample(getattr(sample, "response", None), getattr(sample, "label", None),
                         metadata.get("data_source"), metadata)


def _reward(args: Any, score: SampleScore) -> float | dict[str, float]:
    key = getattr(args, "reward_key", None)
    if not key:
        return float(score.score)
    metrics = score.metrics()
    metrics[key] = float(score.score)
    return metrics


async def reward(args: Any, sample: Any, **kwargs: Any) -> float | dict[str, float] | list[float | dict[str, float]]:
    """Score one slime ``Sample``; a float, or a dict when ``args.reward_key`` is set. A list of
    samples (slime's fan-out path) gets a list of rewards, one per sample in order.

    Example:
        >>> import asyncio
        >>> from types import SimpleNamespace
        >>> args = SimpleNamespace(reward_key=None, referee={"default_verifier": "gsm8k"})
        >>> asyncio.run(reward(args, SimpleNamespace(response="9 * 2 = 18\\n#### 18", label="18", metadata={})))
        1.0
        >>> asyncio.run(reward(SimpleNamespace(reward_key="score"),
        ...                    SimpleNamespace(response="#### 17", label="18", metadata={"data_source": "openai/gsm8k"})))
        {'score': 0.0, 'acc': 0.0, 'referee_error': 0.0, 'referee_timeout': 0.0, 'referee_no_answer': 0.0}
        >>> fanned_out = [SimpleNamespace(response=r, label="18", metadata={}) for r in ("#### 17", "#### 18")]
        >>> asyncio.run(reward(args, fanned_out))
        [0.0, 1.0]
    """
    if isinstance(sample, (list, tuple)):
        return await reward_group(args, sample)
    [score] = await _scorer(args).score_async([_sample(sample)])
    return _reward(args, score)


async def reward_group(args: Any, samples: Sequence[Any], **kwargs: Any) -> list[float | dict[str, float]]:
    """Score a group of slime ``Sample`` values at once (``--group-rm``): one ``verify_batch`` per verifier.

    Example:
        >>> import asyncio
        >>> from types import SimpleNamespace
        >>> group = [SimpleNamespace(response=r, label="18", metadata={"verifier": "gsm8k"}) for r in ("#### 18", "#### 17")]
        >>> asyncio.run(reward_group(SimpleNamespace(reward_key=None), group))
        [1.0, 0.0]
    """
    scores = await _scorer(args).score_async([_sample(sample) for sample in samples])
    return [_reward(args, score) for score in scores]
