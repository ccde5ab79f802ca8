"""Weighted rewards: TRL's ``reward_funcs`` + ``reward_weights`` in one call, checked for balance.

A reward says what it checks with two attributes: ``kind`` (``"correctness"`` or
``"shaping"``: format, length) and ``reward_range`` (lowest, highest). Shaping must never be
able to pay as much as correctness: when the shaping rewards' weighted swing reaches the
correctness rewards' swing, a wrong answer in perfect form ties or beats a right answer in
none, and the model learns tidy tags around wrong answers. :func:`compose_rewards` refuses
that (or warns, with ``allow_shaping_outweigh=True``).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from .registry import RewardFunction, resolve_reward

KINDS: tuple[str, ...] = ("correctness", "shaping")

RewardTerm = str | RewardFunction | tuple[Any, float] | Mapping[str, Any]


def reward_name(reward: Callable[..., Any]) -> str:
    """The name TRL logs a reward under (``rewards/<name>/mean``).

    Example:
        >>> def my_reward(completions, **kwargs): return [0.0] * len(completions)
        >>> reward_name(my_reward)
        'my_reward'
    """
    return str(getattr(reward, "__name__", type(reward).__name__))


def _kind_and_range(reward: Callable[..., Any]) -> tuple[str, tuple[float, float]]:
    kind = getattr(reward, "kind", None)
    if kind is None:
        warnings.warn(f"Reward {reward_name(reward)} does not say what it checks; counting it as correctness with range "
                      f"[0, 1]. Set its .kind ('correctness' or 'shaping') and .reward_range to silence this.",
                      stacklevel=3)
        kind = "correctness"
    if kind not in KINDS:
        raise ValueError(f"Reward {reward_name(reward)} has kind {kind!r}; use 'correctness' or 'shaping'.")
    low, high = getattr(reward, "reward_range", (0.0, 1.0))
    return kind, (float(low), float(high))


def _term(term: RewardTerm) -> tuple[RewardFunction, float]:
    if isinstance(term, Mapping):
        unknown = set(term) - {"name", "weight", "options"}
        if "name" not in term or unknown:
            raise ValueError(f"Reward entry {dict(term)!r} needs 'name' and may have only 'weight' and 'options'.")
        reward, weight = resolve_reward(term["name"], **dict(term.get("options") or {})), term.get("weight", 1.0)
    elif isinstance(term, tuple):
        if len(term) != 2:
            raise ValueError(f"Reward entry {term!r} must be (reward, weight).")
        reward, weight = term
        reward = resolve_reward(reward) if isinstance(reward, str) else reward
    else:
        reward, weight = (resolve_reward(term) if isinstance(term, str) else term), 1.0
    if not callable(reward):
        raise ValueError(f"Reward entry {term!r} is not a reward function, a reward name or a module:attr path.")
    if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not math.isfinite(weight):
        raise ValueError(f"Reward {reward_name(reward)} has weight {weight!r}; give a finite number.")
    return reward, float(weight)


def swings(terms: Sequence[tuple[Callable[..., Any], float]]) -> dict[str, float]:
    """How far each kind of reward can move the weighted sum: sum of ``|weight| * (high - low)``.

    Example:
        >>> from referee.rewards import get_reward
        >>> swings([(get_reward("gsm8k_accuracy"), 1.0), (get_reward("think_format"), 0.25),
        ...         (get_reward("soft_overlong", max_length=256), 0.5)])
        {'correctness': 1.0, 'shaping': 0.75}
    """
    return _swings([(_kind_and_range(reward), weight) for reward, weight in terms])


def _swings(described: Sequence[tuple[tuple[str, tuple[float, float]], float]]) -> dict[str, float]:
    total = dict.fromkeys(KINDS, 0.0)
    for (kind, (low, high)), weight in described:
        total[kind] += abs(weight) * (high - low)
    return total


def compose_rewards(
    terms: Iterable[RewardTerm],
    *,
    allow_shaping_outweigh: bool = False,
) -> tuple[list[RewardFunction], list[float]]:
    """TRL's ``reward_funcs`` and ``reward_weights`` from (reward, weight) entries, checked for balance.

    Each entry is a reward name or ``module:attr`` path or function (weight 1), a
    ``(reward, weight)`` pair, or a mapping ``{"name": ..., "weight": ..., "options": {...}}``
    (the YAML form). Names must be unique (TRL logs each reward under its name).

    Raises ValueError when the shaping rewards' weighted swing is at least the correctness
    rewards' (unless ``allow_shaping_outweigh``, which warns instead).

    Example:
        >>> funcs, weights = compose_rewards([("gsm8k_accuracy", 1.0), ("gsm8k_format", 0.2)])
        >>> [f.__name__ for f in funcs], weights
        (['gsm8k_accuracy', 'gsm8k_format'], [1.0, 0.2])
        >>> compose_rewards([("gsm8k_accuracy", 1.0), ("think_format", 0.5), ("tag_count", 0.5)])
        Traceback (most recent call last):
        ...
        ValueError: Shaping rewards (think_format, tag_count) can move the reward by 1 and correctness (gsm8k_accuracy) only by 1: a wrong answer in perfect form then scores at least as much as a right one without it; keep the shaping swing below 1 or pass allow_shaping_outweigh=True.
    """
    resolved = [_term(term) for term in terms]
    if not resolved:
        raise ValueError("No rewards given; pass at least one (reward, weight).")
    names = [reward_name(reward) for reward, _ in resolved]
    duplicates = sorted({name for name in names if names.count(name) > 1})
    if duplicates:
        raise ValueError(f"Rewards {', '.join(duplicates)} appear more than once; give each a distinct name= "
                         "(TRL logs rewards by name).")
    described = [(_kind_and_range(reward), weight) for reward, weight in resolved]  # warns once per reward
    swing = _swings(described)
    correctness = [n for n, ((kind, _), w) in zip(names, described) if kind == "correctness" and w]
    shaping = [n for n, ((kind, _), w) in zip(names, described) if kind == "shaping" and w]
    problem = None
    if not correctness and shaping:
        problem = "No correctness reward has a weight, so the model is paid for form alone"
    elif shaping and swing["shaping"] >= swing["correctness"]:
        problem = (f"Shaping rewards ({', '.join(shaping)}) can move the reward by {swing['shaping']:g} and correctness "
                   f"({', '.join(correctness)}) only by {swing['correctness']:g}: a wrong answer in perfect form then "
                   f"scores at least as much as a right one without it; keep the shaping swing below "
                   f"{swing['correctness']:g}")
    if problem and not allow_shaping_outweigh:
        raise ValueError(f"{problem} or pass allow_shaping_outweigh=True.")
    if problem:
        warnings.warn(f"{problem}. Proceeding because allow_shaping_outweigh=True.", stacklevel=2)
    return [reward for reward, _ in resolved], [weight for _, weight in resolved]


class RewardSum:
    """A weighted sum of rewards, scored the way TRL combines them (``None`` terms left out).

    A row where every term is ``None`` is ``None``. Used by ``referee check`` and
    ``referee audit`` to judge a composition as the trainer will see it; build one with
    :func:`parse_reward_sum`.

    Example:
        >>> from referee.rewards import get_reward
        >>> total = RewardSum([(get_reward("gsm8k_accuracy"), 1.0), (get_reward("gsm8k_format"), 0.25)])
        >>> total.__name__
        'gsm8k_accuracy + 0.25*gsm8k_format'
        >>> total(completions=["#### 18", "#### 17", "18"], answer=["18", "18", "18"])
        [1.25, 0.25, 1.0]
    """

    def __init__(self, terms: Sequence[tuple[RewardFunction, float]]) -> None:
        if not terms:
            raise ValueError("A reward sum needs at least one (reward, weight) term.")
        self.terms = [(reward, float(weight)) for reward, weight in terms]
        self.__name__ = " + ".join(reward_name(r) if w == 1 else f"{w:g}*{reward_name(r)}" for r, w in self.terms)

    def __call__(
        self,
        prompts: Sequence[Any] | None = None,
        completions: Sequence[Any] | None = None,
        completion_ids: Sequence[Sequence[int]] | None = None,
        **kwargs: Any,
    ) -> list[float | None]:
        """Each term's rewards, weighted and summed per completion."""
        columns = [reward(prompts=prompts, completions=completions, completion_ids=completion_ids, **kwargs)
                   for reward, _ in self.terms]
        totals: list[float | None] = []
        for row in zip(*columns):
            scored = [value * weight for value, (_, weight) in zip(row, self.terms) if value is not None]
            totals.append(sum(scored) if scored else None)
        return totals


def parse_reward_sum(expression: str, **options: Any) -> RewardFunction:
    """A reward from ``"name"`` or a sum such as ``"gsm8k_accuracy + 0.5*think_format"``.

    Each term is ``[weight*]reward`` (a built-in name or ``module:attr``); write a negative
    weight as ``+ -0.5*reward``. An option configures the one reward of a plain expression;
    in a sum, scope it to a term as ``"reward.option"`` (e.g. ``"gsm8k_accuracy.mode"``).

    Example:
        >>> parse_reward_sum("gsm8k_accuracy + 0.5*think_format").__name__
        'gsm8k_accuracy + 0.5*think_format'
        >>> parse_reward_sum("soft_overlong", max_length=64).max_length
        64
        >>> total = parse_reward_sum("gsm8k_accuracy + 0.2*gsm8k_format", **{"gsm8k_accuracy.mode": "strict"})
        >>> total.terms[0][0].options
        {'mode': 'strict'}
    """
    pieces = [piece.strip() for piece in expression.split("+")]
    if not all(pieces):
        raise ValueError(f"Reward {expression!r} has an empty term; write it like 'gsm8k_accuracy + 0.5*think_format'.")
    terms = []
    for piece in pieces:
        weight_text, _, spec = piece.rpartition("*") if "*" in piece else ("1", "", piece)
        try:
            terms.append((spec.strip(), float(weight_text)))
        except ValueError:
            raise ValueError(f"Term {piece!r} of {expression!r} is not weight*reward (e.g. 0.5*think_format).") from None
    scoped: dict[str, dict[str, Any]] = {spec: {} for spec, _ in terms}
    for key, value in options.items():
        spec, dot, option = key.rpartition(".") if "." in key else ("", "", key)
        if not dot and len(terms) == 1:
            spec = terms[0][0]
        if spec not in scoped:
            raise ValueError(f"Option {key!r} does not name a reward of {expression!r}; "
                             f"write it as reward.option, e.g. {terms[0][0]}.{option}.")
        scoped[spec][option] = value
    if len(terms) == 1 and terms[0][1] == 1.0 and "*" not in expression:
        return resolve_reward(terms[0][0], **scoped[terms[0][0]])
    return RewardSum([(resolve_reward(spec, **scoped[spec]), weight) for spec, weight in terms])
