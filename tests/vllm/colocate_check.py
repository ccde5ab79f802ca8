"""`referee train RECIPE` with a check of the colocate weight sync after every optimizer step.

Run as ``python colocate_check.py RECIPE.yaml RESULT.json`` by tests/vllm/test_colocate.py (one
vLLM engine per process). The trainer is the one `referee train` builds (its own code path,
``referee.recipes.cli.main``); a callback is attached to it that, after each optimizer step,
syncs the engine the way the trainer does and compares the engine's log-probs of a fixed
completion with the trainer's. At the end of training three controls show the check can fail:
after the trainer's weights move, the engine before a sync, and the engine after vLLM's reload
without the tied head's re-pack, both disagree; the full sync agrees again. RESULT.json gets
every measurement.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import torch
from transformers import TrainerCallback

from referee.recipes.train.sync_check import completion_ids, model_logprobs, sync_gap


class SyncCheck(TrainerCallback):
    """After each optimizer step: sync, then record the largest log-prob gap (engine against trainer)
    and how far the trainer's own log-probs moved since the last step."""

    def __init__(self, trainer: Any) -> None:
        self.trainer = trainer
        self.ids, self.prompt_length = completion_ids(trainer.processing_class)
        self.steps: list[dict[str, float]] = []
        self.controls: dict[str, float] = {}
        self.dtype = str(trainer.model.dtype)
        self._last = model_logprobs(trainer.model, self.ids, self.prompt_length)
        self.start = self._last.tolist()

    def gap(self) -> float:
        return sync_gap(self.trainer, self.ids, self.prompt_length)

    def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        self.trainer.vllm_generation.sync_weights()
        now = model_logprobs(self.trainer.model, self.ids, self.prompt_length)
        self.steps.append({"step": state.global_step, "gap": self.gap(),
                           "moved": float((now - self._last).abs().max())})
        self._last = now

    def on_train_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        from referee.recipes.train.vllm_cpu_sync import reload_into_engine

        generation = self.trainer.vllm_generation
        params = [p for p in self.trainer.model.parameters() if p.requires_grad]
        saved = [p.detach().clone() for p in params]
        generator = torch.Generator().manual_seed(0)
        with torch.no_grad():  # a step's worth of change to every trained weight
            for p in params:
                p.add_(torch.randn(p.shape, generator=generator).to(p) * 0.05)
        self.controls["before_sync"] = self.gap()
        runner = generation.llm.llm_engine.model_executor.driver_worker.model_runner
        weights = [(name, tensor.detach().clone()) for name, tensor in generation._iter_named_params()]
        runner.reload_weights(weights_iterator=iter(weights))  # vLLM's reload alone: the tied head keeps its pack
        generation.llm.reset_prefix_cache()
        self.controls["reload_without_repack"] = self.gap()
        reload_into_engine(generation.llm, iter(weights))
        self.controls["full_sync"] = self.gap()
        with torch.no_grad():
            for p, value in zip(params, saved):
                p.copy_(value)
        generation.sync_weights()


def main(recipe: str, result: str) -> int:
    import referee.recipes.train.recipe as recipe_module
    from referee.recipes.cli import main as referee

    checks: list[SyncCheck] = []
    build = recipe_module.build_trainer

    def build_with_check(*args: Any, **kwargs: Any) -> Any:
        trainer = build(*args, **kwargs)
        checks.append(SyncCheck(trainer))
        trainer.add_callback(checks[-1])
        return trainer

    recipe_module.build_trainer = build_with_check
    code = referee(["train", recipe])
    if not checks:  # refused before a trainer was built: the exit code and stderr say why
        return code
    check = checks[0]
    with open(result, "w", encoding="utf-8") as handle:
        json.dump({"exit": code, "sync": check.trainer.vllm_sync, "dtype": check.dtype, "steps": check.steps, "controls": check.controls,
                   "start": check.start}, handle)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
