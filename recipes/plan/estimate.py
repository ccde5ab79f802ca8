"""Plan a GRPO run before booking GPUs: memory per GPU and generated tokens per step.

A trainable parameter costs what the run really keeps of it (:mod:`.precision`): 16 bytes
under DeepSpeed's mixed precision, FSDP, LoRA's fp32 adapters or fp32 weights, 8 bytes for
a plain run on bf16 weights (no fp32 master copy); a frozen parameter its loaded size.
GB here is 10^9 bytes. Activations and logits are not estimated: the plan says how much of
the card is left for them, and a short run should confirm it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from .inputs import RecipeSettings
from .model_params import ModelShape, count_lora_parameters, count_parameters, kv_cache_bytes_per_token
from .precision import MIXED_PRECISION, StateBytes, trainable_state_bytes, weight_bytes
from .sampling import degenerate_group_share, histogram_informative_share, sampling_plan
from .sharding import Sharding, sharding_of

GB = 1e9
VLLM_WEIGHT_BYTES = 2  # vLLM serves the weights in bf16
DEFAULT_PROMPT_LENGTH = 512
DEFAULT_PASS_RATES = (0.1, 0.3, 0.5, 0.7, 0.9)
LOW_HEADROOM_SHARE = 0.1  # warn when activations get less than this share of the card


def model_state_bytes(trainable: int, per_param: StateBytes, sharding: Sharding, num_gpus: int) -> tuple[float, float]:
    """(bytes on each GPU, bytes offloaded to each GPU's CPU share) of ``trainable`` parameters'
    model states, ``per_param`` bytes each, under ``sharding`` over ``num_gpus``.

    Example:
        >>> model_state_bytes(7_000_000_000, MIXED_PRECISION, Sharding(), 1)[0] / GB
        112.0
        >>> [b / GB for b in model_state_bytes(7_000_000_000, MIXED_PRECISION, Sharding(stage=3), 8)]
        [14.0, 0.0]
    """
    def shard(nbytes: float, from_stage: int) -> float:
        return nbytes / num_gpus if sharding.stage >= from_stage else nbytes

    weights = shard(per_param.weights * trainable, 3)
    gradients = shard(per_param.gradients * trainable, 2)
    optimizer = shard(per_param.optimizer * trainable, 1)
    offloaded = optimizer * sharding.offload_optimizer + weights * sharding.offload_params
    return weights + gradients + optimizer - offloaded, offloaded


@dataclass(frozen=True)
class RunPlan:
    """A run's planned memory per GPU (GB) and tokens per optimizer step.

    ``total_gb`` is the peak during generation; ``headroom_gb`` what is left of the card for
    activations and logits while training (all of vLLM's share back when it sleeps).
    ``kv_cache_gb`` is None when only a parameter count is known (no architecture).
    ``to_dict()`` gives the stable keys of ``referee plan --json``.

    Example:
        >>> plan = plan_run(RecipeSettings.from_dict({"beta": 0.04, "dtype": "bfloat16"}), params=1_500_000_000)
        >>> plan.bytes_per_trainable_param, plan.model_states_gb, plan.reference_gb, plan.ppo_model_states_gb
        (8, 12.0, 3.0, 30.0)
    """

    params: int
    trainable_params: int
    bytes_per_trainable_param: int
    state_precision: str
    model_states_gb: float
    offloaded_gb: float
    reference_gb: float
    vllm_gb: float
    vllm_weights_gb: float
    kv_cache_gb: float | None
    kv_sequences: int
    sequence_length: int
    total_gb: float
    headroom_gb: float
    gpu_memory_gb: float
    fits: bool
    num_gpus: int
    sharding: str
    generation: str
    prompts_per_step: float
    completions_per_step: float
    tokens_per_step: float
    completion_length: float
    degenerate_share: dict[str, float]
    dynamic_sampling: dict[str, dict[str, float]] | None
    ppo_model_states_gb: float | None
    tool_turns: dict[str, float] | None
    warnings: tuple[str, ...]
    assumed: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        """The plan as JSON-ready data.

        Example:
            >>> plan_run(RecipeSettings.from_dict({}), params=10**9).to_dict()["fits"]
            True
        """
        data = asdict(self)
        data["warnings"], data["assumed"] = list(self.warnings), list(self.assumed)
        return data


def plan_run(
    settings: RecipeSettings,
    *,
    params: int | None = None,
    shape: ModelShape | None = None,
    num_gpus: int = 1,
    sharding: Sharding | None = None,
    gpu_memory_gb: float = 80.0,
    prompt_length: int | None = None,
    expected_length: float | None = None,
    pass_rates: tuple[float, ...] = DEFAULT_PASS_RATES,
    pass_rate_histogram: list[dict[str, Any]] | None = None,
) -> RunPlan:
    """Plan ``settings`` for a model given by its ``shape`` and/or ``params`` (which wins).

    ``num_gpus`` training processes share the run, split as ``sharding`` says (default: the
    recipe's ``deepspeed`` / ``fsdp`` keys); ``prompt_length`` (default: the recipe's
    ``max_prompt_length``, else 512) plus ``max_completion_length`` sizes the KV cache;
    ``expected_length`` replaces ``max_completion_length`` in the token count. With the recipe's
    ``dynamic_sampling``, the expected generation rounds and tokens per step are given for each of
    ``pass_rates`` and for ``pass_rate_histogram`` (a pre-filter or eval report's) when given.

    Example:
        >>> settings = RecipeSettings.from_dict({"per_device_train_batch_size": 16,
        ...     "gradient_accumulation_steps": 32, "num_generations": 8, "max_completion_length": 1000})
        >>> plan = plan_run(settings, params=7_000_000_000)
        >>> plan.prompts_per_step, plan.tokens_per_step, plan.model_states_gb, plan.fits
        (64.0, 512000.0, 112.0, False)
    """
    if params is None and shape is None:
        raise ValueError("the plan needs the model: give its config (--model) or its parameter count (--params).")
    if num_gpus < 1 or gpu_memory_gb <= 0:
        raise ValueError(f"num_gpus={num_gpus} and gpu_memory_gb={gpu_memory_gb} must both be positive.")
    total_params = params if params is not None else count_parameters(shape)  # type: ignore[arg-type]
    sharding = sharding or sharding_of(settings)
    warnings: list[str] = []
    irrelevant = set() if settings.use_peft else {"lora_r"}
    if not settings.use_vllm:
        irrelevant |= {"vllm_mode", "vllm_gpu_memory_utilization"}
    assumed = [key for key in settings.assumed if key not in irrelevant]

    trainable, frozen_bytes = _trainable_and_frozen(settings, total_params, shape)
    per_param = trainable_state_bytes(settings, sharding)
    states, offloaded = model_state_bytes(trainable, per_param, sharding, num_gpus)
    frozen_bytes /= num_gpus if sharding.stage == 3 else 1
    if sharding.offload_params:
        offloaded += frozen_bytes
    else:
        states += frozen_bytes
    reference = 0.0
    if settings.beta > 0 and not settings.use_peft:
        reference = weight_bytes(settings) * total_params / (num_gpus if sharding.stage == 3 else 1)

    steps_per_generation = _steps_per_generation(settings, num_gpus)
    local_sequences = settings.per_device_train_batch_size * steps_per_generation
    if prompt_length is None:
        prompt_length = settings.max_prompt_length
    if prompt_length is None:
        prompt_length = DEFAULT_PROMPT_LENGTH
        assumed.append(f"prompt length {DEFAULT_PROMPT_LENGTH}")
    sequence_length = prompt_length + settings.max_completion_length
    generation = "vllm-" + settings.vllm_mode if settings.use_vllm else "transformers"
    kv_sequences = local_sequences * (num_gpus if generation == "vllm-server" else 1)
    kv_cache = None if shape is None else kv_sequences * sequence_length * kv_cache_bytes_per_token(shape)

    vllm_share = settings.vllm_gpu_memory_utilization * gpu_memory_gb * GB if generation == "vllm-colocate" else 0.0
    vllm_weights = VLLM_WEIGHT_BYTES * total_params if settings.use_vllm else 0.0
    total = states + reference + vllm_share + (kv_cache or 0.0) * (generation == "transformers")
    fits = total <= gpu_memory_gb * GB
    # A sleeping vLLM frees its share while the trainer runs its forward and backward passes.
    asleep = generation == "vllm-colocate" and settings.vllm_enable_sleep_mode
    headroom = gpu_memory_gb * GB - (states + reference if asleep else total)

    completions = settings.per_device_train_batch_size * settings.gradient_accumulation_steps * num_gpus
    completions /= settings.num_iterations
    length = settings.max_completion_length if expected_length is None else expected_length

    if not fits:
        warnings.append(
            f"the plan needs {total / GB:.1f} GB per GPU, more than the {gpu_memory_gb:g} GB card: "
            "use LoRA (use_peft), shard with ZeRO-3 / FSDP over more GPUs, or offload the optimizer."
        )
    elif headroom < LOW_HEADROOM_SHARE * gpu_memory_gb * GB:
        warnings.append(
            f"only {headroom / GB:.1f} GB of the card is left for activations and logits: "
            "measure peak memory on a short run before a long one."
        )
    if not per_param.master_copy and not settings.use_peft:  # LoRA's adapters: the runtime check measures them
        warnings.append(
            "the trainable weights are half precision with no fp32 master copy: an optimizer step under "
            "2^-9 of a weight's size is rounded away (at learning rate 1e-6, nearly every weight of a "
            "pretrained model); load the model in float32 (dtype: float32, bf16: true for bf16 compute) or use DeepSpeed."
        )
    if generation == "vllm-colocate":
        warnings += _vllm_warnings(vllm_share, vllm_weights, kv_cache, kv_sequences)
    if (settings.per_device_train_batch_size * num_gpus * steps_per_generation) % settings.num_generations:
        warnings.append(
            f"the generation batch ({settings.per_device_train_batch_size * num_gpus * steps_per_generation} "
            f"completions) is not a multiple of num_generations={settings.num_generations}: TRL will refuse it."
        )
    tools = None
    if settings.python_tool is not None:
        tools = tool_turn_plan(settings, settings.per_device_train_batch_size * steps_per_generation)
        if settings.max_tool_calling_iterations is None:
            warnings.append("python_tool without max_tool_calling_iterations: TRL generates again after every tool "
                            "turn until the model stops calling or max_completion_length is spent; cap it (e.g. 4).")
    sampling = None
    if settings.dynamic_sampling is not None:
        informative = {f"p={p:g}": 1 - degenerate_group_share(p, settings.num_generations) for p in pass_rates}
        if pass_rate_histogram is not None:
            informative["histogram"] = histogram_informative_share(pass_rate_histogram, settings.num_generations)
        sampling = sampling_plan(informative, groups=max(1, round(completions / settings.num_generations)),
                                 max_rounds=int((settings.dynamic_sampling or {}).get("max_rounds", 3)),
                                 tokens_per_round=completions * length)
    return RunPlan(
        params=total_params,
        trainable_params=trainable,
        bytes_per_trainable_param=per_param.total,
        state_precision=per_param.why,
        model_states_gb=_gb(states),
        offloaded_gb=_gb(offloaded),
        reference_gb=_gb(reference),
        vllm_gb=_gb(vllm_share),
        vllm_weights_gb=_gb(vllm_weights),
        kv_cache_gb=None if kv_cache is None else _gb(kv_cache),
        kv_sequences=kv_sequences,
        sequence_length=sequence_length,
        total_gb=_gb(total),
        headroom_gb=_gb(headroom),
        gpu_memory_gb=gpu_memory_gb,
        fits=fits,
        num_gpus=num_gpus,
        sharding=_describe(sharding),
        generation=generation,
        prompts_per_step=completions / settings.num_generations,
        completions_per_step=completions,
        tokens_per_step=completions * length,
        completion_length=float(length),
        degenerate_share={f"{p:g}": degenerate_group_share(p, settings.num_generations) for p in pass_rates},
        dynamic_sampling=sampling,
        # PPO at the same precision: a policy and a critic trained, a reference and a reward model frozen.
        ppo_model_states_gb=None if settings.use_peft else _gb((2 * per_param.total + 2 * weight_bytes(settings))
                                                                * total_params),
        tool_turns=tools,
        warnings=tuple(warnings),
        assumed=tuple(assumed),
    )


def _trainable_and_frozen(settings: RecipeSettings, params: int, shape: ModelShape | None) -> tuple[int, float]:
    """(trainable parameters, bytes of frozen base weights)."""
    if not settings.use_peft:
        return params, 0.0
    if shape is None:
        raise ValueError("a LoRA plan needs the model's architecture to size the adapters; give --model with a config.")
    adapters = count_lora_parameters(shape, settings.lora_target_modules, settings.lora_r, use_dora=settings.use_dora)
    saved = 0
    for module in settings.lora_modules_to_save or []:
        if module not in ("embed_tokens", "lm_head"):
            raise ValueError(f"lora_modules_to_save names {module!r}; the plan can size only embed_tokens and lm_head.")
        saved += shape.vocab_size * shape.hidden_size
    return adapters + saved, weight_bytes(settings) * params


def tool_turn_plan(settings: RecipeSettings, rollouts: int) -> dict[str, float | None]:
    """Bounds of a step's tool use per process (``rollouts`` completions generated at once): the
    generation rounds (TRL's loop: one, then one per tool turn; ``None`` without
    ``max_tool_calling_iterations``), the cells run, and the longest a process can wait for cells in
    one generation: each rollout's cells run one after another, so with every turn's cells at once
    (``RefereeGRPOTrainer``) that is one rollout's budget of cells at their time limit, and with one
    rollout after another (TRL's ``GRPOTrainer``) every rollout's.

    Example:
        >>> settings = RecipeSettings.from_dict({"python_tool": {"timeout": 5, "max_calls": 8},
        ...                                      "max_tool_calling_iterations": 4})
        >>> tool_turn_plan(settings, 64)
        {'rounds': 5, 'cells': 512, 'concurrent_wait_s': 40.0, 'serial_wait_s': 2560.0}
    """
    from ..train.python_tool_settings import python_tool_settings

    tool = python_tool_settings(settings.python_tool or {})
    iterations = settings.max_tool_calling_iterations
    chain = tool.max_calls * float(tool.limits.timeout)
    return {"rounds": None if iterations is None else 1 + iterations, "cells": rollouts * tool.max_calls,
            "concurrent_wait_s": chain, "serial_wait_s": rollouts * chain}


def _steps_per_generation(settings: RecipeSettings, num_gpus: int) -> int:
    if settings.steps_per_generation is not None:
        return settings.steps_per_generation
    if settings.generation_batch_size is not None:
        return max(1, settings.generation_batch_size // (settings.per_device_train_batch_size * num_gpus))
    return settings.gradient_accumulation_steps


def _vllm_warnings(share: float, weights: float, kv_cache: float | None, sequences: int) -> list[str]:
    if weights >= share:
        return [f"vLLM's share of the card ({share / GB:.1f} GB) cannot hold the model's weights "
                f"({weights / GB:.1f} GB): raise vllm_gpu_memory_utilization."]
    if kv_cache is not None and weights + kv_cache > share:
        return [f"vLLM's share ({share / GB:.1f} GB) holds the weights ({weights / GB:.1f} GB) but not the "
                f"KV cache of all {sequences} sequences at full length ({kv_cache / GB:.1f} GB): it will generate "
                "in several waves; raise vllm_gpu_memory_utilization or shorten max_completion_length."]
    return []


def _describe(sharding: Sharding) -> str:
    if sharding.source == "none":
        return "none (every GPU holds all model states)"
    offload = [name for name, on in (("optimizer", sharding.offload_optimizer), ("weights", sharding.offload_params))
               if on]
    return f"{sharding.source} ZeRO-{sharding.stage}" + (f", {' and '.join(offload)} offloaded to CPU" if offload else "")


def _gb(nbytes: float) -> float:
    return round(nbytes / GB, 3)
