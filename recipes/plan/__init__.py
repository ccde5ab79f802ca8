"""Plan a GRPO run before booking GPUs: memory per GPU and generated tokens per step.

``estimate`` does the arithmetic (:func:`plan_run`); ``precision`` says how many bytes a
trainable parameter really holds; ``inputs`` reads the recipe settings it needs, ``model_params`` counts a model's parameters from its config alone, ``sharding`` reads
the DDP / ZeRO / FSDP layout from an accelerate config. Pure arithmetic: no torch, no GPU.

Example:
    >>> from referee.recipes.plan import degenerate_group_share
    >>> round(degenerate_group_share(0.5, 8), 4)
    0.0078
"""

from .estimate import (
    DEFAULT_PASS_RATES,
    DEFAULT_PROMPT_LENGTH,
    GB,
    LOW_HEADROOM_SHARE,
    VLLM_WEIGHT_BYTES,
    RunPlan,
    degenerate_group_share,
    model_state_bytes,
    plan_run,
)
from .precision import StateBytes, trainable_state_bytes, weight_bytes

__all__ = [
    "DEFAULT_PASS_RATES", "DEFAULT_PROMPT_LENGTH", "GB", "LOW_HEADROOM_SHARE", "VLLM_WEIGHT_BYTES", "RunPlan",
    "StateBytes", "degenerate_group_share", "model_state_bytes", "plan_run", "trainable_state_bytes", "weight_bytes",
]
