"""Dynamic sampling (DAPO): drop the prompt groups whose chosen reward is constant, refill the batch.

A group whose G rewards are all equal gets zero advantages and no gradient; with per-sample
success p a share ``p^G + (1-p)^G`` of groups is wasted (43% at G=8, p=0.9). This module holds
the pure parts of the remedy (which groups inform, how rows of several generation rounds are
cut and joined into one batch); :class:`~referee.recipes.train.trainer.RefereeGRPOTrainer` runs
the rounds. The signal is one named reward (default: the first correctness reward), never the
weighted sum of shaped rewards, and a ``None`` reward (the verifier's fault) is never a value
that makes a group informative.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import torch

from ..common.mappings import from_mapping

SHORTFALLS = ("keep", "repeat", "skip")
Shortfall = Literal["keep", "repeat", "skip"]

# Batch keys, by how a row of one round is joined to rows of another.
LEFT_PADDED = {"prompt_ids", "prompt_mask"}  # prompts are left-padded
RIGHT_PADDED = {"completion_ids", "completion_mask", "old_per_token_logps", "ref_per_token_logps",
                "sampling_per_token_logps", "tool_mask"}
PER_ROW = {"advantages"}


@dataclass(frozen=True)
class DynamicSampling:
    """The recipe's ``dynamic_sampling:`` block.

    Attributes:
        reward: the reward whose constancy makes a group useless (default: the first reward of
            kind ``correctness``, else the first reward).
        max_rounds: generations per step at most, the first included (default 3).
        on_shortfall: what fills the batch when the rounds run out before it holds enough
            informative groups: ``keep`` (the constant groups of the last rounds, zero advantage,
            as plain GRPO trains), ``repeat`` (the informative groups found, repeated) or ``skip``
            (constant groups with their loss masked: no loss and no tokens in the normaliser).

    Example:
        >>> DynamicSampling.from_dict({"max_rounds": 4, "on_shortfall": "repeat"})
        DynamicSampling(reward=None, max_rounds=4, on_shortfall='repeat')
        >>> DynamicSampling.from_dict({"max_round": 4})
        Traceback (most recent call last):
        ...
        ValueError: dynamic_sampling has no key 'max_round'; did you mean 'max_rounds'? Its keys: reward, max_rounds, on_shortfall.
    """

    reward: str | None = None
    max_rounds: int = 3
    on_shortfall: Shortfall = "keep"

    def __post_init__(self) -> None:
        if not isinstance(self.max_rounds, int) or isinstance(self.max_rounds, bool) or self.max_rounds < 1:
            raise ValueError(f"dynamic_sampling.max_rounds is {self.max_rounds!r}; it must be a whole number >= 1.")
        if self.on_shortfall not in SHORTFALLS:
            raise ValueError(f"dynamic_sampling.on_shortfall is {self.on_shortfall!r}; choose one of "
                             f"{', '.join(SHORTFALLS)}.")
        if self.reward is not None and (not isinstance(self.reward, str) or not self.reward):
            raise ValueError(f"dynamic_sampling.reward is {self.reward!r}; name one of the recipe's rewards.")

    @classmethod
    def from_dict(cls, values: Any) -> DynamicSampling:
        """The settings of a ``dynamic_sampling:`` mapping (``true`` for the defaults), unknown keys refused."""
        return cls() if values is True else from_mapping(cls, values, "dynamic_sampling")


@dataclass(frozen=True)
class GroupKinds:
    """What each group of one round is: informative, or dropped as all right, all wrong, other constant, unscored.

    Example:
        >>> kinds = classify_groups(torch.tensor([1., 0., 1., 1., 0., 0., 0.5, 0.5, float("nan"), float("nan")]), 2)
        >>> kinds.informative.tolist(), kinds.all_correct, kinds.all_wrong, kinds.other_constant, kinds.unscored
        ([True, False, False, False, False], 1, 1, 1, 1)
    """

    informative: torch.Tensor  # (groups,) bool
    all_correct: int
    all_wrong: int
    other_constant: int
    unscored: int


def classify_groups(values: torch.Tensor, group_size: int, *, high: float = 1.0, low: float = 0.0) -> GroupKinds:
    """Which groups of ``values`` (one reward per completion, NaN for ``None``, groups of
    ``group_size`` in order) inform the gradient: those with two different scored values. A
    group that is constant at ``high`` is all right, at ``low`` all wrong; a group with at most
    one scored value is unscored (a ``None`` never makes a group informative).
    """
    if values.numel() % group_size:
        raise ValueError(f"{values.numel()} rewards do not split into groups of {group_size}.")
    grouped = values.detach().float().view(-1, group_size)
    scored = ~torch.isnan(grouped)
    filled_high = torch.where(scored, grouped, torch.full_like(grouped, -torch.inf)).max(dim=1).values
    filled_low = torch.where(scored, grouped, torch.full_like(grouped, torch.inf)).min(dim=1).values
    counts = scored.sum(dim=1)
    informative = (counts >= 2) & (filled_high > filled_low)
    constant = (counts >= 2) & ~informative
    all_correct = int((constant & (filled_low >= high)).sum())
    all_wrong = int((constant & (filled_high <= low)).sum())
    unscored = int((counts < 2).sum())
    return GroupKinds(informative, all_correct, all_wrong, int(constant.sum()) - all_correct - all_wrong, unscored)


def split_groups_problem(generation_batch_size: int, num_processes: int, num_generations: int) -> str | None:
    """Why dynamic sampling cannot keep whole groups on each process (one line), or ``None``.

    Example:
        >>> split_groups_problem(16, 2, 4) is None
        True
        >>> split_groups_problem(12, 2, 4)
        'dynamic sampling keeps whole groups on each process, but a process generates 6 completions per step, not a multiple of num_generations=4; make per_device_train_batch_size x steps_per_generation a multiple of num_generations.'
    """
    local = generation_batch_size // num_processes
    if local % num_generations == 0:
        return None
    return (f"dynamic sampling keeps whole groups on each process, but a process generates {local} completions "
            f"per step, not a multiple of num_generations={num_generations}; make "
            "per_device_train_batch_size x steps_per_generation a multiple of num_generations.")


def group_rows(groups: list[int], group_size: int) -> list[int]:
    """The row positions of ``groups`` (each ``group_size`` rows, in order).

    Example:
        >>> group_rows([0, 2], 3)
        [0, 1, 2, 6, 7, 8]
    """
    return [group * group_size + offset for group in groups for offset in range(group_size)]


def _pad(tensor: torch.Tensor, width: int, value: float, left: bool) -> torch.Tensor:
    missing = width - tensor.size(1)
    if missing <= 0:
        return tensor
    filler = torch.full((tensor.size(0), missing), value, dtype=tensor.dtype, device=tensor.device)
    return torch.cat([filler, tensor] if left else [tensor, filler], dim=1)


def join_rows(parts: list[tuple[dict[str, Any], list[int]]], pad_token_id: int) -> dict[str, Any]:
    """One batch of the rows ``parts`` name (each a generation round's batch and row positions),
    prompts left-padded and completions right-padded to the widest, ``num_items_in_batch`` left
    for the caller (it counts tokens on every process).

    Example:
        >>> first = {"prompt_ids": torch.tensor([[5, 6], [5, 7]]), "prompt_mask": torch.ones(2, 2, dtype=torch.long),
        ...          "completion_ids": torch.tensor([[8], [9]]), "completion_mask": torch.ones(2, 1, dtype=torch.long),
        ...          "advantages": torch.tensor([1., -1.]), "num_items_in_batch": torch.tensor(2)}
        >>> second = {"prompt_ids": torch.tensor([[4]]), "prompt_mask": torch.ones(1, 1, dtype=torch.long),
        ...           "completion_ids": torch.tensor([[3, 2]]), "completion_mask": torch.ones(1, 2, dtype=torch.long),
        ...           "advantages": torch.tensor([0.5]), "num_items_in_batch": torch.tensor(2)}
        >>> batch = join_rows([(first, [1]), (second, [0])], pad_token_id=0)
        >>> batch["prompt_ids"].tolist(), batch["completion_mask"].tolist(), batch["advantages"].tolist()
        ([[5, 7], [0, 4]], [[1, 0], [1, 1]], [-1.0, 0.5])
    """
    keys = set(parts[0][0])
    unknown = sorted(keys - LEFT_PADDED - RIGHT_PADDED - PER_ROW - {"num_items_in_batch", "importance_sampling_ratio"})
    if unknown:
        raise ValueError(f"dynamic sampling cannot join batches holding {', '.join(unknown)} (multimodal or tool "
                         "inputs); turn dynamic_sampling off for this run.")
    joined: dict[str, Any] = {}
    for key in sorted(keys - {"num_items_in_batch"}):
        pieces = [batch[key][rows] for batch, rows in parts if rows]
        if key in PER_ROW or (key == "importance_sampling_ratio" and pieces[0].size(1) == 1):
            joined[key] = torch.cat(pieces, dim=0)
            continue
        left = key in LEFT_PADDED
        value = pad_token_id if key in ("prompt_ids", "completion_ids") else (1 if key == "tool_mask" else 0)
        width = max(piece.size(1) for piece in pieces)
        joined[key] = torch.cat([_pad(piece, width, value, left) for piece in pieces], dim=0)
    return joined
