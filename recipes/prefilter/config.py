"""Everything one pre-filter run is asked to do, in one frozen dataclass."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any

from .bounds import KeepBounds
from .generation import EngineOptions, SamplingOptions
from .outputs import OUTPUT_FORMATS
from .prompts import CHAT_TEMPLATE_MODES
from .scoring import RewardFunction


@dataclass(frozen=True)
class PrefilterConfig:
    """One pre-filter run: sample ``num_generations`` completions per prompt of ``data`` with
    ``model``, score them with ``rewards``, keep the rows whose pass rate is inside ``keep``.

    Attributes:
        model: a model folder or hub name.
        data: a ``.jsonl``/``.parquet`` file, a ``datasets`` folder or a hub dataset name.
        rewards: reward names (``referee.rewards``), ``module:attribute`` paths or functions.
        reward_options: options per reward (keyed like ``rewards``), e.g.
            ``{"gsm8k_accuracy": {"mode": "strict"}}``.
        out: the output folder (``all.jsonl``, ``kept.jsonl``, ``report.json``,
            ``pass_rate_hist.png``, and ``state/`` with the finished chunks).
        keep: the inclusive pass-rate band of the rows to keep.
        success_reward: the reward that decides a pass (default: the first of ``rewards``).
        threshold: a sample passes when the success reward is ``>= threshold``.
        split, data_config: which split / configuration of a ``datasets`` source to read.
        prompt_column: the column holding the prompt (text or chat messages).
        chat_template: ``auto`` applies the chat template to chat prompts only (as TRL does);
            ``always`` also wraps text prompts as one user message (after ``system_prompt``).
        chat_template_kwargs: extra template variables (e.g. ``{"enable_thinking": False}``).
        chunk_size: rows per saved chunk (a killed run loses at most one chunk).
        shard_index, num_shards: take every ``num_shards``-th chunk from ``shard_index``.
        group_size: the training group size the report predicts degenerate groups for
            (default: ``num_generations``).
        save_samples: keep every sample's text, rewards and logged verdict fields in the rows.
        output_format: ``jsonl``, ``parquet`` or ``datasets`` for ``all`` and ``kept``.
        progress: show a progress bar with an ETA on standard error.

    Example:
        >>> config = PrefilterConfig(model="tiny", data="rows.jsonl", rewards=("gsm8k_accuracy",), out="out",
        ...                          keep=KeepBounds.parse("0.125:0.875"))
        >>> PrefilterConfig.from_dict(config.to_dict()) == config
        True
    """

    model: str
    data: str
    rewards: tuple[str | RewardFunction, ...]
    out: str
    keep: KeepBounds = KeepBounds()
    reward_options: dict[str, dict[str, Any]] = field(default_factory=dict)
    num_generations: int = 8
    success_reward: str | None = None
    threshold: float = 1.0
    split: str = "train"
    data_config: str | None = None
    prompt_column: str = "prompt"
    chat_template: str = "auto"
    system_prompt: str | None = None
    chat_template_kwargs: dict[str, Any] = field(default_factory=dict)
    sampling: SamplingOptions = SamplingOptions()
    engine: EngineOptions = EngineOptions()
    chunk_size: int = 64
    shard_index: int = 0
    num_shards: int = 1
    group_size: int | None = None
    save_samples: bool = False
    output_format: str = "jsonl"
    progress: bool = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "rewards", tuple(self.rewards))
        if not math.isfinite(self.threshold):
            raise ValueError(f"threshold {self.threshold} is not a finite number; a sample passes when the success "
                             "reward is >= it (e.g. --threshold 1.0).")
        if self.num_generations < 1:
            raise ValueError(f"num_generations {self.num_generations} must be at least 1.")
        if self.chunk_size < 1:
            raise ValueError(f"chunk_size {self.chunk_size} must be at least 1.")
        if self.num_shards < 1 or not 0 <= self.shard_index < self.num_shards:
            raise ValueError(f"Shard {self.shard_index} of {self.num_shards} does not exist; "
                             "use 0 <= --shard-index < --num-shards.")
        if self.group_size is not None and self.group_size < 1:
            raise ValueError(f"group_size {self.group_size} must be at least 1.")
        if self.chat_template not in CHAT_TEMPLATE_MODES:
            raise ValueError(f"Unknown chat template mode {self.chat_template!r}; choose auto or always.")
        if self.output_format not in OUTPUT_FORMATS:
            raise ValueError(f"Unknown output format {self.output_format!r}; choose one of {', '.join(OUTPUT_FORMATS)}.")

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (rewards must be names or paths, not function objects)."""
        if not all(isinstance(reward, str) for reward in self.rewards):
            raise ValueError("Only rewards given by name or module:attribute can be passed to worker processes.")
        values = dataclasses.asdict(self)
        values["rewards"] = list(self.rewards)
        return values

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> PrefilterConfig:
        """The config :meth:`to_dict` described."""
        values = dict(values)
        values["keep"] = KeepBounds(**values["keep"])
        values["sampling"] = SamplingOptions(**values["sampling"])
        values["engine"] = EngineOptions(**values["engine"])
        values["rewards"] = tuple(values["rewards"])
        return cls(**values)
