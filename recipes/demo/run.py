"""``referee demo``: GRPO that visibly learns, on a CPU, in a few minutes, with nothing downloaded.

A ~0.6M-parameter Qwen2 model and a character tokenizer are built locally; a short
supervised phase teaches the ``#### N`` answer format on sums ``a+b`` (``0 <= a, b <= 19``);
then ``RefereeGRPOTrainer`` trains it with referee's ``gsm8k_accuracy`` (weight 1) and
``gsm8k_format`` (weight 0.1) rewards. Greedy accuracy on held-out sums (never trained on) is
measured before and after GRPO. Settings that worked here are in :class:`DemoSettings`
(the CPU profile, one torch thread, a learning rate far above TRL's default and a warm start:
docs/cpu_training.md says why each is needed).
"""

from __future__ import annotations

import json
import logging
import random
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from transformers import ProgressCallback

from .arithmetic import Sum, grpo_rows, split_sums

DEMO_REWARDS: tuple[tuple[str, float], ...] = (("gsm8k_accuracy", 1.0), ("gsm8k_format", 0.1))


@dataclass(frozen=True)
class DemoSettings:
    """Every knob of the demo; the defaults are the measured run quoted in the README.

    Example:
        >>> DemoSettings().grpo_steps, DemoSettings(grpo_steps=10).grpo_steps
        (600, 10)
    """

    low: int = 0
    high: int = 19
    held_out: int = 80
    seed: int = 0
    threads: int = 1
    warm_start_steps: int = 300
    warm_start_batch_size: int = 64
    warm_start_learning_rate: float = 1e-3
    grpo_steps: int = 600
    grpo_batch_size: int = 64  # completions per step: 8 prompts x G=8
    num_generations: int = 8
    grpo_learning_rate: float = 5e-5
    max_completion_length: int = 8  # "#### 38" and <eos>


class _RewardProgress(ProgressCallback):
    """The trainer's progress bar, showing the latest reward instead of printing every log."""

    def on_log(self, args: Any, state: Any, control: Any, logs: dict[str, float] | None = None, **kwargs: Any) -> None:
        if self.training_bar is not None and logs and "reward" in logs:
            self.training_bar.set_postfix(reward=f"{logs['reward']:.3f}")


def _accuracy(model: Any, tokenizer: Any, problems: list[Sum], settings: DemoSettings) -> float:
    from referee.rewards import get_reward

    from .evaluation import greedy_completions, reward_accuracy

    replies = greedy_completions(model, tokenizer, [p.prompt for p in problems],
                                 max_new_tokens=settings.max_completion_length)
    return reward_accuracy(get_reward("gsm8k_accuracy"), replies, answer=[str(p.answer) for p in problems])


def _grpo_trainer(model: Any, tokenizer: Any, train: list[Sum], output_dir: Path, settings: DemoSettings) -> Any:
    from datasets import Dataset

    from referee.rewards import compose_rewards

    from ..train.config import build_grpo_config
    from ..train.trainer import RefereeGRPOTrainer

    reward_funcs, reward_weights = compose_rewards(DEMO_REWARDS)
    args = build_grpo_config(
        str(output_dir), profile="cpu", loss_aggregation="token",
        learning_rate=settings.grpo_learning_rate, lr_scheduler_type="constant", warmup_steps=0,
        max_steps=settings.grpo_steps, per_device_train_batch_size=settings.grpo_batch_size,
        num_generations=settings.num_generations, max_completion_length=settings.max_completion_length,
        reward_weights=reward_weights, logging_steps=1, save_strategy="no", report_to="none", seed=settings.seed,
        disable_tqdm=False,
    )
    trainer = RefereeGRPOTrainer(model=model, reward_funcs=reward_funcs, args=args, processing_class=tokenizer,
                                 train_dataset=Dataset.from_list(grpo_rows(train)))
    trainer.remove_callback(ProgressCallback)
    trainer.add_callback(_RewardProgress())
    return trainer


@contextmanager
def _quiet_libraries() -> Iterator[None]:
    """Hide library warnings and info logs for the demo's duration: its output is the story."""
    from transformers.utils import logging as transformers_logging

    verbosity = transformers_logging.get_verbosity()
    progress_bars = transformers_logging.is_progress_bar_enabled()
    trl_logger = logging.getLogger("trl")
    trl_level = trl_logger.level
    transformers_logging.set_verbosity_error()
    transformers_logging.disable_progress_bar()
    trl_logger.setLevel(logging.ERROR)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            warnings.simplefilter("ignore", FutureWarning)
            yield
    finally:
        transformers_logging.set_verbosity(verbosity)
        if progress_bars:
            transformers_logging.enable_progress_bar()
        trl_logger.setLevel(trl_level)


def run_demo(output_dir: str | Path = "runs/demo", settings: DemoSettings = DemoSettings(), *,
             log: Any = print) -> dict[str, Any]:
    """Run the demo, write ``model/``, ``reward_curve.png`` and ``metrics.json`` under ``output_dir``,
    print progress with ``log``, and return the metrics.

    Example (a few steps only; the real run takes about two minutes):
        >>> import tempfile
        >>> tiny = DemoSettings(held_out=2, warm_start_steps=1, warm_start_batch_size=2, grpo_steps=1,
        ...                     grpo_batch_size=2, num_generations=2)
        >>> metrics = run_demo(tempfile.mkdtemp(), tiny, log=lambda line: None)
        >>> sorted(metrics)[:3]
        ['greedy_accuracy_after', 'greedy_accuracy_before', 'grpo_seconds']
    """
    import torch

    started = time.perf_counter()
    threads = torch.get_num_threads()
    torch.set_num_threads(settings.threads)
    try:
        with _quiet_libraries():
            metrics = _run(Path(output_dir), settings, log)
    finally:
        torch.set_num_threads(threads)
    metrics["seconds"] = round(time.perf_counter() - started, 1)
    (Path(output_dir) / "metrics.json").write_text(json.dumps(metrics, indent=2) + "\n", encoding="utf-8")
    log(f"wrote {Path(output_dir) / 'model'}, {Path(output_dir) / 'reward_curve.png'} and "
        f"{Path(output_dir) / 'metrics.json'} in {metrics['seconds']:.0f} s")
    return metrics


def _run(output_dir: Path, settings: DemoSettings, log: Any) -> dict[str, Any]:
    import torch

    from .reward_curve import RewardChange, logged_series, plot_reward_curve
    from ..common.tiny_model import build_char_tokenizer, build_tiny_model
    from .warm_start import warm_start

    random.seed(settings.seed)
    torch.manual_seed(settings.seed)

    tokenizer = build_char_tokenizer()
    model = build_tiny_model(tokenizer, seed=settings.seed)
    train, held_out = split_sums(settings.low, settings.high, settings.held_out, seed=settings.seed)
    log(f"referee demo: sums a+b with {settings.low} <= a, b <= {settings.high}, answered as '#### N'; "
        f"{len(train)} for training, {len(held_out)} held out")
    log(f"model: Qwen2, {sum(p.numel() for p in model.parameters()):,} parameters, character tokenizer, built locally")

    warm_start(model, tokenizer, [(p.prompt, p.completion) for p in train], steps=settings.warm_start_steps,
               batch_size=settings.warm_start_batch_size, learning_rate=settings.warm_start_learning_rate,
               seed=settings.seed)
    before = _accuracy(model, tokenizer, held_out, settings)
    log(f"greedy accuracy on {len(held_out)} held-out sums after the warm start: {before:.1%}")

    grpo_started = time.perf_counter()
    trainer = _grpo_trainer(model, tokenizer, train, output_dir / "grpo", settings)
    trainer.train()
    grpo_seconds = time.perf_counter() - grpo_started
    after = _accuracy(model, tokenizer, held_out, settings)
    log(f"greedy accuracy on {len(held_out)} held-out sums after {settings.grpo_steps} GRPO steps: {after:.1%} "
        f"({100 * (after - before):+.1f} points)")

    model.save_pretrained(output_dir / "model")
    tokenizer.save_pretrained(output_dir / "model")
    plot_reward_curve(trainer.state.log_history, output_dir / "reward_curve.png",
                      keys=("reward", "rewards/gsm8k_accuracy/mean"),
                      title="referee demo: GRPO reward (gsm8k_accuracy + 0.1 x gsm8k_format)")
    change = RewardChange.of(logged_series(trainer.state.log_history, "reward")[1])
    first, last = (change.first, change.last) if change else (0.0, 0.0)
    metrics = {
        "greedy_accuracy_before": before,
        "greedy_accuracy_after": after,
        "held_out_prompts": len(held_out),
        "sampled_reward_first_tenth": first,
        "sampled_reward_last_tenth": last,
        "grpo_seconds": round(grpo_seconds, 1),
        "settings": asdict(settings),
    }
    if change is not None and change.part != "tenth":  # a short run (--grpo-steps below 10) says what it compared
        log(f"sampled reward: {change.describe()}")
    else:
        log(f"sampled reward (mean of the first and last tenth of the steps): "
            f"{metrics['sampled_reward_first_tenth']:.3f} -> {metrics['sampled_reward_last_tenth']:.3f}")
    return metrics
