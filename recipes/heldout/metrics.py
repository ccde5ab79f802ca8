"""Held-out metrics from per-prompt results: unbiased pass@k, maj@k over answer groups, a bootstrap interval.

Pure Python (no torch): the evaluation callback, ``referee eval`` and tests share these.
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Sequence
from fractions import Fraction

from referee.verifiers.answer_groups import AnswerPartition

# Subsets of k samples maj@k averages over per prompt: all of them when there are at most this many.
MAJORITY_SUBSETS = 200


def pass_at_k(n: int, c: int, k: int) -> float:
    """The unbiased estimate of pass@k from ``n`` samples of which ``c`` are right: ``1 - C(n-c, k) / C(n, k)``.

    It is the chance that a draw of ``k`` of the ``n`` samples without replacement holds a
    right one, computed exactly (``1.0`` when fewer than ``k`` samples are wrong).

    Example:
        >>> pass_at_k(10, 0, 5), pass_at_k(10, 10, 1), pass_at_k(10, 3, 1), pass_at_k(4, 2, 3)
        (0.0, 1.0, 0.3, 1.0)
        >>> round(pass_at_k(10, 3, 5), 4)
        0.9167
    """
    if not 0 <= c <= n or not 1 <= k <= n:
        raise ValueError(f"pass@k needs 0 <= c <= n and 1 <= k <= n; got n={n}, c={c}, k={k}.")
    if n - c < k:
        return 1.0
    return float(1 - Fraction(math.comb(n - c, k), math.comb(n, k)))


def ks_up_to(n: int, ks: Sequence[int] | None = None) -> list[int]:
    """The k values reported for ``n`` samples: ``ks`` capped at ``n``, or the powers of two up to ``n`` and ``n``.

    Example:
        >>> ks_up_to(16), ks_up_to(12), ks_up_to(8, [1, 4, 32])
        ([1, 2, 4, 8, 16], [1, 2, 4, 8, 12], [1, 4])
    """
    if ks is not None:
        return sorted({k for k in ks if 1 <= k <= n})
    powers = [2**i for i in range(n.bit_length()) if 2**i <= n]
    return sorted({*powers, n}) if n >= 1 else []


def majority_at_k(partition: AnswerPartition, samples: Sequence[int], k: int, *, seed: int = 0,
                  subsets: int = MAJORITY_SUBSETS) -> float:
    """The expected maj@k score of a prompt: the mean of the majority vote's score over subsets of
    ``k`` of its ``samples`` (indices of the scored samples), all subsets when there are at most
    ``subsets``, else that many seeded random ones. A tie scores ``1/t`` (see
    :meth:`AnswerPartition.majority_score`).

    Example:
        >>> partition = AnswerPartition((0, 0, 1, None), ((0, 1), (2,)), ("4", "5"), correct_group=0)
        >>> majority_at_k(partition, [0, 1, 2, 3], 4), round(majority_at_k(partition, [0, 1, 2, 3], 2), 4)
        (1.0, 0.6667)
    """
    samples = list(samples)
    if not 1 <= k <= len(samples):
        raise ValueError(f"maj@{k} needs 1 <= k <= {len(samples)} samples.")
    if math.comb(len(samples), k) <= subsets:
        draws = list(itertools.combinations(samples, k))
    else:
        generator = random.Random(seed)
        draws = [tuple(generator.sample(samples, k)) for _ in range(subsets)]
    return sum(partition.majority_score(draw) for draw in draws) / len(draws)


def bootstrap_interval(values: Sequence[float], *, confidence: float = 0.95, resamples: int = 1000,
                       seed: int = 0) -> tuple[float, float] | None:
    """A percentile bootstrap interval for the mean of ``values`` (one per prompt), seeded;
    ``None`` for fewer than two values.

    Example:
        >>> low, high = bootstrap_interval([0.0, 0.25, 0.5, 0.75, 1.0] * 4)
        >>> 0.3 < low < 0.5 < high < 0.7
        True
        >>> bootstrap_interval([1.0]) is None
        True
    """
    if not 0 < confidence < 1:
        raise ValueError(f"confidence={confidence!r} must lie strictly between 0 and 1.")
    values = list(values)
    if len(values) < 2:
        return None
    generator = random.Random(seed)
    means = sorted(sum(generator.choices(values, k=len(values))) / len(values) for _ in range(resamples))
    tail = (1 - confidence) / 2
    return means[int(tail * (resamples - 1))], means[int(math.ceil((1 - tail) * (resamples - 1)))]
