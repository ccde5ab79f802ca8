"""Loss aggregation: how GRPO's per-token losses become the one number that is minimised.

A rule gives every loss token of a micro-batch a weight; the micro-batch's loss is
``sum(weight * mask * per_token_loss)`` and the optimizer step sums the micro-batches of one
accumulation window (and data-parallel training averages the processes). The built-in rules:

==============  ===================================================  =======================
name            loss of one optimizer step                           known as
==============  ===================================================  =======================
token           sum of all token losses / all loss tokens            DAPO, TRL ``dapo``
token-local     mean over micro-batches of their token mean          TRL ``bnpo``
sequence        mean over completions of their token mean            GRPO, TRL ``grpo``
constant        sum of all token losses / (completions x max length)  Dr. GRPO, TRL ``dr_grpo``
sequence-sum    mean over completions of their token sum             verl ``seq-mean-token-sum``
==============  ===================================================  =======================

"Completions" counts every completion of the batch, masked ones (truncated, with
``mask_truncated_completions``) included: they add zero to the sum but still count in the
mean, as in TRL and verl. ``token`` counts the tokens of the whole generation batch the way
TRL's ``dapo`` does (exactly one accumulation window when ``steps_per_generation`` equals
``gradient_accumulation_steps``, the default).

A rule of your own is a function of an :class:`AggregationContext` registered by name with
:func:`register_aggregation` (or named in a recipe as ``"package.module:function"``).
This module is pure torch; ``referee.recipes.train.trainer`` applies a rule inside TRL.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from ..errors import RecipeError

if TYPE_CHECKING:
    import torch

BaseLossType = Literal["dr_grpo", "grpo"]


@dataclass(frozen=True)
class AggregationContext:
    """What a weighting rule may read about one micro-batch.

    ``mask`` is the ``(B, T)`` loss mask as floats (1 for a completion token in the loss);
    ``accumulation_steps`` the micro-batches of this optimizer step (1 in evaluation);
    ``window_tokens`` the loss tokens of one accumulation window on this process (a 0-d
    tensor: TRL's ``num_items_in_batch`` / processes x accumulation steps / steps per
    generation).

    Example:
        >>> import torch
        >>> context = AggregationContext(torch.tensor([[1., 1., 0.], [1., 0., 0.]]), 3, 1, torch.tensor(3.))
        >>> context.batch_size
        2
    """

    mask: torch.Tensor
    max_completion_length: int
    accumulation_steps: int
    window_tokens: torch.Tensor

    @property
    def batch_size(self) -> int:
        """Completions in this micro-batch."""
        return self.mask.size(0)


Weights = Callable[[AggregationContext], "torch.Tensor"]


@dataclass(frozen=True)
class Aggregation:
    """A named weighting rule and the TRL loss type it runs on.

    ``weights(context)`` returns per-token loss weights broadcastable to ``(B, T)``: a 0-d
    tensor (one weight for the whole micro-batch), ``(B, 1)`` (one per completion) or
    ``(B, T)``; they must be positive on loss tokens. ``base_loss_type`` is the TRL
    aggregation the rule is expressed against (see ``referee.recipes.train.trainer``): with a KL
    term (``beta > 0``) a rule is exact only when its weights divided by the base's are one
    number per micro-batch, so per-completion-mean rules use ``"grpo"``.

    Example:
        >>> import torch
        >>> rule = get_aggregation("sequence-sum")
        >>> context = AggregationContext(torch.ones(4, 8), 8, 2, torch.tensor(32.))
        >>> rule.weights(context).item(), rule.base_loss_type
        (0.125, 'dr_grpo')
    """

    name: str
    weights: Weights
    base_loss_type: BaseLossType = "dr_grpo"


def token_weights(context: AggregationContext) -> torch.Tensor:
    """Every loss token of the accumulation window weighs the same (DAPO).

    Example:
        >>> import torch
        >>> token_weights(AggregationContext(torch.ones(2, 4), 4, 2, torch.tensor(16.))).item()
        0.0625
    """
    return 1.0 / context.window_tokens.clamp(min=1.0)


def token_local_weights(context: AggregationContext) -> torch.Tensor:
    """Each micro-batch's token mean, averaged over the micro-batches.

    Example:
        >>> import torch
        >>> token_local_weights(AggregationContext(torch.ones(2, 4), 4, 2, torch.tensor(16.))).item()
        0.0625
    """
    return 1.0 / (context.mask.sum().clamp(min=1.0) * context.accumulation_steps)


def sequence_weights(context: AggregationContext) -> torch.Tensor:
    """Each completion's token mean, averaged over the completions (original GRPO).

    Example:
        >>> import torch
        >>> mask = torch.tensor([[1., 1., 1., 1.], [1., 0., 0., 0.]])
        >>> sequence_weights(AggregationContext(mask, 4, 1, torch.tensor(5.))).flatten().tolist()
        [0.125, 0.5]
    """
    lengths = context.mask.sum(dim=-1, keepdim=True).clamp(min=1.0)
    return 1.0 / (lengths * context.batch_size * context.accumulation_steps)


def constant_weights(context: AggregationContext) -> torch.Tensor:
    """Sum of token losses over (completions x max completion length) (Dr. GRPO).

    Example:
        >>> import torch
        >>> constant_weights(AggregationContext(torch.ones(2, 4), 8, 1, torch.tensor(8.))).item()
        0.0625
    """
    import torch

    scale = context.batch_size * context.max_completion_length * context.accumulation_steps
    return torch.tensor(1.0 / scale, dtype=context.mask.dtype, device=context.mask.device)


def sequence_sum_weights(context: AggregationContext) -> torch.Tensor:
    """Each completion's token sum, averaged over the completions (verl ``seq-mean-token-sum``).

    Example:
        >>> import torch
        >>> sequence_sum_weights(AggregationContext(torch.ones(4, 3), 3, 1, torch.tensor(12.))).item()
        0.25
    """
    import torch

    scale = context.batch_size * context.accumulation_steps
    return torch.tensor(1.0 / scale, dtype=context.mask.dtype, device=context.mask.device)


_AGGREGATIONS: dict[str, Aggregation] = {
    rule.name: rule
    for rule in (
        Aggregation("token", token_weights),
        Aggregation("token-local", token_local_weights),
        Aggregation("sequence", sequence_weights, base_loss_type="grpo"),
        Aggregation("constant", constant_weights),
        Aggregation("sequence-sum", sequence_sum_weights),
    )
}

BUILTIN_AGGREGATIONS: tuple[str, ...] = tuple(_AGGREGATIONS)


def register_aggregation(name: str, weights: Weights, *, base_loss_type: BaseLossType = "dr_grpo") -> Aggregation:
    """Register a weighting rule under ``name`` so configs can set ``loss_aggregation: name``.

    Re-registering a name of your own replaces it; the built-in names cannot be replaced.

    Example:
        >>> import torch
        >>> def sqrt_length(context):
        ...     lengths = context.mask.sum(-1, keepdim=True).clamp(min=1.0)
        ...     return 1.0 / (lengths.sqrt() * context.batch_size * context.accumulation_steps)
        >>> register_aggregation("sqrt-length", sqrt_length).name
        'sqrt-length'
        >>> "sqrt-length" in aggregation_names()
        True
    """
    if name in BUILTIN_AGGREGATIONS:
        raise ValueError(f"Loss aggregation {name!r} is built in; register your rule under another name.")
    if base_loss_type not in ("dr_grpo", "grpo"):
        raise ValueError(f"base_loss_type {base_loss_type!r} is not supported; use 'dr_grpo' or 'grpo'.")
    if not callable(weights):
        raise ValueError(f"The weights of loss aggregation {name!r} must be a function of an AggregationContext.")
    rule = Aggregation(name, weights, base_loss_type)
    _AGGREGATIONS[name] = rule
    return rule


def aggregation_names() -> tuple[str, ...]:
    """The names ``loss_aggregation`` accepts now: the built-ins, then registered rules.

    Example:
        >>> aggregation_names()[:5]
        ('token', 'token-local', 'sequence', 'constant', 'sequence-sum')
    """
    return tuple(_AGGREGATIONS)


def get_aggregation(name: str) -> Aggregation:
    """The rule registered as ``name``, or imported from ``"package.module:attribute"``.

    An imported attribute may be an :class:`Aggregation` or a weights function (run on the
    ``dr_grpo`` base); importing registers it under the spec, so a recipe can name a rule
    that lives in the user's own module.

    Example:
        >>> get_aggregation("sequence").base_loss_type
        'grpo'
        >>> get_aggregation("referee.recipes.train.loss:token_weights").weights is token_weights
        True
    """
    if name in _AGGREGATIONS:
        return _AGGREGATIONS[name]
    module_name, sep, attribute = name.partition(":")
    if not sep:
        raise RecipeError(
            f"Unknown loss aggregation {name!r}; choose one of {', '.join(_AGGREGATIONS)} "
            "or name your own as 'package.module:function'."
        )
    try:
        target = getattr(importlib.import_module(module_name), attribute)
    except (ImportError, AttributeError) as exc:
        raise RecipeError(f"Cannot load loss aggregation {name!r} ({exc}); check the module and function name.") from None
    if isinstance(target, Aggregation):
        _AGGREGATIONS[name] = Aggregation(name, target.weights, target.base_loss_type)
        return _AGGREGATIONS[name]
    return register_aggregation(name, target)
