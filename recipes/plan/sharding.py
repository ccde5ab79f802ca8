"""How a run splits its model states over GPUs: ZeRO stages, FSDP and CPU offload.

Read from a recipe's ``deepspeed`` / ``fsdp`` / ``fsdp_config`` keys or from the
``accelerate launch --config_file`` YAML (TRL's ``zero2.yaml``, ``fsdp2.yaml``, ...), which
also gives the number of processes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from referee.recipes.plan.inputs import RecipeSettings


@dataclass(frozen=True)
class Sharding:
    """How the model states are split over the GPUs: a ZeRO stage (FSDP mapped onto one)
    and what is offloaded to CPU memory.

    Stage 1 shards the optimizer states, stage 2 also the gradients, stage 3 also the
    weights (and a frozen reference model).

    Example:
        >>> sharding_of(RecipeSettings.from_dict({"fsdp": "full_shard auto_wrap"}))
        Sharding(stage=3, offload_optimizer=False, offload_params=False, source='fsdp')
    """

    stage: int = 0
    offload_optimizer: bool = False
    offload_params: bool = False
    source: str = "none"


def sharding_of(settings: RecipeSettings) -> Sharding:
    """The :class:`Sharding` a recipe's ``deepspeed`` or ``fsdp`` / ``fsdp_config`` keys ask for.

    Example:
        >>> sharding_of(RecipeSettings.from_dict({"deepspeed": {"zero_optimization": {
        ...     "stage": 2, "offload_optimizer": {"device": "cpu"}}}}))
        Sharding(stage=2, offload_optimizer=True, offload_params=False, source='deepspeed')
    """
    if settings.deepspeed:
        return _deepspeed_json_sharding(_load_json_config("deepspeed", settings.deepspeed, settings.base_dir))
    if settings.fsdp:
        options = settings.fsdp.split() if isinstance(settings.fsdp, str) else (
            list(settings.fsdp) if isinstance(settings.fsdp, list) else [])
        config = _load_json_config("fsdp_config", settings.fsdp_config, settings.base_dir) if settings.fsdp_config else {}
        strategies = [option for option in options if option not in ("offload", "auto_wrap")]
        stage = _fsdp_stage(strategies[0] if strategies else config.get("reshard_after_forward", True))
        offload = "offload" in options or _true(config.get("cpu_offload", False))
        return Sharding(stage, offload, offload, "fsdp")
    return Sharding()


@dataclass(frozen=True)
class LaunchConfig:
    """What an ``accelerate launch`` config decides for the plan: sharding and process count.

    Example:
        >>> LaunchConfig(Sharding(stage=3, source="deepspeed"), 8).num_processes
        8
    """

    sharding: Sharding
    num_processes: int


def read_accelerate_config(path: str | Path) -> LaunchConfig:
    """The :class:`LaunchConfig` of an ``accelerate launch --config_file`` YAML (DeepSpeed,
    FSDP 1 or 2, multi-GPU or single-GPU, as TRL ships them).

    Example:
        >>> import tempfile
        >>> from pathlib import Path
        >>> config = Path(tempfile.mkdtemp()) / "zero3.yaml"
        >>> _ = config.write_text("distributed_type: DEEPSPEED\\nnum_processes: 8\\n"
        ...                       "deepspeed_config:\\n  zero_stage: 3\\n  offload_optimizer_device: none\\n")
        >>> read_accelerate_config(config)
        LaunchConfig(sharding=Sharding(stage=3, offload_optimizer=False, offload_params=False, source='deepspeed'), num_processes=8)
    """
    path = Path(path)
    try:
        config = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise ValueError(f"cannot read the accelerate config {str(path)!r} ({exc}); give a readable YAML file.") from None
    if not isinstance(config, dict):
        raise ValueError(f"the accelerate config {str(path)!r} is not a mapping; give an 'accelerate config' YAML file.")
    processes = config.get("num_processes") or 1
    machines = config.get("num_machines") or 1
    if not isinstance(processes, int) or not isinstance(machines, int) or processes < 1 or machines < 1:
        raise ValueError(f"num_processes={processes!r} and num_machines={machines!r} in {str(path)!r} must be "
                         "positive integers.")
    kind = str(config.get("distributed_type", "NO")).upper()
    if kind == "NO":  # accelerate runs one process whatever num_processes says
        processes = machines = 1
    if kind == "DEEPSPEED":
        section = config.get("deepspeed_config") or {}
        if section.get("deepspeed_config_file"):
            sharding = _deepspeed_json_sharding(
                _load_json_config("deepspeed_config_file", section["deepspeed_config_file"], path.parent))
        else:
            sharding = Sharding(_zero_stage(section.get("zero_stage", 0)),
                                section.get("offload_optimizer_device") in ("cpu", "nvme"),
                                section.get("offload_param_device") in ("cpu", "nvme"), "deepspeed")
    elif kind == "FSDP":
        section = config.get("fsdp_config") or {}
        strategy = section.get("fsdp_sharding_strategy", section.get("fsdp_reshard_after_forward", True))
        offload = _true(section.get("fsdp_offload_params", False))
        sharding = Sharding(_fsdp_stage(strategy), offload, offload, "fsdp")
    else:
        sharding = Sharding()
    return LaunchConfig(sharding, processes * machines)


def _deepspeed_json_sharding(config: dict[str, Any]) -> Sharding:
    zero = config.get("zero_optimization", {})
    return Sharding(_zero_stage(zero.get("stage", 0)), _offloaded(zero.get("offload_optimizer")),
                    _offloaded(zero.get("offload_param")), "deepspeed")


def _zero_stage(stage: Any) -> int:
    if stage not in (0, 1, 2, 3):
        raise ValueError(f"the DeepSpeed ZeRO stage={stage!r} is not 0, 1, 2 or 3; set a number there.")
    return int(stage)


def _fsdp_stage(strategy: Any) -> int:
    """ZeRO stage of an FSDP sharding strategy or FSDP2 ``reshard_after_forward`` value."""
    name = str(strategy).lower()
    if name in ("no_shard", "3"):  # FSDP1 also numbers strategies: 1 full, 2 grad/op, 3 none
        return 0
    if name in ("shard_grad_op", "hybrid_shard_zero2", "false", "2", "5"):
        return 2
    return 3


def _true(value: Any) -> bool:
    return value is True or str(value).lower() == "true"


def _offloaded(section: Any) -> bool:
    return isinstance(section, dict) and section.get("device") in ("cpu", "nvme")


def _load_json_config(key: str, value: str | dict[str, Any], base_dir: Path) -> dict[str, Any]:
    """A JSON config given inline (dict or JSON text) or as a path (from the cwd or ``base_dir``)."""
    if isinstance(value, dict):
        return value
    if isinstance(value, str) and value.lstrip().startswith("{"):
        try:
            return json.loads(value)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{key} is not valid JSON ({exc.msg}); fix the inline object.") from None
    for candidate in (Path(value), base_dir / value):
        if candidate.is_file():
            try:
                return json.loads(candidate.read_text(encoding="utf-8"))
            except json.JSONDecodeError as exc:
                raise ValueError(f"{key} file {str(candidate)!r} is not valid JSON ({exc.msg}); fix the file.") from None
    raise ValueError(f"{key}={value!r} is neither a JSON object nor a readable file; give the path of its JSON config.")
