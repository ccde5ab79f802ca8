"""The demo's task for benchmarks that train: a warm-started tiny model on sums a+b answered as ``#### N``.

Shared by ``benchmarks.eval_alarm`` and ``benchmarks.dynamic_sampling`` so that their arms start
from the same weights and data as ``referee demo``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import torch


def warm_model(folder: Path, steps: int = 300, seed: int = 0) -> Path:
    """Build the demo's tiny model, teach it the answer format for ``steps`` supervised steps, save it."""
    from referee.recipes.common.tiny_model import build_char_tokenizer, build_tiny_model
    from referee.recipes.demo.arithmetic import split_sums
    from referee.recipes.demo.warm_start import warm_start

    torch.manual_seed(seed)
    tokenizer = build_char_tokenizer()
    model = build_tiny_model(tokenizer, seed=seed)
    train, _ = split_sums(0, 19, 80, seed=seed)
    warm_start(model, tokenizer, [(p.prompt, p.completion) for p in train], steps=steps, batch_size=64,
               learning_rate=1e-3, seed=seed, progress=False)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def demo_rows(seed: int = 0) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(training rows, held-out rows) of the demo's split with ``seed`` (the split ``warm_model`` with that
    seed trains on), in TRL's format."""
    from referee.recipes.demo.arithmetic import grpo_rows, split_sums

    train, held_out = split_sums(0, 19, 80, seed=seed)
    return grpo_rows(train), grpo_rows(held_out)


def demo_config(output_dir: Path, steps: int, **overrides: Any) -> Any:
    """The demo's GRPO settings on the CPU profile (8 prompts x G=8 per step, learning rate 5e-5)."""
    from referee.recipes.train.config import build_grpo_config

    settings = dict(learning_rate=5e-5, lr_scheduler_type="constant", warmup_steps=0, max_steps=steps,
                    per_device_train_batch_size=64, num_generations=8, max_completion_length=8, logging_steps=1,
                    save_strategy="no", report_to="none", seed=0, disable_tqdm=True)
    return build_grpo_config(str(output_dir), profile="cpu", **{**settings, **overrides})


def write_results(path: str, settings: dict[str, Any], results: dict[str, Any]) -> None:
    """Write a benchmark's settings and results as JSON to ``path`` (its folder made) and say where."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(json.dumps({"settings": settings, "results": results}, indent=2) + "\n")
    print(f"wrote {path}")
