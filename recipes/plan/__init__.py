"""Plan a GRPO run before booking GPUs: memory per GPU and generated tokens per step.

``estimate`` does the arithmetic (:func:`plan_run`); ``inputs`` reads the recipe settings it
needs, ``model_params`` counts a model's parameters from its config alone, ``sharding`` reads
the DDP / ZeRO / FSDP layout from an accelerate config. Pure arithmetic: no torch, no GPU.

Example:
    >>> from referee.recipes.plan import degenerate_group_share
    >>> round(degenerate_group_share(0.5, 8), 4)
    0.0078
"""

from .estimate import (
    DEFAULT_PASS_RATES,
    DEFAULT_PROMPT_LENGTH,
    FROZEN_BYTES,
    GB,
    GRADIENT_BYTES,
    LOW_HEADROOM_SHARE,
    OPTIMIZER_BYTES,
    WEIGHT_BYTES,
    RunPlan,
    degenerate_group_share,
    model_state_bytes,
    plan_run,
)

__all__ = [
    "DEFAULT_PASS_RATES", "DEFAULT_PROMPT_LENGTH", "FROZEN_BYTES", "GB", "GRADIENT_BYTES", "LOW_HEADROOM_SHARE",
    "OPTIMIZER_BYTES", "WEIGHT_BYTES", "RunPlan", "degenerate_group_share", "model_state_bytes", "plan_run",
]
