"""``EvalCallback``: held-out pass@k and maj@k during GRPO training, sampled with the trainer's own model.

At step 0 and every ``every_steps`` optimizer steps the callback samples ``num_samples``
completions per held-out prompt with the weights being trained (no second copy): the trainer's
vLLM engine in colocate mode after a weight sync, or transformers ``generate`` on the model
itself. It scores them with strict correctness rewards (default: the trainer's rewards of kind
``correctness``, never format or length shaping) and logs ``eval/pass@1``, ``eval/pass@k``,
``eval/maj@k``, ``eval/pass@1_ci_low``/``_high``, ``eval/mean_length``,
``eval/truncated_share`` and ``eval/train_reward`` (the mean since the last evaluation of what
training pays for being right: the trainer's rewards of kind ``correctness``, else its total
reward; what ``DiagnosticsCallback`` compares pass@1 with). Each evaluation's
per-prompt rows (the pre-filter's format, with samples) go to ``OUTPUT_DIR/eval/step-N.jsonl``.
Every process evaluates its share of the prompts; the rows are gathered, so the metrics are the
same on every process. The sampling seed is the same at every evaluation, so two evaluations
differ by the weights, not by the draw.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from transformers import TrainerCallback, TrainerControl, TrainerState, TrainingArguments

from ..common.data import Rows
from ..common.generation import SamplingOptions
from ..prefilter.chunks import ChunkRunner
from ..prefilter.config import PrefilterConfig
from ..prefilter.scoring import Scorer, reward_name
from .metrics import ks_up_to
from .results import grouping_problem, prompt_fields, summarize

EVAL_PREFIX = "eval/"
TRAIN_REWARD = "eval/train_reward"


@dataclass(frozen=True)
class EvalSettings:
    """The recipe's ``eval:`` block.

    Attributes:
        data: held-out rows (a file or dataset the recipe's ``dataset_format`` loader reads).
        every_steps: optimizer steps between evaluations (also one at step 0).
        num_samples: completions per prompt (the n of pass@k).
        ks: k values to log (default: 1, 2, 4, ... up to ``num_samples``, and ``num_samples``).
        temperature, top_p: sampling; ``max_tokens`` defaults to the trainer's ``max_completion_length``.
        rewards: eval rewards by name or ``module:attr`` (default: the trainer's correctness rewards);
            the first decides a pass and groups answers for maj@k.
        reward_options: options per reward name.
        threshold: a sample passes when the first reward is ``>= threshold``.
        max_prompts: evaluate the first N held-out rows (default 64; ``None``: all).
        split: the split of a ``datasets`` source.
        seed: the sampling seed, the same at every evaluation.
        batch_size: prompts per ``generate`` call with transformers.

    Example:
        >>> EvalSettings.from_dict({"data": "heldout.jsonl", "every_steps": 20, "num_samples": 8}).num_samples
        8
        >>> EvalSettings.from_dict({"data": "h.jsonl", "every_step": 20})
        Traceback (most recent call last):
        ...
        ValueError: eval has no key 'every_step'; did you mean 'every_steps'? Its keys: data, every_steps, num_samples, ks, temperature, top_p, max_tokens, rewards, reward_options, threshold, max_prompts, split, seed, batch_size.
    """

    data: str
    every_steps: int = 50
    num_samples: int = 4
    ks: tuple[int, ...] | None = None
    temperature: float = 1.0
    top_p: float = 1.0
    max_tokens: int | None = None
    rewards: tuple[str, ...] | None = None
    reward_options: dict[str, dict[str, Any]] = field(default_factory=dict)
    threshold: float = 1.0
    max_prompts: int | None = 64
    split: str = "train"
    seed: int = 0
    batch_size: int = 8

    def __post_init__(self) -> None:
        if not isinstance(self.data, str) or not self.data:
            raise ValueError("eval.data must name the held-out rows (a .jsonl/.parquet file or a dataset).")
        for name in ("every_steps", "num_samples", "batch_size"):
            if not isinstance(getattr(self, name), int) or getattr(self, name) < 1:
                raise ValueError(f"eval.{name} is {getattr(self, name)!r}; it must be a whole number >= 1.")
        if self.max_prompts is not None and (not isinstance(self.max_prompts, int) or self.max_prompts < 1):
            raise ValueError(f"eval.max_prompts is {self.max_prompts!r}; give a whole number >= 1, or null for all.")
        if self.ks is not None:
            object.__setattr__(self, "ks", tuple(self.ks))
            if not self.ks or not all(isinstance(k, int) and k >= 1 for k in self.ks):
                raise ValueError(f"eval.ks is {list(self.ks)!r}; give whole numbers >= 1.")
        if self.rewards is not None:
            object.__setattr__(self, "rewards", tuple(self.rewards))
        if not math.isfinite(self.threshold):
            raise ValueError(f"eval.threshold is {self.threshold!r}; give a finite number such as 1.0.")
        SamplingOptions(temperature=self.temperature, top_p=self.top_p, max_tokens=self.max_tokens or 1)

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> EvalSettings:
        """The settings of a recipe's ``eval:`` mapping, refusing unknown keys with a suggestion."""
        from ..common.mappings import from_mapping

        return from_mapping(cls, values, "eval", needs={
            "data": "the held-out rows (a .jsonl/.parquet file or a dataset), read with the recipe's dataset_format"})


class EvalCallback(TrainerCallback):
    """Evaluate held-out ``rows`` during training (see the module docstring); use :meth:`attach`.

    Args:
        settings: what to evaluate and how often.
        rows: the held-out rows, in the trainer's format (a ``prompt`` column and the gold columns).
        rewards: the eval reward functions (default: the attached trainer's correctness rewards).

    Example:
        >>> callback = EvalCallback(EvalSettings(data="h.jsonl", every_steps=10), [{"prompt": "1+1=", "answer": "2"}])
        >>> callback.due(0), callback.due(5), callback.due(20)
        (True, False, True)
    """

    def __init__(self, settings: EvalSettings, rows: Sequence[dict[str, Any]],
                 rewards: Sequence[Any] | None = None) -> None:
        self.settings = settings
        limit = settings.max_prompts
        self.rows = list(rows)[:limit] if limit is not None else list(rows)
        if not self.rows:
            raise ValueError(f"eval.data {settings.data} holds no rows to evaluate.")
        self.rewards = list(rewards) if rewards is not None else None
        self.history: list[dict[str, float]] = []
        self._trainer: Any = None
        self._last_step: int | None = None
        self._train_rewards: list[float] = []
        self._train_keys: list[str] = []

    def attach(self, trainer: Any) -> EvalCallback:
        """Let the callback sample with ``trainer``'s model and add it to the trainer's callbacks; returns ``self``.

        The eval rewards default to the trainer's rewards of kind ``correctness``. Refused (one
        ``ValueError``) when the trainer generates through a vLLM server or with tensor
        parallelism, which this callback cannot drive.
        """
        if getattr(trainer, "use_vllm", False):
            mode = getattr(trainer.args, "vllm_mode", "colocate")
            if mode != "colocate":
                raise ValueError(f"eval samples through the trainer's own vLLM engine, which needs vllm_mode "
                                 f"'colocate' (this run uses {mode!r}); evaluate with referee eval on a saved "
                                 "checkpoint instead, or drop the eval block.")
            if getattr(trainer.args, "vllm_tensor_parallel_size", 1) > 1:
                raise ValueError("eval cannot sample with vllm_tensor_parallel_size > 1 yet; set it to 1 or evaluate "
                                 "checkpoints with referee eval.")
        else:
            dist = getattr(trainer, "_dist", None)
            sharded = dist is not None and (dist.fsdp_version == 2 or (dist.is_zero3 and not
                                                                       trainer.args.ds3_gather_for_generation))
            if sharded and trainer.accelerator.num_processes > 1:
                # Each forward of a sharded model is a collective; ranks evaluating different prompts would hang.
                raise ValueError("eval with transformers generation needs whole weights on each process (FSDP v1, "
                                 "DDP, or ZeRO-3 with ds3_gather_for_generation: true); this run shards them, so "
                                 "evaluate its checkpoints with referee eval, or generate with vLLM colocate.")
        correctness = [f for f in trainer.reward_funcs if getattr(f, "kind", None) == "correctness"]
        self._train_keys = [f"rewards/{reward_name(f)}/mean" for f in correctness] or ["reward"]
        if self.rewards is None:
            self.rewards = correctness
        if not self.rewards:
            raise ValueError("eval found no correctness reward among the trainer's rewards; name the eval rewards "
                             "with eval.rewards (e.g. [math_accuracy]).")
        self.scorer = Scorer(self.rewards, threshold=self.settings.threshold)
        problem = grouping_problem(self.scorer.functions[0])
        self.majority_reward = None if problem else self.scorer.functions[0]
        self._trainer = trainer
        trainer.add_callback(self)
        return self

    def due(self, step: int) -> bool:
        """Whether an evaluation is due after ``step`` optimizer steps (0 included)."""
        return step % self.settings.every_steps == 0 and step != self._last_step

    def on_train_begin(self, args: TrainingArguments, state: TrainerState, control: TrainerControl,
                       **kwargs: Any) -> None:
        if self._trainer is not None and self.due(state.global_step):
            self.evaluate(state.global_step)

    def on_log(self, args: TrainingArguments, state: TrainerState, control: TrainerControl,
               logs: dict[str, Any] | None = None, **kwargs: Any) -> None:
        values = [(logs or {}).get(key) for key in self._train_keys] if self._trainer else []
        values = [float(v) for v in values if isinstance(v, (int, float)) and math.isfinite(v)]
        if values:
            self._train_rewards.append(sum(values) / len(values))

    def on_step_end(self, args: TrainingArguments, state: TrainerState, control: TrainerControl,
                    **kwargs: Any) -> None:
        if self._trainer is not None and self.due(state.global_step):
            self.evaluate(state.global_step)

    def evaluate(self, step: int) -> dict[str, float]:
        """Sample, score and log one evaluation now; returns the logged metrics."""
        trainer = self._trainer
        rank, world = trainer.accelerator.process_index, trainer.accelerator.num_processes
        mine = self.rows[rank::world]
        sampling = SamplingOptions(temperature=self.settings.temperature, top_p=self.settings.top_p,
                                   max_tokens=self.settings.max_tokens or trainer.max_completion_length,
                                   seed=self.settings.seed)
        config = PrefilterConfig(model="(the trainer's)", data=self.settings.data, rewards=tuple(self.rewards),
                                 out="-", num_generations=self.settings.num_samples, sampling=sampling,
                                 save_samples=True)
        ks = ks_up_to(self.settings.num_samples, self.settings.ks)
        training = trainer.model.training
        try:
            with self._backend() as backend:
                records = ChunkRunner(config, Rows(mine), trainer.processing_class, backend, self.scorer,
                                      chunk_size=max(1, len(mine))).run(0)["rows"] if mine else []
            records = [{**record, "row_index": rank + world * record["row_index"],
                        **prompt_fields(record, ks, self.majority_reward)} for record in records]
            if world > 1:
                from accelerate.utils import gather_object

                records = sorted(gather_object(records), key=lambda record: record["row_index"])
            metrics = {f"{EVAL_PREFIX}{name}": value for name, value in summarize(records, ks).items()
                       if isinstance(value, (int, float))}
            if self._train_rewards:
                metrics[TRAIN_REWARD] = sum(self._train_rewards) / len(self._train_rewards)
            self._train_rewards = []
            self._last_step = step
            self.history.append({"step": step, **metrics})
            if trainer.accelerator.is_main_process:
                self._write_rows(step, records)
            trainer.model.eval()  # TRL's log() files metrics logged in eval mode apart from the training ones
            should_log = trainer.control.should_log
            trainer.log(metrics)
            trainer.control.should_log = should_log  # on_log clears it: the step's training log must still come
        finally:
            trainer.model.train(training)
        return metrics

    @contextmanager
    def _backend(self) -> Iterator[Any]:
        trainer = self._trainer
        if getattr(trainer, "use_vllm", False):
            with self._vllm_backend() as backend:
                yield backend
            return
        from trl.models import unwrap_model_for_generation

        from ..common.transformers_backend import TransformersBackend

        import torch

        # As TRL generates: the model unwrapped, ZeRO-3 parameters gathered, FSDP v1 parameters summoned.
        with unwrap_model_for_generation(trainer.model_wrapped, trainer.accelerator,
                                         gather_deepspeed3_params=trainer.args.ds3_gather_for_generation,
                                         gradient_checkpointing_kwargs=trainer.args.gradient_checkpointing_kwargs
                                         ) as model, torch.no_grad(), \
                trainer._dist.summon_full_params(trainer.model_wrapped, recurse=False):
            yield TransformersBackend(model, trainer.processing_class, batch_size=self.settings.batch_size)

    @contextmanager
    def _vllm_backend(self) -> Iterator[Any]:
        """A backend on the trainer's colocated vLLM engine, its weights synced to the current step.

        With sleep mode the engine goes back to sleep afterwards as TRL leaves it, weights
        released, so the trainer's next generation loads them again.
        """
        from ..common.vllm_backend import VLLMBackend

        trainer = self._trainer
        generation = trainer.vllm_generation
        if trainer.state.global_step != getattr(trainer, "_last_loaded_step", None) or generation.enable_sleep_mode:
            generation.sync_weights()
            trainer._last_loaded_step = trainer.state.global_step
        if generation.enable_sleep_mode:
            generation.llm.wake_up(tags=["kv_cache"])
        llm = generation.llm
        try:
            yield VLLMBackend(llm, trainer.processing_class, context_length=llm.llm_engine.model_config.max_model_len,
                              generation_config=getattr(trainer.model, "generation_config", None))
        finally:
            if generation.enable_sleep_mode:
                llm.sleep(level=2)
                generation._llm_weights_sleeping = True
                trainer._last_loaded_step = None  # the weights were released: the next generation reloads them

    def _write_rows(self, step: int, records: list[dict[str, Any]]) -> None:
        folder = Path(self._trainer.args.output_dir) / "eval"
        folder.mkdir(parents=True, exist_ok=True)
        with (folder / f"step-{step:06d}.jsonl").open("w", encoding="utf-8") as sink:
            for record in records:
                sink.write(json.dumps(record, ensure_ascii=False, default=str) + "\n")
