"""``DiagnosticsCallback``: watch a GRPO run's signals and write sample completions to read.

Each time the trainer logs, the callback feeds TRL's metrics to a
:class:`~referee.recipes.diagnostics.monitor.DiagnosticsMonitor`, adds a
``diagnostics/<cause>`` flag (1.0 or 0.0) per cause to the logs, and warns once per cause
with the seeds' remedy (logger ``referee.recipes.diagnostics``). Attached to a TRL
``GRPOTrainer`` it also reads the last batch's prompts, completions, rewards, advantages
and the columns reward functions logged through ``log_extra`` (the extracted answer, the
verdict), logs the batch's mean advantage, and every ``samples_every`` steps appends a few
of those completions to ``completion_samples.jsonl`` in the output folder.
"""

from __future__ import annotations

import json
import logging
import math
from pathlib import Path
from typing import Any

from transformers import TrainerCallback, TrainerControl, TrainerState, TrainingArguments

from .monitor import ADVANTAGE_MEAN, EVAL_WATCHED, WATCHED, DiagnosticsConfig, DiagnosticsMonitor

logger = logging.getLogger("referee.recipes.diagnostics")  # the name the docs give, above this module

SAMPLES_FILE = "completion_samples.jsonl"
_PROBED_ROWS = 8  # training rows the audit's format probes read when a reward declares no format


class DiagnosticsCallback(TrainerCallback):
    """Diagnose a GRPO run from its logged metrics; write sample completions with verdicts.

    Args:
        config: thresholds and sample settings (defaults: :class:`DiagnosticsConfig`).
        output_dir: folder for ``completion_samples.jsonl`` (default: the trainer's
            ``output_dir``).

    Use ``DiagnosticsCallback().attach(trainer)`` on a TRL ``GRPOTrainer``: that adds the
    callback ahead of the reporting integrations (so wandb, tensorboard and the printed logs
    see the flags) and gives it the batch's completions for the samples file. Passed as
    ``callbacks=[...]`` instead, it still diagnoses and flags, but writes no samples.

    Example:
        >>> from transformers import TrainerControl, TrainerState, TrainingArguments
        >>> callback = DiagnosticsCallback()
        >>> args, state = TrainingArguments(output_dir="/tmp/run", report_to="none"), TrainerState()
        >>> for step in range(1, 5):
        ...     state.global_step = step
        ...     logs = {"kl": -0.02, "reward": 0.4, "reward_std": 0.3}
        ...     callback.on_log(args, state, TrainerControl(), logs=logs)
        >>> logs["diagnostics/negative_kl"], [f.cause for f in callback.monitor.reported]
        (1.0, ['negative_kl'])
    """

    def __init__(self, config: DiagnosticsConfig | None = None, output_dir: str | Path | None = None) -> None:
        self.config = config or DiagnosticsConfig()
        self.monitor = DiagnosticsMonitor(self.config)
        self.output_dir = None if output_dir is None else Path(output_dir)
        self._trainer: Any = None
        self._last_sample_step: int | None = None

    @property
    def samples_path(self) -> Path | None:
        """Where samples go: ``output_dir / completion_samples.jsonl`` (None until known)."""
        return None if self.output_dir is None else self.output_dir / SAMPLES_FILE

    def attach(self, trainer: Any) -> DiagnosticsCallback:
        """Add this callback to ``trainer`` first in line and let it read the trainer's
        latest batch of completions (TRL 1.16 ``GRPOTrainer._logs``). Returns ``self``.

        Example:
            >>> from types import SimpleNamespace
            >>> from transformers.trainer_callback import CallbackHandler, PrinterCallback
            >>> handler = CallbackHandler([PrinterCallback()], None, None, None, None)
            >>> callback = DiagnosticsCallback().attach(SimpleNamespace(callback_handler=handler))
            >>> [type(c).__name__ for c in handler.callbacks]
            ['DiagnosticsCallback', 'PrinterCallback']
        """
        callbacks = trainer.callback_handler.callbacks
        if self in callbacks:
            callbacks.remove(self)
        callbacks.insert(0, self)
        self._trainer = trainer
        from referee.rewards.compose import reward_name as _name

        funcs = list(getattr(trainer, "reward_funcs", []) or [])
        self.monitor = DiagnosticsMonitor(
            self.config,
            correctness=[_name(f) for f in funcs if getattr(f, "kind", None) == "correctness"],
            formats=[_name(f) for f in funcs if getattr(f, "kind", None) == "shaping" and hasattr(f, "check")],
        )
        return self

    def on_train_begin(self, args: TrainingArguments, state: TrainerState, control: TrainerControl,
                       **kwargs: Any) -> None:
        if self.output_dir is None:
            self.output_dir = Path(args.output_dir)
        if self._trainer is None and self.config.samples_every and state.is_world_process_zero:
            logger.info("DiagnosticsCallback is not attached to the trainer, so it writes no sample completions; "
                        "use DiagnosticsCallback().attach(trainer) instead of callbacks=[...].")

    def on_log(self, args: TrainingArguments, state: TrainerState, control: TrainerControl,
               logs: dict[str, Any] | None = None, **kwargs: Any) -> None:
        if not logs:
            return
        if not any(name in logs for name in WATCHED if name != ADVANTAGE_MEAN):
            if any(name in logs for name in EVAL_WATCHED):  # a held-out evaluation (EvalCallback)
                self._diagnose(state, logs, {})
            return  # otherwise TRL's own eval log or the end-of-training summary
        batch = self._latest_batch()
        if batch and batch["advantages"]:
            logs[ADVANTAGE_MEAN] = _mean_or_none(batch["advantages"])
        self._diagnose(state, logs, {ADVANTAGE_MEAN: logs[ADVANTAGE_MEAN]} if ADVANTAGE_MEAN in logs else {})
        if batch and state.is_world_process_zero and self._samples_due(state.global_step):
            self._write_samples(state.global_step, batch)

    def _diagnose(self, state: TrainerState, logs: dict[str, Any], extra: dict[str, Any]) -> None:
        """Feed one log event to the monitor, warn about new findings, add the flags to the logs."""
        for finding in self.monitor.update(state.global_step, logs):
            if state.is_world_process_zero:
                unread = finding.cause == "reward_never_parses" or (finding.cause == "degenerate_groups"
                                                                   and self.monitor.paid_nothing())
                detail = self._unread_detail() if unread else ""
                logger.warning("GRPO diagnostics: %s%s", finding.message(), detail)
        added = {**self.monitor.flags(), **extra}
        logs.update(added)
        if state.log_history and state.log_history[-1].get("step") == state.global_step:
            state.log_history[-1].update(added)

    def _unread_detail(self) -> str:
        """What the model wrote and what the correctness rewards read: an example completion of the
        last batch and each reward's answer format, declared (``answer_template`` or ``write_answer``) or
        else found by ``referee audit``'s probes on the first training rows."""
        from referee.rewards.audit import answer_formats, declares_answer_format
        from referee.rewards.completions import completion_text

        batch = self._latest_batch()
        parts = []
        if batch and batch["completion"]:
            example = completion_text(batch["completion"][0]) or str(batch["completion"][0])
            parts.append(f" Example completion: {example[:200] + ('...' if len(example) > 200 else '')!r}.")
        for func in getattr(self._trainer, "reward_funcs", None) or []:
            name = getattr(func, "__name__", "the reward")
            if getattr(func, "kind", None) == "correctness" and declares_answer_format(func):
                parts.append(f" {name} reads answers written as {answer_formats(func)[0].write('final', 'X')!r}.")
            elif getattr(func, "kind", "correctness") == "correctness":
                parts.append(self._probed_formats(func, name))
        return "".join(parts)

    def _probed_formats(self, func: Any, name: str) -> str:
        """The answer formats ``referee audit`` finds ``func`` reads on the first training rows (a reward that
        declares none), as one sentence; empty when they cannot be probed (no rows, code rows, a failure)."""
        from referee.rewards.audit import describe_read_formats, probe_family

        try:
            dataset = self._trainer.train_dataset
            rows = [dict(dataset[index]) for index in range(min(_PROBED_ROWS, len(dataset)))]
            if not rows or probe_family(func, rows) == "code":
                return ""
            sentence = describe_read_formats(func, rows, name)
        except Exception:  # noqa: BLE001 - a warning's detail never stops training
            return ""
        return f" {sentence}" if sentence else ""

    def _latest_batch(self) -> dict[str, Any] | None:
        """The trainer's last batch as plain lists, or None when not attached to a GRPOTrainer."""
        logged = getattr(self._trainer, "_logs", None)
        if not isinstance(logged, dict) or "completion" not in logged:
            return None
        return {
            "prompt": list(logged["prompt"]),
            "completion": list(logged["completion"]),
            "rewards": {name: list(values) for name, values in logged.get("rewards", {}).items()},
            "advantages": list(logged.get("advantages", [])),
            "extra": {name: list(values) for name, values in logged.get("extra", {}).items()},
        }

    def _samples_due(self, step: int) -> bool:
        every = self.config.samples_every
        return bool(every) and (self._last_sample_step is None or step - self._last_sample_step >= every)

    def _write_samples(self, step: int, batch: dict[str, Any]) -> None:
        rows = sample_rows(step, batch, self.config.num_samples)
        if not rows or self.samples_path is None:
            return
        self.samples_path.parent.mkdir(parents=True, exist_ok=True)
        with self.samples_path.open("a", encoding="utf-8") as sink:
            for row in rows:
                sink.write(json.dumps(row, ensure_ascii=False, default=str) + "\n")
        self._last_sample_step = step


def sample_rows(step: int, batch: dict[str, Any], count: int) -> list[dict[str, Any]]:
    """``count`` rows spread evenly over ``batch`` (so they come from different prompts), each
    with its prompt, completion, every reward, advantage and logged extra columns.

    Example:
        >>> batch = {"prompt": ["1+1=", "1+1=", "2+2=", "2+2="], "completion": ["2", "3", "4", "4"],
        ...          "rewards": {"accuracy": [1.0, 0.0, 1.0, float("nan")]}, "advantages": [0.7, -0.7, 0.0, 0.0],
        ...          "extra": {"extracted": ["2", "3", "4", None]}}
        >>> for row in sample_rows(7, batch, 2):
        ...     print(row)
        {'step': 7, 'prompt': '1+1=', 'completion': '2', 'rewards': {'accuracy': 1.0}, 'advantage': 0.7, 'extra': {'extracted': '2'}}
        {'step': 7, 'prompt': '2+2=', 'completion': '4', 'rewards': {'accuracy': 1.0}, 'advantage': 0.0, 'extra': {'extracted': '4'}}
    """
    size = len(batch["completion"])
    picks = sorted({index * size // count for index in range(count)}) if size and count else []

    def at(values: list[Any], index: int) -> Any:
        value = values[index] if index < len(values) else None
        return None if isinstance(value, float) and math.isnan(value) else value

    return [
        {
            "step": step,
            "prompt": at(batch["prompt"], index),
            "completion": at(batch["completion"], index),
            "rewards": {name: at(values, index) for name, values in batch["rewards"].items()},
            "advantage": at(batch["advantages"], index),
            "extra": {name: at(values, index) for name, values in batch["extra"].items()},
        }
        for index in picks
    ]


def _mean_or_none(values: list[float]) -> float | None:
    finite = [value for value in values if isinstance(value, (int, float)) and math.isfinite(value)]
    return sum(finite) / len(finite) if finite else None
