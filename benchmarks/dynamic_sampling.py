"""Dynamic sampling and the curriculum against plain GRPO, on the demo's task, at one budget of generated tokens.

Three arms start from the same warm-started tiny model (``referee demo``'s sums) with the same
settings and seed, and train until they have generated the same number of completions (each at
most ``max_completion_length`` tokens, so the same budget of generated tokens):

* plain: TRL's own ``GRPOTrainer`` (``loss_type="dapo"``), what TRL does today;
* dynamic sampling: ``RefereeGRPOTrainer`` with ``dynamic_sampling: {max_rounds: 3}``;
* dynamic sampling + curriculum: the same with ``curriculum: {sampler: learnability}``.

The table gives the share of groups with zero gradient in the batches trained on, the greedy
accuracy on the demo's 80 held-out sums, optimizer steps taken and wall time.

    python -m benchmarks.dynamic_sampling [--budget 12800] [--warm-start-steps 300] [--json PATH]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from typing import Any

import torch
from transformers import TrainerCallback

from .demo_task import demo_config, demo_rows, warm_model, write_results


class GenerationBudget(TrainerCallback):
    """Stops training once the run has generated ``budget`` completions."""

    def __init__(self, budget: int, per_step: int) -> None:
        self.budget, self.per_step, self.generated = budget, per_step, 0

    def on_log(self, args: Any, state: Any, control: Any, logs: dict[str, float] | None = None, **kwargs: Any) -> None:
        if logs and "reward" in logs:
            self.generated += int(logs.get("dynamic_sampling/generated_completions", self.per_step))
            if self.generated >= self.budget:
                control.should_training_stop = True


def zero_gradient_share(history: list[dict[str, Any]]) -> float:
    """The mean share of constant groups in the batches trained on: TRL's ``frac_reward_zero_std``
    for a plain run (every generated group is trained on), the unfilled share for dynamic sampling."""
    values = [entry.get("dynamic_sampling/shortfall_share", entry.get("frac_reward_zero_std"))
              for entry in history if "reward" in entry]
    values = [value for value in values if value is not None]
    return sum(values) / len(values)


def run_arm(name: str, warm: Path, budget: int, out: Path, **referee_settings: Any) -> dict[str, Any]:
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, PrinterCallback
    from trl import GRPOTrainer

    from referee.recipes.common.loading import load_tokenizer
    from referee.recipes.demo.evaluation import greedy_completions, reward_accuracy
    from referee.recipes.train.trainer import RefereeGRPOTrainer
    from referee.rewards import compose_rewards, get_reward

    train, held_out = demo_rows()
    rewards, weights = compose_rewards([("gsm8k_accuracy", 1.0), ("gsm8k_format", 0.1)])
    config = demo_config(out / name, steps=budget, reward_weights=weights, **referee_settings)
    trainer_class = RefereeGRPOTrainer if referee_settings else GRPOTrainer
    tokenizer = load_tokenizer(warm)
    trainer = trainer_class(model=AutoModelForCausalLM.from_pretrained(warm), reward_funcs=rewards, args=config,
                            processing_class=tokenizer, train_dataset=Dataset.from_list(train))
    trainer.remove_callback(PrinterCallback)
    trainer.add_callback(GenerationBudget(budget, config.per_device_train_batch_size))
    started = time.perf_counter()
    trainer.train()
    seconds = time.perf_counter() - started
    replies = greedy_completions(trainer.model, tokenizer, [row["prompt"] for row in held_out], max_new_tokens=8)
    accuracy = reward_accuracy(get_reward("gsm8k_accuracy"), replies, answer=[row["answer"] for row in held_out])
    return {"steps": trainer.state.global_step, "zero_gradient_share": zero_gradient_share(trainer.state.log_history),
            "held_out_accuracy": accuracy, "seconds": round(seconds, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--budget", type=int, default=12800, help="completions each arm generates (default %(default)s)")
    parser.add_argument("--warm-start-steps", type=int, default=300, help="supervised steps first (default %(default)s)")
    parser.add_argument("--json", default="benchmarks/results/dynamic_sampling.json", help="where to write the results")
    args = parser.parse_args()
    torch.set_num_threads(1)
    out = Path(tempfile.mkdtemp(prefix="dynamic-sampling-"))
    warm = warm_model(out / "warm", args.warm_start_steps)
    results = {
        "plain GRPO (TRL's GRPOTrainer)": run_arm("plain", warm, args.budget, out),
        "dynamic sampling": run_arm("dynamic", warm, args.budget, out, dynamic_sampling={"max_rounds": 3}),
        "dynamic sampling + curriculum": run_arm("curriculum", warm, args.budget, out,
                                                 dynamic_sampling={"max_rounds": 3},
                                                 curriculum={"sampler": "learnability"}),
    }
    print(f"{'arm':<34} {'steps':>6} {'zero-gradient groups':>21} {'held-out accuracy':>18} {'seconds':>8}")
    for name, result in results.items():
        print(f"{name:<34} {result['steps']:>6} {result['zero_gradient_share']:>21.1%} "
              f"{result['held_out_accuracy']:>18.1%} {result['seconds']:>8.1f}")
    write_results(args.json, vars(args), results)


if __name__ == "__main__":
    main()
