"""Which dataset columns a reward reads, so a trainer can keep them and a recipe can be checked.

TRL passes every dataset column to a reward function by keyword. A reward says which ones it
reads in one of three ways, first match wins:

* a ``columns`` attribute: the names it needs, every one of them (``columns = ("target",)``);
* a ``gold_columns`` attribute (referee's :class:`~referee.rewards.VerifierReward`): it needs
  one of them, tried in order;
* its signature: each keyword parameter without a default is needed, each one with a default
  is read when present (TRL's own arguments, ``prompts``, ``completions``, ``trainer_state``,
  ... are not columns).

A :class:`~referee.rewards.RewardSum` reads what its terms read.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Any

# Keyword arguments TRL 1.16's GRPOTrainer passes to every reward besides the dataset columns.
TRAINER_ARGUMENTS: frozenset[str] = frozenset(
    {"prompts", "completions", "completion_ids", "trainer_state", "log_extra", "log_metric", "environments"})


@dataclass(frozen=True)
class RewardColumns:
    """The columns one reward reads: ``needed`` (each one), ``one_of`` (groups: at least one of
    each), ``optional`` (read when present).

    Example:
        >>> RewardColumns(needed=("target",), optional=("hint",)).names
        ('target', 'hint')
    """

    needed: tuple[str, ...] = ()
    one_of: tuple[tuple[str, ...], ...] = ()
    optional: tuple[str, ...] = ()

    @property
    def names(self) -> tuple[str, ...]:
        """Every column named, in order, without repeats."""
        names = [*self.needed, *(name for group in self.one_of for name in group), *self.optional]
        return tuple(dict.fromkeys(names))

    def missing(self, available: Collection[str]) -> list[str]:
        """The needed columns, and the ``a or b`` groups, that ``available`` lacks.

        Example:
            >>> RewardColumns(needed=("target",), one_of=(("answer", "solution"),)).missing({"answer"})
            ['target']
        """
        lacking = [name for name in self.needed if name not in available]
        return lacking + [" or ".join(group) for group in self.one_of if not any(name in available for name in group)]


def reward_columns(reward: Callable[..., Any]) -> RewardColumns:
    """The columns ``reward`` reads (see the module docstring for how a reward declares them).

    Example:
        >>> def json_answer(completions, target, hint=None, **kwargs):
        ...     return [0.0 for _ in completions]
        >>> reward_columns(json_answer)
        RewardColumns(needed=('target',), one_of=(), optional=('hint',))
        >>> from referee.rewards import get_reward, parse_reward_sum
        >>> reward_columns(get_reward("math_accuracy")).one_of
        (('answer', 'solution'),)
        >>> reward_columns(parse_reward_sum("gsm8k_accuracy + 0.2*think_format")).names
        ('answer',)
    """
    terms = getattr(reward, "terms", None)
    if terms is not None and getattr(reward, "columns", None) is None:
        parts = [reward_columns(term) for term, _ in terms]
        return RewardColumns(_merged(part.needed for part in parts), tuple(dict.fromkeys(g for p in parts for g in p.one_of)),
                             _merged(part.optional for part in parts))
    declared = getattr(reward, "columns", None)
    if isinstance(declared, str):
        return RewardColumns(needed=(declared,))
    if isinstance(declared, (tuple, list)):
        return RewardColumns(needed=tuple(declared))
    gold = getattr(reward, "gold_columns", None)
    if isinstance(gold, (tuple, list)) and gold:
        return RewardColumns(one_of=(tuple(gold),))
    return _signature_columns(reward)


def _merged(groups: Any) -> tuple[str, ...]:
    return tuple(dict.fromkeys(name for group in groups for name in group))


def _signature_columns(reward: Callable[..., Any]) -> RewardColumns:
    try:
        parameters = inspect.signature(reward).parameters.values()
    except (TypeError, ValueError):  # a builtin or C callable without a signature: it reads what it is given
        return RewardColumns()
    keyword = [p for p in parameters if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
               and p.name not in TRAINER_ARGUMENTS]
    return RewardColumns(needed=tuple(p.name for p in keyword if p.default is p.empty),
                         optional=tuple(p.name for p in keyword if p.default is not p.empty))
