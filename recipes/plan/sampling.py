"""What dynamic sampling costs: expected generation rounds per step and the chance the rounds run out.

With per-sample success p a group of G is informative with probability ``q = 1 - p^G - (1-p)^G``
(the seeds' formula); a pass-rate histogram (a ``referee prefilter`` or ``referee eval`` report)
gives ``q`` as the mean over its prompts. Each round generates as many groups as the batch needs,
so with N groups a step needs ``R`` rounds where ``R`` is the first ``r`` with
``Binomial(r N, q) >= N``, capped at ``max_rounds``. Counted over the whole batch, as one process
would keep it (several processes each fill their own share, which needs slightly more rounds).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any



def degenerate_group_share(pass_rate: float, group_size: int) -> float:
    """Expected share of groups whose G rewards are all equal (no gradient) when each
    sample succeeds with probability ``pass_rate``: ``p^G + (1-p)^G``.

    Example:
        >>> round(degenerate_group_share(0.9, 8), 3), round(degenerate_group_share(0.5, 4), 3)
        (0.43, 0.125)
    """
    if not 0.0 <= pass_rate <= 1.0:
        raise ValueError(f"pass rate {pass_rate} is not a probability; give a number in [0, 1].")
    return pass_rate**group_size + (1.0 - pass_rate) ** group_size


def _binomial_below(trials: int, probability: float, threshold: int) -> float:
    """P(Binomial(trials, probability) < threshold)."""
    if threshold <= 0:
        return 0.0
    if probability <= 0.0:
        return 1.0
    if probability >= 1.0:
        return float(trials < threshold)
    return math.fsum(math.comb(trials, k) * probability**k * (1 - probability) ** (trials - k)
                     for k in range(min(threshold, trials + 1)))


def sampling_rounds(informative: float, groups: int, max_rounds: int) -> tuple[float, float]:
    """``(expected rounds per step, chance the rounds run out)`` for ``groups`` groups per batch,
    each informative with probability ``informative``.

    Example:
        >>> rounds, shortfall = sampling_rounds(1 - 0.4305, 8, 3)  # p = 0.9, G = 8
        >>> round(rounds, 2), round(shortfall, 4)  # two rounds fill the batch about four steps in five
        (2.2, 0.0056)
        >>> sampling_rounds(1.0, 8, 3), sampling_rounds(0.0, 8, 3)
        ((1.0, 0.0), (3.0, 1.0))
    """
    if not 0.0 <= informative <= 1.0 or groups < 1 or max_rounds < 1:
        raise ValueError(f"informative={informative}, groups={groups}, max_rounds={max_rounds} need a share in [0, 1] "
                         "and counts >= 1.")
    expected = 1.0 + math.fsum(_binomial_below(r * groups, informative, groups) for r in range(1, max_rounds))
    return expected, _binomial_below(max_rounds * groups, informative, groups)


def histogram_informative_share(histogram: Iterable[dict[str, Any]], group_size: int) -> float:
    """The mean informative-group probability over a report's ``pass_rate_histogram`` (``pass_rate``, ``rows``).

    Example:
        >>> round(histogram_informative_share([{"pass_rate": 0.5, "rows": 3}, {"pass_rate": 1.0, "rows": 1}], 4), 4)
        0.6562
    """
    bars = [(float(bar["pass_rate"]), int(bar["rows"])) for bar in histogram]
    total = sum(rows for _, rows in bars)
    if total < 1:
        raise ValueError("the pass-rate histogram has no rows; give the report of a run that scored some prompts.")
    return math.fsum(rows * (1 - degenerate_group_share(rate, group_size)) for rate, rows in bars) / total


def sampling_plan(informative: dict[str, float], groups: int, max_rounds: int,
                  tokens_per_round: float) -> dict[str, dict[str, float]]:
    """Per pass-rate source (``p=0.9``, ``histogram``): expected rounds, generated tokens per step,
    kept share of the generated groups and the chance the rounds run out.

    Example:
        >>> plan = sampling_plan({"p=0.5": 1 - 0.0078}, groups=8, max_rounds=3, tokens_per_round=32768)
        >>> round(plan["p=0.5"]["expected_rounds"], 3), round(plan["p=0.5"]["tokens_per_step"])
        (1.061, 34758)
    """
    plan = {}
    for source, share in informative.items():
        rounds, shortfall = sampling_rounds(share, groups, max_rounds)
        plan[source] = {"expected_rounds": rounds, "tokens_per_step": rounds * tokens_per_round,
                        "shortfall_chance": shortfall, "informative_share": share}
    return plan
