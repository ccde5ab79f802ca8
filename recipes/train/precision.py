"""Weights the learning rate cannot move: half-precision weights trained with no fp32 master copy.

A plain ``Trainer`` run on a model loaded in bf16 updates the bf16 weights in place. An Adam
step moves a weight by about the learning rate, and a bf16 weight only changes when the step
is at least half its spacing (2^-9 to 2^-8 of its size): at GRPO's usual learning rate of
1e-6, every weight of magnitude 2^-11 (about 4.9e-4) or more stays exactly where it was, which
is nearly all of a pretrained model. The run then logs rewards and losses as usual and learns next to nothing.
DeepSpeed keeps fp32 master weights and accelerate's FSDP upcasts to fp32, so neither loses
updates; loading the model in float32 with ``bf16: true`` (bf16 compute) does the same, unless
TRL's continuous-batching generation casts the model to bf16 in place before each generation.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable
from typing import Any

HALF_PRECISION_MANTISSA_BITS = {"bfloat16": 8, "float16": 11}  # significand bits, the leading one included
WARN_SHARE = 0.1  # warn when at least this share of the trainable weights cannot move


def lost_update_share(parameters: Iterable[Any], learning_rate: float, as_dtype: str | None = None) -> float:
    """Share of the trainable elements of ``parameters`` that an update of size ``learning_rate``
    leaves unchanged, because it is under half the spacing of their dtype at their value
    (of ``as_dtype`` instead, ``"bfloat16"`` or ``"float16"``, for weights that will be cast to it).

    fp32 weights count as movable (their spacing is 2^-24 of their size).

    Example:
        >>> import torch
        >>> weights = torch.nn.Parameter(torch.tensor([0.02, 1e-5, 0.0, 0.5], dtype=torch.bfloat16))
        >>> lost_update_share([weights], 1e-6), lost_update_share([weights], 1e-2)
        (0.5, 0.0)
    """
    import torch

    lost = total = 0
    for parameter in parameters:
        if not parameter.requires_grad:
            continue
        total += parameter.numel()
        dtype = as_dtype or str(parameter.dtype).removeprefix("torch.")
        bits = HALF_PRECISION_MANTISSA_BITS.get(dtype)
        if bits is None or parameter.numel() == 0:
            continue
        info = torch.finfo(getattr(torch, dtype))
        subnormal_half_spacing = info.tiny * info.eps / 2  # below the smallest normal the spacing is fixed
        for chunk in parameter.detach().reshape(-1).split(1 << 24):
            # |w| = m * 2^e with m in [0.5, 1): the spacing there is 2^(e - bits); half of it is 2^(e - bits - 1).
            _, exponent = torch.frexp(chunk.float().abs())
            half_spacing = torch.exp2((exponent - bits - 1).float()).clamp(min=subnormal_half_spacing)
            lost += int(((chunk != 0) & (half_spacing > learning_rate)).sum())
    return lost / total if total else 0.0


def generation_cast(args: Any) -> str | None:
    """The dtype TRL's continuous-batching generation casts the training model to, in place (it
    does so before each generation when ``bf16`` or ``fp16`` is on); ``None`` when it does not.

    Example:
        >>> from types import SimpleNamespace
        >>> generation_cast(SimpleNamespace(use_transformers_continuous_batching=True, bf16=True, fp16=False))
        'bfloat16'
    """
    if not getattr(args, "use_transformers_continuous_batching", False):
        return None
    if getattr(args, "bf16", False):
        return "bfloat16"
    return "float16" if getattr(args, "fp16", False) else None


def warn_on_lost_updates(trainer: Any) -> str | None:
    """Warn (and return the warning) when a share of ``trainer``'s trainable weights that no
    optimizer step at its learning rate can move is at least ``WARN_SHARE``.

    Example:
        >>> import torch
        >>> from types import SimpleNamespace
        >>> model = torch.nn.Linear(64, 64).to(torch.bfloat16)
        >>> trainer = SimpleNamespace(model=model, args=SimpleNamespace(learning_rate=1e-6),
        ...                           is_deepspeed_enabled=False, is_fsdp_enabled=False)
        >>> import warnings
        >>> with warnings.catch_warnings(record=True):
        ...     print(warn_on_lost_updates(trainer)[:58])
        100% of the trainable weights are bf16 with no fp32 master
    """
    if getattr(trainer, "is_deepspeed_enabled", False) or getattr(trainer, "is_fsdp_enabled", False):
        return None
    learning_rate = trainer.args.learning_rate
    cast = generation_cast(trainer.args)
    share = lost_update_share(trainer.model.parameters(), learning_rate, as_dtype=cast)
    if share < WARN_SHARE:
        return None
    if cast is not None:
        message = (
            f"use_transformers_continuous_batching casts the model to {cast} in place before every generation "
            f"(TRL 1.16), so the fp32 weights are lost: {share:.0%} of the trainable weights will then be too coarse "
            f"for a step of learning_rate={learning_rate:g} and the run will learn next to nothing. Generate with vLLM "
            "or plain transformers (use_transformers_continuous_batching: false), or train under DeepSpeed."
        )
        warnings.warn(message, RuntimeWarning, stacklevel=2)
        return message
    dtype = next((str(p.dtype).removeprefix("torch.") for p in trainer.model.parameters()
                  if p.requires_grad and str(p.dtype).removeprefix("torch.") in HALF_PRECISION_MANTISSA_BITS), "half")
    message = (
        f"{share:.0%} of the trainable weights are {dtype.replace('bfloat16', 'bf16').replace('float16', 'fp16')} "
        f"with no fp32 master copy, and a step of learning_rate={learning_rate:g} is under half their precision: "
        "those weights will never change and the run will learn next to nothing. Load the model in float32 "
        "(dtype: float32; keep bf16: true for bf16 compute), or train under DeepSpeed, which keeps fp32 master weights."
    )
    warnings.warn(message, RuntimeWarning, stacklevel=2)
    return message
