"""Parameter counts of decoder-only transformers from their ``config.json``, without loading them.

Covers the Llama layout that Llama, Mistral, Qwen2, Qwen3 and Gemma share: token
embeddings, attention with grouped key/value heads, a gated MLP, two norms per layer, a
final norm and a tied or untied output head. Also counts LoRA adapters and the KV cache per
token, which ``referee plan`` needs.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..common.sources import hub_unreachable
from .known_models import known_config


@dataclass(frozen=True)
class _Architecture:
    """What a model family fixes; ``None`` biases follow ``config["attention_bias"]``."""

    qkv_bias: bool | None = None
    o_bias: bool | None = None
    qk_norm: bool = False
    tie_default: bool = False  # the config class's default when config.json omits it
    head_dim_default: int | None = None  # None: hidden_size // num_attention_heads


_ARCHITECTURES: dict[str, _Architecture] = {
    "llama": _Architecture(),
    "mistral": _Architecture(qkv_bias=False, o_bias=False),
    "qwen2": _Architecture(qkv_bias=True, o_bias=False),
    "qwen3": _Architecture(qk_norm=True, head_dim_default=128),
    "gemma": _Architecture(tie_default=True, head_dim_default=256),
}
SUPPORTED_MODEL_TYPES: tuple[str, ...] = tuple(_ARCHITECTURES)
_MOE_KEYS = ("num_experts", "num_local_experts", "n_routed_experts")
ATTENTION_MODULES: tuple[str, ...] = ("q_proj", "k_proj", "v_proj", "o_proj")
MLP_MODULES: tuple[str, ...] = ("gate_proj", "up_proj", "down_proj")


@dataclass(frozen=True)
class ModelShape:
    """The sizes that decide a decoder-only transformer's parameter count and KV cache.

    Example:
        >>> shape = ModelShape(vocab_size=100, hidden_size=8, num_layers=2, num_heads=2,
        ...                    num_kv_heads=1, head_dim=4, intermediate_size=16)
        >>> shape.kv_dim
        4
    """

    vocab_size: int
    hidden_size: int
    num_layers: int
    num_heads: int
    num_kv_heads: int
    head_dim: int
    intermediate_size: int
    tie_embeddings: bool = True
    qkv_bias: bool = False
    o_bias: bool = False
    mlp_bias: bool = False
    qk_norm: bool = False
    model_type: str = "llama"

    @property
    def q_dim(self) -> int:
        """Width of the query projection (heads x head size)."""
        return self.num_heads * self.head_dim

    @property
    def kv_dim(self) -> int:
        """Width of the key and of the value projection (KV heads x head size)."""
        return self.num_kv_heads * self.head_dim


def model_shape(config: dict[str, Any]) -> ModelShape:
    """The :class:`ModelShape` of a transformers ``config.json`` (as a dict).

    Keys the file leaves out take the defaults of that model type's config class.

    Example:
        >>> shape = model_shape({"model_type": "qwen2", "vocab_size": 151936, "hidden_size": 1536,
        ...     "num_hidden_layers": 28, "num_attention_heads": 12, "num_key_value_heads": 2,
        ...     "intermediate_size": 8960, "tie_word_embeddings": True})
        >>> shape.kv_dim, shape.head_dim, shape.qkv_bias, shape.tie_embeddings
        (256, 128, True, True)
    """
    model_type = config.get("model_type")
    if model_type not in _ARCHITECTURES:
        raise ValueError(
            f"model_type {model_type!r} is not one whose parameters referee can count "
            f"(it counts {', '.join(SUPPORTED_MODEL_TYPES)}); pass the parameter count with --params N."
        )
    moe = [key for key in _MOE_KEYS if config.get(key)]
    if moe:
        raise ValueError(
            f"this {model_type} config has mixture-of-experts layers ({moe[0]}={config[moe[0]]}), "
            "which referee does not count; pass the parameter count with --params N."
        )
    missing = [key for key in ("vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads",
                               "intermediate_size") if not isinstance(config.get(key), int)]
    if missing:
        raise ValueError(f"the model config has no integer {missing[0]!r}; give a complete config.json or --params N.")
    family = _ARCHITECTURES[model_type]
    num_heads = config["num_attention_heads"]
    attention_bias = bool(config.get("attention_bias", False))
    tie = config.get("tie_word_embeddings")
    return ModelShape(
        vocab_size=config["vocab_size"],
        hidden_size=config["hidden_size"],
        num_layers=config["num_hidden_layers"],
        num_heads=num_heads,
        num_kv_heads=config.get("num_key_value_heads") or num_heads,
        head_dim=config.get("head_dim") or family.head_dim_default or config["hidden_size"] // num_heads,
        intermediate_size=config["intermediate_size"],
        tie_embeddings=family.tie_default if tie is None else bool(tie),
        qkv_bias=attention_bias if family.qkv_bias is None else family.qkv_bias,
        o_bias=attention_bias if family.o_bias is None else family.o_bias,
        mlp_bias=bool(config.get("mlp_bias", False)),
        qk_norm=family.qk_norm,
        model_type=model_type,
    )


def linear_layers(shape: ModelShape) -> dict[str, tuple[int, int]]:
    """``{module name: (in features, out features)}`` of one layer's linear projections.

    Example:
        >>> qwen_1_5b = ModelShape(vocab_size=151936, hidden_size=1536, num_layers=28, num_heads=12,
        ...                    num_kv_heads=2, head_dim=128, intermediate_size=8960, qkv_bias=True)
        >>> linear_layers(qwen_1_5b)["k_proj"]
        (1536, 256)
    """
    h, i = shape.hidden_size, shape.intermediate_size
    return {
        "q_proj": (h, shape.q_dim), "k_proj": (h, shape.kv_dim), "v_proj": (h, shape.kv_dim),
        "o_proj": (shape.q_dim, h), "gate_proj": (h, i), "up_proj": (h, i), "down_proj": (i, h),
    }


def count_parameters(shape: ModelShape) -> int:
    """Every parameter of the model: embeddings, layers, final norm and (if untied) the head.

    Example:
        >>> qwen_1_5b = ModelShape(vocab_size=151936, hidden_size=1536, num_layers=28, num_heads=12,
        ...                    num_kv_heads=2, head_dim=128, intermediate_size=8960, qkv_bias=True)
        >>> count_parameters(qwen_1_5b)
        1543714304
    """
    h = shape.hidden_size
    linear = sum(n_in * n_out for n_in, n_out in linear_layers(shape).values())
    biases = (shape.q_dim + 2 * shape.kv_dim) * shape.qkv_bias + h * shape.o_bias
    biases += (2 * shape.intermediate_size + h) * shape.mlp_bias
    norms = 2 * h + 2 * shape.head_dim * shape.qk_norm
    per_layer = linear + biases + norms
    embeddings = shape.vocab_size * h
    head = 0 if shape.tie_embeddings else shape.vocab_size * h
    return embeddings + shape.num_layers * per_layer + h + head


def lora_target_names(target_modules: str | list[str] | None) -> tuple[str, ...]:
    """The projections LoRA adapts: peft's default (``q_proj``, ``v_proj``) for ``None``,
    every linear layer but the head for ``"all-linear"``, else the names given.

    Example:
        >>> lora_target_names(None)
        ('q_proj', 'v_proj')
        >>> lora_target_names(["all-linear"])
        ('q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj')
    """
    if target_modules is None:
        return ("q_proj", "v_proj")
    names = [target_modules] if isinstance(target_modules, str) else target_modules
    if not isinstance(names, (list, tuple)) or not all(isinstance(name, str) for name in names):
        raise ValueError(f"lora_target_modules={target_modules!r} is not a list of module names; "
                         "write it like [q_proj, v_proj] or all-linear.")
    if [name.lower() for name in names] == ["all-linear"]:
        return ATTENTION_MODULES + MLP_MODULES
    unknown = [name for name in names if name not in ATTENTION_MODULES + MLP_MODULES]
    if unknown:
        raise ValueError(
            f"lora_target_modules names {unknown[0]!r}, which is not a projection referee can size; "
            f"use names from {', '.join(ATTENTION_MODULES + MLP_MODULES)} or 'all-linear'."
        )
    return tuple(names)


def count_lora_parameters(shape: ModelShape, target_modules: str | list[str] | None, rank: int,
                          *, use_dora: bool = False) -> int:
    """Trainable LoRA parameters: ``rank x (in + out)`` per adapted projection and layer
    (plus the ``out``-sized magnitude vector of DoRA).

    Example:
        >>> shape = ModelShape(vocab_size=151936, hidden_size=1536, num_layers=28, num_heads=12,
        ...                    num_kv_heads=2, head_dim=128, intermediate_size=8960, qkv_bias=True)
        >>> count_lora_parameters(shape, ["q_proj", "v_proj"], 16)
        2179072
    """
    layers = linear_layers(shape)
    per_layer = sum(rank * (layers[name][0] + layers[name][1]) + use_dora * layers[name][1]
                    for name in lora_target_names(target_modules))
    return shape.num_layers * per_layer


def kv_cache_bytes_per_token(shape: ModelShape, bytes_per_value: int = 2) -> int:
    """KV cache one token needs: keys and values of every layer's KV heads (bf16 by default).

    Example:
        >>> qwen_1_5b = ModelShape(vocab_size=151936, hidden_size=1536, num_layers=28, num_heads=12,
        ...                    num_kv_heads=2, head_dim=128, intermediate_size=8960, qkv_bias=True)
        >>> kv_cache_bytes_per_token(qwen_1_5b)
        28672
    """
    return 2 * shape.num_layers * shape.kv_dim * bytes_per_value


def read_model_config(name_or_path: str | Path, *, revision: str | None = None) -> dict[str, Any]:
    """A model's ``config.json`` as a dict: from a local folder (or the file itself), else, for
    the models of the shipped recipes, from the sizes referee carries (no network), else from the
    Hugging Face hub cache, else from the hub (never tried when ``HF_HUB_OFFLINE`` is set or its
    endpoint takes no connection within two seconds).

    Example:
        >>> import json, tempfile
        >>> from pathlib import Path
        >>> folder = Path(tempfile.mkdtemp())
        >>> _ = (folder / "config.json").write_text(json.dumps({"model_type": "qwen2", "hidden_size": 1536}))
        >>> read_model_config(folder)["hidden_size"]
        1536
    """
    path = Path(name_or_path)
    if path.is_dir():
        path = path / "config.json"
    if path.is_file():
        return _parse_config(path)
    if Path(name_or_path).exists() or str(name_or_path).startswith((".", "/", "~")):
        raise ValueError(f"{str(name_or_path)!r} has no config.json; give a model folder or --params N.")
    known = known_config(str(name_or_path)) if revision is None else None
    if known is not None:
        return known
    unreachable = None
    try:
        from huggingface_hub import hf_hub_download

        try:
            downloaded = hf_hub_download(str(name_or_path), "config.json", revision=revision, local_files_only=True)
        except Exception:  # not in the local hub cache: ask the hub, unless offline (its retries take 20 s)
            unreachable = hub_unreachable()
            if unreachable:
                raise
            downloaded = hf_hub_download(str(name_or_path), "config.json", revision=revision)
    except Exception as exc:  # offline, unknown repo, gated repo, no huggingface_hub: one message for all
        raise ValueError(
            f"could not read config.json of {str(name_or_path)!r} from the hub ({unreachable or type(exc).__name__}); "
            "give a local model folder with --model or the parameter count with --params N."
        ) from None
    return _parse_config(Path(downloaded))


def _parse_config(path: Path) -> dict[str, Any]:
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"cannot read the model config {str(path)!r} ({exc}); give a valid config.json.") from None
    if not isinstance(config, dict):
        raise ValueError(f"the model config {str(path)!r} is not a JSON object; give a transformers config.json.")
    return config

