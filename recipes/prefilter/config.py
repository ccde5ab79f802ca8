"""Everything one pre-filter run is asked to do, in one frozen dataclass."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

from ..common.config_flags import flag, json_object
from ..common.generation import EngineOptions, SamplingOptions
from ..common.prompts import CHAT_TEMPLATE_MODES
from .bounds import KeepBounds
from .outputs import OUTPUT_FORMATS
from .scoring import RewardFunction


# Argument groups of `referee prefilter --help`.
_RUN, _DATA, _LONG = "what to run", "data and prompts", "long runs and output"


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
        max_rows: read only the first ``max_rows`` rows (default: all).
        recipe: a shipped recipe name or recipe YAML whose loader maps each row to the chat prompt
            training sends (:mod:`~referee.recipes.prefilter.recipe_prompts`); the prompt column is
            then ``prompt``.
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

    model: str = flag(group=_RUN, help="model folder or hub name")
    data: str = flag(group=_RUN, help="a .jsonl/.jsonl.gz/.parquet file, a datasets folder or a hub dataset name")
    rewards: tuple[str | RewardFunction, ...] = flag(
        group=_RUN, flags=("--reward",), append=True, metavar="R",
        help="reward name (referee.rewards) or module:function; repeat for several")
    out: str = flag(group=_RUN, required=True, metavar="DIR", help="output folder (a rerun resumes from it)")
    keep: KeepBounds = flag(
        KeepBounds(), group=_RUN, type=KeepBounds.parse, cli_default=None, needed=True, metavar="LO:HI",
        help="inclusive pass-rate band of the rows to keep, e.g. 0.125:0.875 (required unless --merge)")
    reward_options: dict[str, dict[str, Any]] = flag(
        default_factory=dict, group=_RUN, flags=("-O", "--option"), append=True, metavar="REWARD.KEY=VALUE",
        help="reward option, VALUE read as JSON when it parses (e.g. -O gsm8k_accuracy.mode=strict; KEY=VALUE alone "
             "with one --reward)")
    num_generations: int = flag(8, group=_RUN, metavar="G", help="samples per prompt (default %(default)s)")
    success_reward: str | None = flag(None, group="scoring", metavar="NAME",
                                      help="the reward that decides a pass (default: the first)")
    threshold: float = flag(1.0, group="scoring",
                            help="a sample passes when the success reward is >= this (default %(default)s)")
    split: str = flag("train", group=_DATA, help="split of a datasets source (default %(default)s)")
    data_config: str | None = flag(None, group=_DATA, metavar="NAME",
                                   help="configuration of a hub dataset (e.g. main for gsm8k)")
    max_rows: int | None = flag(None, group=_DATA, metavar="N", help="read only the first N rows (default: all)")
    recipe: str | None = flag(None, group=_DATA, metavar="RECIPE",
                              help="a shipped recipe name or recipe YAML: read --data through its loader (the chat prompts "
                                   "training sends) and take its model, first reward, max_completion_length, "
                                   "temperature and chat template variables where not given")
    prompt_column: str = flag("prompt", group=_DATA, metavar="COL", help="column with the prompt (default %(default)s)")
    chat_template: str = flag("auto", group=_DATA, choices=CHAT_TEMPLATE_MODES,
                              help="auto: chat template for chat prompts only, as TRL does; always: also wrap text "
                                   "prompts")
    system_prompt: str | None = flag(None, group=_DATA, metavar="TEXT",
                                     help="system message added when --chat-template always wraps")
    chat_template_kwargs: dict[str, Any] = flag(default_factory=dict, group=_DATA, type=json_object, metavar="JSON",
                                                help="extra chat template variables, e.g. '{\"enable_thinking\": false}'")
    sampling: SamplingOptions = flag(SamplingOptions(), group="sampling (defaults are TRL GRPOConfig's)")
    engine: EngineOptions = flag(EngineOptions(), group="generation backend")
    chunk_size: int = flag(64, group=_LONG, help="rows per saved chunk (default %(default)s)")
    shard_index: int = flag(0, group=_LONG, help="this machine's shard (default %(default)s)")
    num_shards: int = flag(1, group=_LONG, help="how many machines split the data (default %(default)s)")
    group_size: int | None = flag(None, group=_LONG, metavar="G",
                                  help="training group size for the predicted degenerate-group share (default "
                                       "--num-generations)")
    save_samples: bool = flag(False, group=_LONG, help="keep each sample's text, rewards and verdict fields")
    output_format: str = flag("jsonl", group=_LONG, flags=("--format",), choices=OUTPUT_FORMATS, cli_default=None,
                              help="format of all/kept: jsonl (default), parquet or datasets")
    progress: bool = flag(True, group=_LONG, flags=("--no-progress",), help="hide the progress bar")

    def __post_init__(self) -> None:
        object.__setattr__(self, "rewards", tuple(self.rewards))
        if not math.isfinite(self.threshold):
            raise ValueError(f"threshold {self.threshold} is not a finite number; a sample passes when the success "
                             "reward is >= it (e.g. --threshold 1.0).")
        if self.num_generations < 1:
            raise ValueError(f"num_generations {self.num_generations} must be at least 1.")
        if self.max_rows is not None and self.max_rows < 1:
            raise ValueError(f"max_rows {self.max_rows} must be at least 1 (or unset for every row).")
        if self.chunk_size < 1:
            raise ValueError(f"chunk_size {self.chunk_size} must be at least 1.")
        if self.num_shards < 1 or not 0 <= self.shard_index < self.num_shards:
            raise ValueError(f"Shard {self.shard_index} of {self.num_shards} does not exist; "
                             "use 0 <= --shard-index < --num-shards.")
        if self.group_size is not None and self.group_size < 1:
            raise ValueError(f"group_size {self.group_size} must be at least 1.")
        if self.recipe is not None and self.prompt_column != "prompt":
            raise ValueError(f"--recipe {self.recipe} writes the prompt to the 'prompt' column; drop --prompt-column "
                             f"{self.prompt_column}.")
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
