"""Score samples with the trainer's reward functions and count passes per prompt.

Reward functions are called exactly as TRL's ``GRPOTrainer`` calls them (keywords
``prompts``, ``completions``, ``completion_ids``, the row's other columns repeated per
sample, ``log_metric`` and ``log_extra``), one call per reward for a whole chunk. A reward that
raises or returns the wrong number of values is retried row by row, so one bad row costs only
its own scores. A sample passes when the *success* reward (one chosen reward, never a
weighted sum) is at least the threshold; a ``None`` reward (not the completion's fault) is
neither a pass nor a failure and leaves the pass-rate denominator.
"""

from __future__ import annotations

import inspect
import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from numbers import Real
from typing import Any

from referee.rewards.protocol import RewardFunction


# Keywords TRL itself passes to reward functions (never dataset columns).
TRAINER_KEYWORDS = frozenset({"prompts", "completions", "completion_ids", "trainer_state", "log_metric",
                              "log_extra", "environments"})
# Dataset columns TRL does not pass on as keyword columns.
NON_COLUMNS = frozenset({"prompt", "completion", "completion_ids"})


def reward_name(reward: RewardFunction) -> str:
    """The name a reward is reported under: its ``__name__`` (TRL's metric name).

    Example:
        >>> def contains_seven(prompts, completions, **kwargs): ...
        >>> reward_name(contains_seven)
        'contains_seven'
    """
    name = getattr(reward, "__name__", None)
    return name if isinstance(name, str) and name else type(reward).__name__


def load_reward(spec: str | RewardFunction, options: dict[str, Any] | None = None) -> RewardFunction:
    """A reward function from a built-in name or ``module:attribute`` path (through
    :func:`referee.rewards.resolve_reward`, with ``options``), or the function itself.

    Example:
        >>> load_reward("gsm8k_accuracy", {"mode": "strict"}).options
        {'mode': 'strict'}
    """
    if callable(spec):
        if options:
            raise ValueError(f"Options {sorted(options)} cannot apply to reward {reward_name(spec)!r}, a function "
                             "object; set them when you build it.")
        return spec
    if not isinstance(spec, str) or not spec:
        raise ValueError(f"Reward {spec!r} is neither a reward name, a module:attribute path nor a function.")
    from referee.rewards import resolve_reward

    return resolve_reward(spec, **(options or {}))


def needed_columns(reward: RewardFunction) -> list[tuple[str, ...]]:
    """The dataset columns a row must have for ``reward``: each entry is a group of which one
    column is enough. Read from the reward's ``gold_columns`` attribute and from the
    parameters without defaults in its signature (beyond TRL's own keywords).

    Example:
        >>> def by_answer(prompts, completions, answer, **kwargs): ...
        >>> needed_columns(by_answer)
        [('answer',)]
    """
    groups: list[tuple[str, ...]] = []
    gold_columns = getattr(reward, "gold_columns", None)
    if isinstance(gold_columns, (list, tuple)) and gold_columns and all(isinstance(c, str) for c in gold_columns):
        groups.append(tuple(gold_columns))
    try:
        parameters = inspect.signature(reward).parameters.values()
    except (TypeError, ValueError):
        return groups
    for parameter in parameters:
        if (parameter.kind in (parameter.POSITIONAL_OR_KEYWORD, parameter.KEYWORD_ONLY)
                and parameter.default is parameter.empty and parameter.name not in TRAINER_KEYWORDS):
            groups.append((parameter.name,))
    return groups


def pass_counts(values: Sequence[float | None], threshold: float) -> tuple[int, int, int]:
    """``(num_correct, num_samples, num_unscored)`` for one prompt's success rewards:
    ``None`` values are unscored and left out of ``num_samples`` (the pass-rate denominator).

    Example:
        >>> pass_counts([1.0, 0.0, None, 1.0, 0.5], threshold=1.0)
        (2, 4, 1)
    """
    scored = [v for v in values if v is not None]
    return sum(v >= threshold for v in scored), len(scored), len(values) - len(scored)


@dataclass
class RowScores:
    """One prompt's scores: ``rewards[name][j]`` is sample j's value under reward ``name``,
    ``extras[j]`` what the rewards logged for sample j through ``log_extra``, ``errors`` one
    line per problem, ``failed`` the rewards that could not score this row at all.

    Example:
        >>> RowScores(rewards={"is_seven": [1.0, None]}, extras=[{}, {}]).rewards["is_seven"]
        [1.0, None]
    """

    rewards: dict[str, list[float | None]]
    extras: list[dict[str, Any]]
    errors: list[str] = field(default_factory=list)
    failed: set[str] = field(default_factory=set)


class _RewardOutputError(ValueError):
    pass


def _checked_values(output: Any, expected: int) -> list[float | None]:
    try:
        values = list(output)
    except TypeError:
        raise _RewardOutputError(f"returned a {type(output).__name__}, not a list of rewards") from None
    if len(values) != expected:
        raise _RewardOutputError(f"returned {len(values)} values for {expected} completions")
    checked: list[float | None] = []
    for value in values:
        if value is None:
            checked.append(None)
        elif isinstance(value, Real) or hasattr(value, "__float__"):
            number = float(value)
            checked.append(None if math.isnan(number) else number)
        else:
            raise _RewardOutputError(f"returned {value!r}, which is not a number or None")
    return checked


class Scorer:
    """Scores groups of samples with several reward functions, keeping each reward's values
    apart and in (row, sample) order.

    Args:
        rewards: reward functions, built-in names or ``module:attribute`` paths.
        reward_options: options per reward spec (e.g. ``{"gsm8k_accuracy": {"mode": "strict"}}``).
        success_reward: the reward whose value decides a pass (default: the first).
        threshold: a sample passes when the success reward is ``>= threshold``.

    Example:
        >>> def has_seven(prompts, completions, **kwargs):
        ...     return [float("7" in c) for c in completions]
        >>> def length(prompts, completions, **kwargs):
        ...     return [len(c) / 10 for c in completions]
        >>> scorer = Scorer([has_seven, length], success_reward="has_seven")
        >>> rows, metrics = scorer.score(["p0", "p1"], [["7", "1"], ["77", "x"]], [[[1], [2]], [[3, 3], [4]]], [{}, {}])
        >>> rows[0].rewards, rows[1].rewards["length"]
        ({'has_seven': [1.0, 0.0], 'length': [0.1, 0.1]}, [0.2, 0.1])
    """

    def __init__(
        self, rewards: Sequence[str | RewardFunction], *, reward_options: dict[str, dict[str, Any]] | None = None,
        success_reward: str | None = None, threshold: float = 1.0,
    ) -> None:
        if not rewards:
            raise ValueError("No reward given; pass at least one --reward (a reward name or module:function).")
        options = dict(reward_options or {})
        unknown = sorted(set(options) - {spec for spec in rewards if isinstance(spec, str)})
        if unknown:
            raise ValueError(f"Options are given for {', '.join(map(repr, unknown))}, which is not among the rewards; "
                             "scope an option to a --reward as REWARD.OPTION=VALUE.")
        self.functions = [load_reward(spec, options.get(spec) if isinstance(spec, str) else None) for spec in rewards]
        self.names = tuple(reward_name(f) for f in self.functions)
        duplicates = sorted({n for n in self.names if self.names.count(n) > 1})
        if duplicates:
            raise ValueError(f"Rewards {', '.join(duplicates)} are given twice; give each reward once.")
        self.success_reward = success_reward or self.names[0]
        if self.success_reward not in self.names:
            raise ValueError(f"Success reward {self.success_reward!r} is not among the rewards "
                             f"({', '.join(self.names)}); add it with --reward or pick one of those.")
        if math.isnan(threshold):
            raise ValueError("The pass threshold is NaN; give a number such as 1.0.")
        self.threshold = float(threshold)
        self._needed = [needed_columns(f) for f in self.functions]

    def score(
        self,
        prompts: Sequence[Any],
        completions: Sequence[Sequence[Any]],
        completion_ids: Sequence[Sequence[Sequence[int]]],
        columns: Sequence[dict[str, Any]],
    ) -> tuple[list[RowScores], dict[str, list[float]]]:
        """Score every row's samples with every reward.

        ``completions[i]`` are row i's samples (text or chat messages), ``columns[i]`` its other
        dataset columns. Returns one :class:`RowScores` per row and the values the rewards
        logged through ``log_metric`` (name -> values).
        """
        rows = [RowScores(rewards={}, extras=[{} for _ in group]) for group in completions]
        metrics: dict[str, list[float]] = defaultdict(list)
        for function, name, needed in zip(self.functions, self.names, self._needed):
            for index, row in enumerate(rows):
                row.rewards[name] = [None] * len(completions[index])
            ready = []
            for index, row_columns in enumerate(columns):
                missing = [group for group in needed if not any(c in row_columns for c in group)]
                if missing:
                    wanted = ", ".join(" or ".join(repr(c) for c in group) for group in missing)
                    rows[index].errors.append(f"row has no column {wanted}, which reward {name} reads")
                    rows[index].failed.add(name)
                elif completions[index]:
                    ready.append(index)
            self._score_rows(function, name, ready, prompts, completions, completion_ids, columns, rows, metrics)
        return rows, dict(metrics)

    def _score_rows(self, function: RewardFunction, name: str, indices: list[int], prompts: Sequence[Any],
                    completions: Sequence[Sequence[Any]], completion_ids: Sequence[Sequence[Sequence[int]]],
                    columns: Sequence[dict[str, Any]], rows: list[RowScores],
                    metrics: dict[str, list[float]]) -> None:
        if not indices:
            return
        try:
            values, extras = _call(function, indices, prompts, completions, completion_ids, columns, metrics)
        except Exception as exc:
            if len(indices) == 1:
                problem = str(exc) if isinstance(exc, _RewardOutputError) else f"raised {type(exc).__name__}: {exc}"
                rows[indices[0]].errors.append(f"reward {name} {problem}")
                rows[indices[0]].failed.add(name)
                return
            for index in indices:  # find the row(s) at fault; the others still get scored
                self._score_rows(function, name, [index], prompts, completions, completion_ids, columns, rows, metrics)
            return
        position = 0
        for index in indices:
            count = len(completions[index])
            rows[index].rewards[name] = values[position:position + count]
            for sample, extra in zip(rows[index].extras, extras[position:position + count]):
                sample.update(extra)
            position += count


def _call(function: RewardFunction, indices: list[int], prompts: Sequence[Any], completions: Sequence[Sequence[Any]],
          completion_ids: Sequence[Sequence[Sequence[int]]], columns: Sequence[dict[str, Any]],
          metrics: dict[str, list[float]]) -> tuple[list[float | None], list[dict[str, Any]]]:
    """One TRL-style call over the samples of ``indices`` (flattened row-major)."""
    flat_prompts, flat_completions, flat_ids, owners = [], [], [], []
    for index in indices:
        for completion, ids in zip(completions[index], completion_ids[index]):
            flat_prompts.append(prompts[index])
            flat_completions.append(completion)
            flat_ids.append(list(ids))
            owners.append(index)
    keys = sorted({key for index in indices for key in columns[index]} - NON_COLUMNS - TRAINER_KEYWORDS)
    kwargs = {key: [columns[owner].get(key) for owner in owners] for key in keys}
    extras: list[dict[str, Any]] = [{} for _ in owners]

    def log_extra(column: str, values: Sequence[Any]) -> None:
        if len(values) == len(extras):
            for extra, value in zip(extras, values):
                extra[column] = value

    def log_metric(metric: str, value: float) -> None:
        metrics[metric].append(float(value))

    output = function(prompts=flat_prompts, completions=flat_completions, completion_ids=flat_ids,
                      **kwargs, log_metric=log_metric, log_extra=log_extra)
    return _checked_values(output, len(flat_completions)), extras
