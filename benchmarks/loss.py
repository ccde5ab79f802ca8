"""Loss-aggregation layer: what RefereeGRPOTrainer costs over plain TRL, side by side in one run.

For each rule, RefereeGRPOTrainer is compared with TRL's GRPOTrainer running the loss type
whose aggregation it equals (token/dapo, token-local/bnpo, sequence/grpo, constant/dr_grpo,
sequence-sum/luspo), on the same model weights and the same buffered batches:

* the layer's own work (the context, the weights, the advantage scale, the dict copy),
  timed alone, many times;
* ``compute_loss`` + backward over one accumulation window, the two trainers interleaved;
* a whole optimizer step (generation, rewards, loss, backward, optimizer), from TRL's
  ``step_time`` metric, the two trainers' runs interleaved.

Times are the fastest of N (the same work each time, so the fastest is the least disturbed by
other load on a shared machine). The overhead is reported as a share of the step time. The
model is the demo's ~0.6M-parameter
Qwen2 with a character tokenizer: the smallest step, so the largest share. Prompts are GSM8K
questions (cut to fit the tiny model's context).

    python -m benchmarks.loss --data ../shared/data/gsm8k_test.jsonl
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
from datasets import Dataset
from trl import GRPOTrainer

from referee.recipes.common.loading import load_tokenizer
from referee.recipes.common.tiny_model import save_tiny_model
from referee.recipes.train.config import build_grpo_config
from referee.recipes.train.loss import get_aggregation
from referee.recipes.train.trainer import RefereeGRPOTrainer, advantage_scale

PAIRS = {"token": "dapo", "token-local": "bnpo", "sequence": "grpo", "constant": "dr_grpo", "sequence-sum": "luspo"}
RESULTS = Path(__file__).resolve().parent / "results" / "loss.json"


def prompts_from(path: str, count: int, width: int) -> Dataset:
    rows = []
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            if line.strip() and len(rows) < count:
                rows.append({"prompt": [{"role": "user", "content": json.loads(line)["question"][:width]}]})
    return Dataset.from_list(rows)


def digit_share(completions: list[Any], **kwargs: Any) -> list[float]:
    """A cheap reward with spread (share of digits), so advantages are not all zero."""
    texts = [c[-1]["content"] if isinstance(c, list) else c for c in completions]
    return [sum(ch.isdigit() for ch in text) / max(len(text), 1) for text in texts]


def make_trainer(cls: type, model_dir: str, out: str, dataset: Dataset, args: argparse.Namespace, **settings: Any) -> Any:
    config = build_grpo_config(
        out, profile="cpu", per_device_train_batch_size=args.batch, num_generations=8,
        gradient_accumulation_steps=args.accumulation, max_completion_length=args.completion_length,
        max_steps=args.steps, logging_steps=1, save_strategy="no", report_to="none", learning_rate=1e-4,
        disable_tqdm=True, seed=0, **settings,
    )
    trainer = cls(model=model_dir, reward_funcs=digit_share, args=config, train_dataset=dataset,
                  processing_class=load_tokenizer(model_dir))
    trainer.model.train()
    trainer.current_gradient_accumulation_steps = args.accumulation
    return trainer


def window(trainer: Any) -> list[dict[str, Any]]:
    """One generated and buffered accumulation window of micro-batches."""
    torch.manual_seed(0)
    trainer._prepare_inputs(next(iter(trainer.get_train_dataloader())))
    return list(trainer._buffered_inputs)


def no_sync() -> None:
    """Nothing to wait for: CPU work is done when the call returns (pass ``torch.cuda.synchronize`` on a GPU)."""


def loss_backward_seconds(trainer: Any, batches: list[dict[str, Any]], synchronize: Callable[[], None] = no_sync) -> float:
    trainer.model.zero_grad(set_to_none=True)
    synchronize()
    started = time.perf_counter()
    for batch in batches:
        trainer.compute_loss(trainer.model, batch).backward()
    synchronize()
    return time.perf_counter() - started


def layer_seconds(trainer: Any, batches: list[dict[str, Any]], repeats: int,
                  synchronize: Callable[[], None] = no_sync) -> float:
    """The layer's own work per accumulation window, fastest of ``repeats``."""
    times = []
    for _ in range(repeats):
        synchronize()
        started = time.perf_counter()
        for batch in batches:
            context = trainer._aggregation_context(batch)
            scale = advantage_scale(trainer.aggregation, context)
            advantages = batch["advantages"].unsqueeze(1)
            _ = {**batch, "advantages": advantages * scale}
        synchronize()
        times.append(time.perf_counter() - started)
    return min(times)


def step_seconds(trainer_factory: Any, rounds: int) -> list[float]:
    times = []
    for _ in range(rounds):
        trainer = trainer_factory()
        with contextlib.redirect_stdout(io.StringIO()):
            trainer.train()
        times += [entry["step_time"] for entry in trainer.state.log_history if "step_time" in entry][1:]
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", required=True, help="GSM8K-format JSONL (questions are the prompts)")
    parser.add_argument("--batch", type=int, default=32, help="completions per micro-batch (default 32)")
    parser.add_argument("--accumulation", type=int, default=2, help="micro-batches per optimizer step (default 2)")
    parser.add_argument("--completion-length", type=int, default=32, help="max completion tokens (default 32)")
    parser.add_argument("--steps", type=int, default=3, help="optimizer steps per timed run, the first not timed (default 3)")
    parser.add_argument("--rounds", type=int, default=6, help="interleaved runs per trainer (default 6)")
    parser.add_argument("--repeats", type=int, default=20, help="timed loss+backward windows per trainer (default 20)")
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    folder = tempfile.mkdtemp()
    model_dir = str(save_tiny_model(Path(folder) / "model"))
    dataset = prompts_from(args.data, 256, 120)

    rows = []
    for rule, loss_type in PAIRS.items():
        def trl_trainer() -> Any:
            return make_trainer(GRPOTrainer, model_dir, folder + "/trl", dataset, args, loss_type=loss_type)

        def referee_trainer() -> Any:
            return make_trainer(RefereeGRPOTrainer, model_dir, folder + "/referee", dataset, args,
                                loss_aggregation=rule)

        trl, referee = trl_trainer(), referee_trainer()
        batches = window(trl)
        loss_times: dict[str, list[float]] = {"trl": [], "referee": []}
        for _ in range(args.repeats):
            loss_times["trl"].append(loss_backward_seconds(trl, batches))
            loss_times["referee"].append(loss_backward_seconds(referee, batches))
        own = layer_seconds(referee, batches, args.repeats * 10)
        step_times: dict[str, list[float]] = {"trl": [], "referee": []}
        for _ in range(args.rounds):
            step_times["trl"] += step_seconds(trl_trainer, 1)
            step_times["referee"] += step_seconds(referee_trainer, 1)
        trl_loss, referee_loss = (min(loss_times[k]) for k in ("trl", "referee"))
        trl_step, referee_step = (min(step_times[k]) for k in ("trl", "referee"))
        rows.append({
            "rule": rule, "trl_loss_type": loss_type, "base_loss_type": get_aggregation(rule).base_loss_type,
            "layer_ms_per_step": 1000 * own,
            "loss_backward_ms_trl": 1000 * trl_loss, "loss_backward_ms_referee": 1000 * referee_loss,
            "step_ms_trl": 1000 * trl_step, "step_ms_referee": 1000 * referee_step,
            "layer_share_of_step": own / trl_step,
            "loss_backward_ratio": referee_loss / trl_loss,
            "step_ratio": referee_step / trl_step,
        })

    header = (f"{'rule':<13} {'vs TRL':<8} {'layer ms':>9} {'layer/step':>11} {'loss+bwd ratio':>15} "
              f"{'step ms TRL':>12} {'step ratio':>11}")
    print(f"RefereeGRPOTrainer vs TRL {__import__('trl').__version__} GRPOTrainer, same weights and batches; "
          f"micro-batch {args.batch} x {args.accumulation}, completions <= {args.completion_length} tokens, "
          f"{args.threads} thread(s)")
    print(header)
    print("-" * len(header))
    for row in rows:
        print(f"{row['rule']:<13} {row['trl_loss_type']:<8} {row['layer_ms_per_step']:>9.3f} "
              f"{row['layer_share_of_step']:>10.3%} {row['loss_backward_ratio']:>15.3f} "
              f"{row['step_ms_trl']:>12.1f} {row['step_ratio']:>11.3f}")
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps({"settings": vars(args), "rows": rows}, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
