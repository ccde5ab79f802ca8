"""``RefereeGRPOTrainer``: TRL's ``GRPOTrainer`` with the loss aggregation chosen by name.

How a rule is applied without copying TRL's ``_compute_loss``: TRL is run with a base loss
type (``dr_grpo``, whose weight is ``1 / (B x max_completion_length x accumulation steps)``,
or ``grpo`` for per-completion-mean rules) and every completion's advantage is multiplied by
``scale = rule weight / base weight``. Every clipped-surrogate policy loss TRL computes is
positively homogeneous in the advantage (``-min(r A s, clip(r) A s) = -s min(r A, clip(r) A)``
for ``s > 0``), and the importance-sampling correction, off-policy and entropy masks multiply
it, so the policy term comes out weighted by the rule. Signs are kept, so the clip-ratio
metrics are TRL's own.

The KL term is added by TRL after the advantages are used, so it is not scaled by them.
When ``beta > 0`` the trainer multiplies ``beta`` by the scale for the call; that is exact
only when the scale is one number per micro-batch (all built-in rules: ``sequence`` runs on
``grpo`` with scale 1). A rule whose scale differs between completions is refused with
``beta > 0``. The KL metric reads the unscaled KL, so it is TRL's too. One metric follows
the base type's convention: with an entropy bonus TRL logs ``policy_loss`` before dividing by
the accumulation steps for ``grpo``/``dr_grpo`` but after for ``dapo``.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import torch
from trl import GRPOTrainer

from .config import TRL_LOSS_AGGREGATIONS
from .loss import BUILTIN_AGGREGATIONS, Aggregation, AggregationContext, get_aggregation
from .trl_version import check_trl_version


def base_weights(loss_type: str, context: AggregationContext) -> torch.Tensor:
    """The per-token weight TRL 1.16's ``loss_type`` aggregation gives (``dr_grpo`` or ``grpo``).

    Example:
        >>> mask = torch.tensor([[1., 1., 0., 0.], [1., 1., 1., 1.]])
        >>> base_weights("dr_grpo", AggregationContext(mask, 4, 2, torch.tensor(6.))).item()
        0.0625
        >>> base_weights("grpo", AggregationContext(mask, 4, 1, torch.tensor(6.))).flatten().tolist()
        [0.25, 0.125]
    """
    steps = context.accumulation_steps
    if loss_type == "dr_grpo":
        scale = context.batch_size * context.max_completion_length * steps
        return torch.tensor(1.0 / scale, dtype=context.mask.dtype, device=context.mask.device)
    if loss_type == "grpo":
        lengths = context.mask.sum(dim=-1, keepdim=True).clamp(min=1.0)
        return 1.0 / (lengths * context.batch_size * steps)
    raise ValueError(f"No base weights for loss_type {loss_type!r}; use 'dr_grpo' or 'grpo'.")


def advantage_scale(rule: Aggregation, context: AggregationContext, *, check: bool = False) -> torch.Tensor:
    """The factor on each advantage that turns the rule's base aggregation into the rule.

    With ``check=True`` the rule's weights are checked to be finite and positive on loss
    tokens (done for rules that are not built in).

    Example:
        >>> from referee.recipes.train.loss import get_aggregation
        >>> context = AggregationContext(torch.ones(2, 4), 8, 1, torch.tensor(8.))
        >>> advantage_scale(get_aggregation("token"), context).item()
        2.0
        >>> advantage_scale(get_aggregation("sequence"), context).flatten().tolist()
        [1.0, 1.0]
    """
    weights = rule.weights(context)
    if check:
        on_tokens = torch.broadcast_to(weights, context.mask.shape)[context.mask.bool()]
        if not bool(torch.isfinite(on_tokens).all() and (on_tokens > 0).all()):
            raise ValueError(
                f"Loss aggregation {rule.name!r} gave a weight that is not finite and positive on a loss token; "
                "return positive weights (mask tokens out with the completion mask instead)."
            )
    return weights / base_weights(rule.base_loss_type, context)


def kl_scale(rule_name: str, scale: torch.Tensor, mask: torch.Tensor) -> float:
    """The one number ``beta`` must be multiplied by, or ``ValueError`` if the scale differs between loss tokens.

    Example:
        >>> kl_scale("token", torch.tensor(2.0), torch.ones(2, 3))
        2.0
        >>> kl_scale("mine", torch.tensor([[1.0], [3.0]]), torch.ones(2, 3))
        Traceback (most recent call last):
        ...
        ValueError: Loss aggregation 'mine' weighs completions differently, which cannot be exact with the KL term; set beta=0 or register the rule with base_loss_type='grpo' if it is a per-completion mean.
    """
    if scale.dim() == 0:
        return float(scale)
    on_tokens = torch.broadcast_to(scale, mask.shape)[mask.bool()]
    if on_tokens.numel() == 0:
        return 1.0
    if not bool((on_tokens == on_tokens[0]).all()):
        raise ValueError(
            f"Loss aggregation {rule_name!r} weighs completions differently, which cannot be exact with the KL term; "
            "set beta=0 or register the rule with base_loss_type='grpo' if it is a per-completion mean."
        )
    return float(on_tokens[0])


class RefereeGRPOTrainer(GRPOTrainer):
    """``GRPOTrainer`` whose loss aggregation is ``args.loss_aggregation`` (see ``RefereeGRPOConfig``).

    Everything else is TRL's: generation, rewards, advantages, clipping, importance
    sampling, entropy terms and metrics. With ``args.loss_aggregation`` unset (a plain
    ``GRPOConfig``, or a loss type with no matching rule such as ``cispo``) it is exactly
    TRL's trainer. The installed TRL must be the pinned release.

    Example:
        >>> import tempfile
        >>> from datasets import Dataset
        >>> from referee.recipes.train.config import build_grpo_config
        >>> from referee.recipes.common.tiny_model import build_char_tokenizer, build_tiny_model
        >>> tokenizer = build_char_tokenizer()
        >>> args = build_grpo_config(tempfile.mkdtemp(), profile="cpu", loss_aggregation="sequence-sum",
        ...                          per_device_train_batch_size=4, num_generations=4, report_to="none")
        >>> trainer = RefereeGRPOTrainer(
        ...     model=build_tiny_model(tokenizer, hidden_size=32, num_layers=1, intermediate_size=64),
        ...     reward_funcs=lambda completions, **kwargs: [float(len(c)) for c in completions],
        ...     args=args, train_dataset=Dataset.from_dict({"prompt": ["1+1="] * 4}), processing_class=tokenizer)
        >>> trainer.aggregation.name, trainer.loss_type
        ('sequence-sum', 'dr_grpo')
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        check_trl_version()
        super().__init__(*args, **kwargs)
        name = getattr(self.args, "loss_aggregation", None)
        self.aggregation: Aggregation | None = None if name is None else get_aggregation(name)
        if self.aggregation is None:
            return
        if self.args.loss_type not in TRL_LOSS_AGGREGATIONS:
            raise ValueError(
                f"loss_aggregation={name!r} reweights TRL's clipped-surrogate loss, but loss_type="
                f"{self.args.loss_type!r} is not one; use one of {', '.join(TRL_LOSS_AGGREGATIONS)}."
            )
        # `_compute_loss` reads `self.loss_type`; `args.loss_type` keeps what the user wrote.
        self.loss_type = self.aggregation.base_loss_type
        self._check_rule = self.aggregation.name not in BUILTIN_AGGREGATIONS

    def _aggregation_context(self, inputs: dict[str, Any]) -> AggregationContext:
        mask = inputs["completion_mask"]
        if "tool_mask" in inputs:
            mask = mask * inputs["tool_mask"]
        mask = mask.to(inputs["advantages"].dtype)
        window_tokens = inputs["num_items_in_batch"].clamp(min=1.0) / self.accelerator.num_processes
        steps = 1
        if self.model.training:  # evaluation neither splits nor accumulates the batch
            steps = self.current_gradient_accumulation_steps
            window_tokens = window_tokens * steps / self.args.steps_per_generation
        return AggregationContext(mask, self.max_completion_length, steps, window_tokens)

    @contextmanager
    def _beta_scaled(self, factor: float) -> Iterator[None]:
        beta = self.beta
        self.beta = beta * factor
        try:
            yield
        finally:
            self.beta = beta

    def _compute_loss(self, model: Any, inputs: dict[str, Any]) -> torch.Tensor:
        if self.aggregation is None:
            return super()._compute_loss(model, inputs)
        context = self._aggregation_context(inputs)
        scale = advantage_scale(self.aggregation, context, check=self._check_rule)
        advantages = inputs["advantages"]
        if advantages.dim() == 1:
            advantages = advantages.unsqueeze(1)
        # A new dict: with num_iterations > 1 TRL reuses the buffered inputs.
        scaled_inputs = {**inputs, "advantages": advantages * scale.to(advantages.dtype)}
        if self.beta == 0.0:
            return super()._compute_loss(model, scaled_inputs)
        with self._beta_scaled(kl_scale(self.aggregation.name, scale, context.mask)):
            return super()._compute_loss(model, scaled_inputs)
