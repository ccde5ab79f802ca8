"""A CPU run where the Python tool helps: sums of large numbers, with the tool against without.

The demo's tiny model (character tokenizer, ~0.6M parameters, built locally) cannot add two
``--digits``-digit numbers in its head. Two copies of one initialisation are warm-started on the
same problems for the same number of steps: one on traces that call the Python tool
(``print(a+b)``) and copy its output as the answer, one on traces that write the answer directly.
Each is then trained with GRPO (``RefereeGRPOTrainer``, ``gsm8k_accuracy``): the tool arm with
``environment_factory=PythonTool.factory(...)`` (cells in referee's sandbox, each tool turn's cells
at once), the other without tools. Held-out accuracy (greedy, sums never trained on) is measured
after the warm start and after GRPO, side by side in one process run.

    python -m benchmarks.tool_training [--digits 5] [--sft-steps 600] [--grpo-steps 30] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

from referee.recipes.common.tiny_model import build_tiny_model, build_tool_tokenizer
from referee.recipes.train.tool_calls import python_calls
from referee.rewards import get_reward
from referee.rewards.tools import PythonTool
from referee.verifiers.code import CellLimits

RESULTS = "benchmarks/results/tool_training.json"
ARMS = ("with the tool", "without")


def sum_rows(count: int, digits: int, seed: int) -> list[dict[str, Any]]:
    """``count`` problems ``a+b`` of ``digits``-digit numbers, as chat prompts with a ``#### N`` gold
    (``gsm8k_accuracy`` reads the answer's last number).

    Example:
        >>> sum_rows(1, 3, 0)[0]["answer"].startswith("#### ")
        True
    """
    draw = random.Random(seed)
    rows = []
    for _ in range(count):
        a, b = (draw.randrange(10 ** (digits - 1), 10 ** digits) for _ in range(2))
        rows.append({"prompt": [{"role": "user", "content": f"{a}+{b}"}], "answer": f"#### {a + b}", "a": a, "b": b})
    return rows


def trace(row: dict[str, Any], with_tool: bool) -> list[dict[str, Any]]:
    """A worked conversation for the warm start: the tool's call, its output and the answer, or the answer alone."""
    total = row["a"] + row["b"]
    if not with_tool:
        return [*row["prompt"], {"role": "assistant", "content": str(total)}]
    call = {"type": "function", "function": {"name": "python", "arguments": {"code": f"print({row['a']}+{row['b']})"}}}
    return [*row["prompt"], {"role": "assistant", "content": "", "tool_calls": [call]},
            {"role": "tool", "name": "python", "content": str(total)}, {"role": "assistant", "content": str(total)}]


def assistant_tokens(tokenizer: Any, messages: Sequence[dict[str, Any]]) -> tuple[list[int], list[int]]:
    """The conversation's token ids and a mask that is 1 on the assistant's own tokens only (never a tool's)."""
    ids: list[int] = []
    mask: list[int] = []
    for index, message in enumerate(messages):
        upto = tokenizer.apply_chat_template(list(messages[:index + 1]), tokenize=True, return_dict=False)
        if message["role"] == "assistant":
            header = tokenizer.apply_chat_template(list(messages[:index]), tokenize=True, return_dict=False,
                                                   add_generation_prompt=True)
            mask += [0] * (len(header) - len(ids)) + [1] * (len(upto) - len(header))
        else:
            mask += [0] * (len(upto) - len(ids))
        ids = upto
    return ids, mask


def warm_start(model: Any, tokenizer: Any, rows: Sequence[dict[str, Any]], with_tool: bool, steps: int,
               batch: int = 32, learning_rate: float = 1e-3, seed: int = 0) -> float:
    """Supervised steps on the arm's traces (loss on the assistant's tokens); the last step's loss."""
    examples = [assistant_tokens(tokenizer, trace(row, with_tool)) for row in rows]
    optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate)
    draw = random.Random(seed)
    model.train()
    loss = torch.tensor(0.0)
    for _ in range(steps):
        chosen = [examples[draw.randrange(len(examples))] for _ in range(batch)]
        width = max(len(ids) for ids, _ in chosen)
        ids = torch.tensor([i + [tokenizer.pad_token_id] * (width - len(i)) for i, _ in chosen])
        mask = torch.tensor([m + [0] * (width - len(m)) for _, m in chosen])
        labels = ids.masked_fill(mask == 0, -100)
        loss = model(input_ids=ids, attention_mask=(torch.arange(width)[None] < torch.tensor(
            [len(i) for i, _ in chosen])[:, None]).long(), labels=labels).loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return float(loss)


def _generate(model: Any, tokenizer: Any, prompts: list[list[int]], max_new_tokens: int) -> list[list[int]]:
    """Greedy continuations of ``prompts``, each cut after its end-of-turn token."""
    width = max(map(len, prompts))
    ids = torch.tensor([[tokenizer.pad_token_id] * (width - len(p)) + p for p in prompts])
    attention = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in prompts])
    with torch.no_grad():
        out = model.generate(input_ids=ids, attention_mask=attention, max_new_tokens=max_new_tokens, do_sample=False,
                             eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id)
    replies = []
    for row in out[:, width:].tolist():
        replies.append(row[:row.index(tokenizer.eos_token_id) + 1] if tokenizer.eos_token_id in row else row)
    return replies


def held_out_accuracy(model: Any, tokenizer: Any, rows: Sequence[dict[str, Any]], tools: bool,
                      max_new_tokens: int = 96) -> dict[str, float]:
    """Greedy accuracy on ``rows`` (``gsm8k_accuracy`` on the last assistant message); with ``tools``, a
    reply's ``python`` calls run in a fresh :class:`PythonTool` per row and the model answers once more."""
    from trl.chat_template_utils import parse_response

    model.eval()
    prompts = [tokenizer.apply_chat_template(row["prompt"], tokenize=True, return_dict=False, add_generation_prompt=True)
               for row in rows]
    replies = _generate(model, tokenizer, prompts, max_new_tokens)
    completions = [[parse_response(tokenizer, reply, prefix=prompt)] for prompt, reply in zip(prompts, replies)]
    calls = 0
    if tools:
        follow = []
        for index, (prompt, reply) in enumerate(zip(prompts, replies)):
            codes = python_calls(completions[index][0])
            if not codes:
                continue
            tool = PythonTool(CellLimits(timeout=5.0), max_calls=2)
            outputs = [tool.python(code) for code in codes]
            tool._close()
            calls += len(codes)
            completions[index] += [{"role": "tool", "name": "python", "content": out} for out in outputs]
            suffix = "".join(f"\nt:{out}" for out in outputs) + "\na:"
            follow.append((index, prompt + reply + tokenizer.encode(suffix, add_special_tokens=False)))
        if follow:
            again = _generate(model, tokenizer, [ids for _, ids in follow], max_new_tokens)
            for (index, ids), reply in zip(follow, again):
                completions[index].append(parse_response(tokenizer, reply, prefix=ids))
    scores = get_reward("gsm8k_accuracy")(completions=completions, answer=[row["answer"] for row in rows])
    return {"accuracy": sum(score or 0.0 for score in scores) / len(rows), "tool_calls_per_row": calls / len(rows)}


def grpo(model: Any, tokenizer: Any, rows: Sequence[dict[str, Any]], with_tool: bool, steps: int, output_dir: str,
         seed: int = 0) -> dict[str, float]:
    """GRPO steps with ``gsm8k_accuracy`` (the tool arm with PythonTool environments); the trained model
    stays in ``model``. Returns the mean reward of the first and the last steps."""
    from datasets import Dataset

    from referee.recipes.train.config import build_grpo_config
    from referee.recipes.train.trainer import RefereeGRPOTrainer

    args = build_grpo_config(output_dir, profile="cpu", per_device_train_batch_size=16, num_generations=8,
                             max_completion_length=128, max_steps=steps, learning_rate=2e-5, temperature=1.0,
                             report_to="none", save_strategy="no", seed=seed, disable_tqdm=True, logging_steps=1,
                             max_tool_calling_iterations=1 if with_tool else None)
    dataset = Dataset.from_list([{"prompt": row["prompt"], "answer": row["answer"]} for row in rows])
    trainer = RefereeGRPOTrainer(model=model, reward_funcs=[get_reward("gsm8k_accuracy")], args=args,
                                 processing_class=tokenizer, train_dataset=dataset,
                                 environment_factory=PythonTool.factory(CellLimits(timeout=5.0), max_calls=2)
                                 if with_tool else None)
    trainer.train()
    rewards = [entry["reward"] for entry in trainer.state.log_history if "reward" in entry]
    for tool in (getattr(trainer, "_environment_pool", None) or {}).get(None, []):
        tool._close()
    return {"first_reward": rewards[0] if rewards else float("nan"), "last_reward": rewards[-1] if rewards else float("nan")}


def run(digits: int, sft_steps: int, grpo_steps: int, train_rows: int, held_out: int, seed: int,
        output_dir: str) -> dict[str, Any]:
    """Both arms from one initialisation: warm start, held-out accuracy, GRPO, held-out accuracy."""
    tokenizer = build_tool_tokenizer()
    train = sum_rows(train_rows, digits, seed)
    test = sum_rows(held_out, digits, seed + 1)
    seen = {(row["a"], row["b"]) for row in train}
    test = [row for row in test if (row["a"], row["b"]) not in seen]
    arms: dict[str, Any] = {}
    for arm in ARMS:
        with_tool = arm == "with the tool"
        torch.manual_seed(seed)
        model = build_tiny_model(tokenizer, seed=seed)
        started = time.monotonic()
        loss = warm_start(model, tokenizer, train, with_tool, sft_steps, seed=seed)
        warm = held_out_accuracy(model, tokenizer, test, tools=with_tool)
        trained = grpo(model, tokenizer, train, with_tool, grpo_steps, f"{output_dir}/{'tool' if with_tool else 'plain'}",
                       seed=seed)
        after = held_out_accuracy(model, tokenizer, test, tools=with_tool)
        arms[arm] = {"warm_start_loss": loss, "after_warm_start": warm, "grpo": trained, "after_grpo": after,
                     "seconds": time.monotonic() - started}
    return {"benchmark": "tool_training", "digits": digits, "sft_steps": sft_steps, "grpo_steps": grpo_steps,
            "train_rows": len(train), "held_out_rows": len(test), "seed": seed, "arms": arms,
            "machine": {"cpu_count": __import__("os").cpu_count(), "python": platform.python_version(),
                        "torch": torch.__version__}}


def table(result: dict[str, Any]) -> str:
    """The result as a text table."""
    lines = [f"{'arm':<14} {'after warm start':>17} {'after GRPO':>11} {'tool calls/row':>15} {'reward first->last':>19} "
             f"{'seconds':>8}"]
    for arm, data in result["arms"].items():
        grpo_rewards = data["grpo"]
        lines.append(f"{arm:<14} {data['after_warm_start']['accuracy']:>17.1%} {data['after_grpo']['accuracy']:>11.1%} "
                     f"{data['after_grpo']['tool_calls_per_row']:>15.2f} "
                     f"{grpo_rewards['first_reward']:>9.2f} -> {grpo_rewards['last_reward']:<6.2f} {data['seconds']:>8.0f}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark, print the table, write the JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--digits", type=int, default=5)
    parser.add_argument("--sft-steps", type=int, default=600)
    parser.add_argument("--grpo-steps", type=int, default=30)
    parser.add_argument("--train-rows", type=int, default=20000)
    parser.add_argument("--held-out", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--output-dir", default="runs/tool_training")
    parser.add_argument("--json", default=RESULTS)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    result = run(args.digits, args.sft_steps, args.grpo_steps, args.train_rows, args.held_out, args.seed,
                 args.output_dir)
    print(table(result))
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps(result, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
