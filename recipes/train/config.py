"""``RefereeGRPOConfig`` (TRL's ``GRPOConfig`` plus ``loss_aggregation``) and the pinned defaults.

``build_grpo_config`` writes out every choice the seeds recommend instead of trusting TRL's
defaults, which change between releases: vLLM colocate, token-level loss, no KL term,
group-scaled rewards, masked truncated completions, DAPO clip-higher, G=8, one pass per
batch, temperature 1. ``profile="cpu"`` swaps in what works without a GPU.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from ..errors import RecipeError
from .checkpointing import CheckpointingConfig
from .loss import BUILTIN_AGGREGATIONS, get_aggregation
from .trl_version import check_trl_version

# TRL loss types whose policy term is the clipped surrogate; they differ only in aggregation,
# which `loss_aggregation` names (None for TRL's own, when no built-in rule matches it).
TRL_LOSS_AGGREGATIONS: dict[str, str] = {
    "dapo": "token",
    "bnpo": "token-local",
    "grpo": "sequence",
    "dr_grpo": "constant",
    "luspo": "sequence-sum",
}

PINNED_DEFAULTS: dict[str, Any] = {
    "use_vllm": True,
    "vllm_mode": "colocate",
    "bf16": True,
    "loss_type": "dapo",
    "beta": 0.0,
    "use_bias_correction_kl": True,
    "scale_rewards": "group",
    "mask_truncated_completions": True,
    "epsilon": 0.2,
    "epsilon_high": 0.28,
    "num_generations": 8,
    "num_iterations": 1,
    "temperature": 1.0,
}

# What TRL 1.16 needs on a CPU (measured: docs/cpu_training.md): bf16 is about 8x slower there
# and activation checkpointing costs a third more time for nothing on small models.
CPU_PROFILE: dict[str, Any] = {
    "use_cpu": True,
    "bf16": False,
    "activation_checkpointing": False,
    "use_vllm": False,
}


@dataclass
class RefereeGRPOConfig(CheckpointingConfig):  # TRL's GRPOConfig (activation_checkpointing on any transformers)
    """TRL's ``GRPOConfig`` with ``loss_aggregation``, ``dynamic_sampling`` and ``curriculum``.

    ``loss_aggregation`` names how per-token losses are aggregated (``token``,
    ``token-local``, ``sequence``, ``constant``, ``sequence-sum``, a rule registered with
    ``referee.recipes.train.loss.register_aggregation`` or ``"package.module:function"``); it is
    applied by ``RefereeGRPOTrainer``. Left unset it follows ``loss_type`` (``dapo`` ->
    ``token``, ``grpo`` -> ``sequence``, ...), so TRL configs keep their meaning. When set,
    it decides the aggregation and ``loss_type`` only has to be one of the clipped-surrogate
    types (``dapo``, ``bnpo``, ``grpo``, ``dr_grpo``, ``luspo``), which share the policy term.
    ``dynamic_sampling`` (a mapping, see ``referee.recipes.train.dynamic_sampling.DynamicSampling``)
    has the trainer drop groups whose chosen reward is constant and generate more; ``curriculum`` (see
    ``referee.recipes.train.curriculum.CurriculumSettings``) draws each step's prompts by pass rate.

    Example:
        >>> RefereeGRPOConfig(output_dir="/tmp/out", loss_type="grpo", use_cpu=True, bf16=False).loss_aggregation
        'sequence'
        >>> RefereeGRPOConfig(output_dir="/tmp/out", loss_aggregation="sequence-sum", use_cpu=True,
        ...                   bf16=False).loss_aggregation
        'sequence-sum'
    """

    loss_aggregation: str | None = field(
        default=None,
        metadata={
            "help": "How per-token losses are aggregated: "
            + ", ".join(BUILTIN_AGGREGATIONS)
            + ", a registered rule or 'package.module:function'. Default: the aggregation of `loss_type`."
        },
    )

    dynamic_sampling: dict[str, Any] | None = field(
        default=None,
        metadata={
            "help": "Dynamic sampling (DAPO): drop prompt groups whose chosen reward is constant and generate more "
            "until the batch is full. YAML mapping: reward (default: the first correctness reward), max_rounds "
            "(default 3), on_shortfall (keep, repeat or skip; default keep)."
        },
    )

    curriculum: dict[str, Any] | None = field(
        default=None,
        metadata={
            "help": "A pass-rate curriculum: draw each step's prompts from a Beta posterior of their pass rates. YAML "
            "mapping: sampler (sweep, band, learnability or thompson), seed_from (a prefilter or eval all.jsonl), "
            "state (a file to keep it in), band, prior, half_life (steps after which a verdict weighs half), "
            "retire_after (sweep: constant groups in a row that retire a prompt)."
        },
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        from .curriculum import CurriculumSettings
        from .dynamic_sampling import DynamicSampling

        for value, settings in ((self.dynamic_sampling, DynamicSampling), (self.curriculum, CurriculumSettings)):
            if value is None:
                continue
            try:
                settings.from_dict(value)
            except (TypeError, ValueError) as exc:
                raise RecipeError(str(exc)) from exc
        if self.loss_aggregation is None:
            self.loss_aggregation = TRL_LOSS_AGGREGATIONS.get(self.loss_type)
            return
        if self.loss_type not in TRL_LOSS_AGGREGATIONS:
            raise RecipeError(
                f"loss_aggregation={self.loss_aggregation!r} reweights TRL's clipped-surrogate loss, but "
                f"loss_type={self.loss_type!r} is not one; set loss_type to one of {', '.join(TRL_LOSS_AGGREGATIONS)} "
                "or leave loss_aggregation unset."
            )
        get_aggregation(self.loss_aggregation)


def build_grpo_config(
    output_dir: str, *, profile: Literal["gpu", "cpu"] = "gpu", **overrides: Any
) -> RefereeGRPOConfig:
    """A ``RefereeGRPOConfig`` with the pinned defaults, the profile's settings, then ``overrides``.

    Checks first that the installed TRL is the pinned release.

    Example:
        >>> config = build_grpo_config("/tmp/run", profile="cpu", learning_rate=2e-4)
        >>> config.loss_type, config.loss_aggregation, config.beta, config.epsilon_high, config.use_vllm
        ('dapo', 'token', 0.0, 0.28, False)
        >>> build_grpo_config("/tmp/run", profile="cpu", lora_r=8)
        Traceback (most recent call last):
        ...
        referee.recipes.errors.RecipeError: Unknown GRPO config field(s) lora_r; check the spelling against GRPOConfig.
    """
    check_trl_version()
    if profile not in ("gpu", "cpu"):
        raise RecipeError(f"Unknown profile {profile!r}; use 'gpu' or 'cpu'.")
    settings = {**PINNED_DEFAULTS, **(CPU_PROFILE if profile == "cpu" else {}), **overrides}
    known = RefereeGRPOConfig.__dataclass_fields__
    unknown = sorted(key for key in settings if key not in known)
    if unknown:
        raise RecipeError(f"Unknown GRPO config field(s) {', '.join(unknown)}; check the spelling against GRPOConfig.")
    return RefereeGRPOConfig(output_dir=output_dir, **settings)
