"""Bytes of model states per trainable parameter, as the run will really hold them.

The seeds' 16 bytes (bf16 weights and gradients, fp32 master weights and two fp32 Adam
moments) is what DeepSpeed's mixed-precision optimizer keeps. A plain ``Trainer`` run on a
model loaded in bf16 keeps no master copy: its AdamW moments take the parameters' dtype, so
a trainable parameter costs 8 bytes. Accelerate's FSDP upcasts the parameters it wraps to
fp32 under mixed precision (16 bytes); PEFT upcasts LoRA adapters to fp32 (16 bytes) unless
TRL keeps them in bf16 (a quantized base: 8 bytes); DeepSpeed casts whatever it trains to
bf16 and keeps fp32 master weights and moments (16 bytes).
"""

from __future__ import annotations

from dataclasses import dataclass

from .inputs import RecipeSettings
from .sharding import Sharding

HALF_DTYPES = ("bfloat16", "float16", "auto")  # "auto": the checkpoint's own dtype, bf16 for current models


@dataclass(frozen=True)
class StateBytes:
    """Bytes per trainable parameter of its weights, gradient and optimizer state, and why.

    Example:
        >>> StateBytes(2, 2, 12, "DeepSpeed mixed precision").total
        16
    """

    weights: int
    gradients: int
    optimizer: int
    why: str

    @property
    def total(self) -> int:
        """All three together."""
        return self.weights + self.gradients + self.optimizer

    @property
    def master_copy(self) -> bool:
        """Whether updates land on fp32 values (fp32 weights, or fp32 master weights in the optimizer).

        Example:
            >>> MIXED_PRECISION.master_copy, HALF.master_copy
            (True, False)
        """
        return self.weights >= 4 or self.optimizer >= 12


MIXED_PRECISION = StateBytes(2, 2, 12, "bf16 weights and gradients, fp32 master weights and AdamW moments")
HALF = StateBytes(2, 2, 4, "bf16 weights, gradients and AdamW moments (no fp32 master copy)")
FULL = StateBytes(4, 4, 8, "fp32 weights, gradients and AdamW moments")


def trainable_state_bytes(settings: RecipeSettings, sharding: Sharding) -> StateBytes:
    """How many bytes each trainable parameter of ``settings``' run holds under ``sharding``.

    Example:
        >>> from referee.recipes.plan.sharding import sharding_of
        >>> def per_param(recipe):
        ...     settings = RecipeSettings.from_dict(recipe)
        ...     return trainable_state_bytes(settings, sharding_of(settings)).total
        >>> per_param({"dtype": "bfloat16"}), per_param({"dtype": "bfloat16", "deepspeed": {"zero_optimization": {"stage": 2}}})
        (8, 16)
        >>> per_param({"dtype": "bfloat16", "use_peft": True}), per_param({"dtype": "bfloat16", "use_peft": True, "load_in_4bit": True})
        (16, 8)
    """
    if sharding.source == "deepspeed":  # DeepSpeed casts the module to bf16 and keeps fp32 master weights
        return MIXED_PRECISION
    if settings.use_peft:
        if settings.load_in_4bit or settings.load_in_8bit:
            return StateBytes(2, 2, 4, "LoRA adapters kept in bf16 by TRL on a quantized base, AdamW moments too")
        return StateBytes(4, 4, 8, "LoRA adapters upcast to fp32 by PEFT, fp32 gradients and AdamW moments")
    if sharding.source == "fsdp":
        return StateBytes(4, 4, 8, "FSDP upcasts the wrapped parameters to fp32 under mixed precision")
    return HALF if settings.dtype in HALF_DTYPES else FULL


def weight_bytes(settings: RecipeSettings) -> float:
    """Bytes of one frozen parameter as the model is loaded (the reference model, LoRA's base).

    Example:
        >>> weight_bytes(RecipeSettings.from_dict({})), weight_bytes(RecipeSettings.from_dict({"load_in_4bit": True}))
        (4.0, 0.5)
    """
    if settings.load_in_4bit:
        return 0.5
    if settings.load_in_8bit:
        return 1.0
    return 2.0 if settings.dtype in HALF_DTYPES else 4.0
