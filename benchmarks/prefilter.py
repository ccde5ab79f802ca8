"""Pre-filter throughput on CPU with the tiny model: referee prefilter against a naive loop.

Both pipelines sample G completions per prompt from the same tiny Qwen2-style model and score
them with the same referee reward, in this one process:

* naive loop (anchor): one ``generate(num_return_sequences=G)`` call per prompt, then one
  reward call per prompt; nothing saved until the end;
* referee prefilter: ``run_prefilter`` with the transformers backend (prompts batched,
  chunks saved atomically, report and histogram written), at each ``--batch-sizes`` value.

The table gives prompts per second, the share of wall time spent generating, scoring and
on everything else (loading, chunk writes, report), and the speed as a ratio of the anchor's.
``--warm-start-steps`` first teaches the tiny model the data's answers (supervised steps on
prompt + gold), so the rewards score answer-shaped completions rather than noise.

    python -m benchmarks.prefilter --data ../shared/data/gsm8k_test.jsonl --prompt-column question \
        [--limit 32] [--num-generations 8] [--max-tokens 48] [--batch-sizes 1,8] [--warm-start-steps 0]
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
from pathlib import Path

import torch


def build_model(folder: Path, rows: list[dict], prompt_column: str, gold_column: str, steps: int, seed: int) -> str:
    """Save the tiny model (context 1024) to ``folder``, after ``steps`` supervised steps on
    prompt + gold (loss on the gold tokens only)."""
    from referee.recipes.common.tiny_model import build_char_tokenizer, build_tiny_model

    tokenizer = build_char_tokenizer()
    model = build_tiny_model(tokenizer, max_positions=1024, seed=seed)
    rng = random.Random(seed)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
    model.train()
    for _ in range(steps):
        batch = rng.sample(rows, min(32, len(rows)))
        texts = [row[prompt_column] + str(row[gold_column]) + tokenizer.eos_token for row in batch]
        encoded = tokenizer(texts, return_tensors="pt", padding=True)
        labels = encoded.input_ids.clone()
        labels[encoded.attention_mask == 0] = -100
        for index, row in enumerate(batch):
            labels[index, :len(tokenizer(row[prompt_column])["input_ids"])] = -100
        model(**encoded, labels=labels).loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    model.eval()
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return str(folder)


def naive_loop(model_dir: str, rows: list[dict], prompt_column: str, reward_name: str, args: argparse.Namespace) -> dict:
    """The anchor: per prompt, one generate call for its G samples, then one reward call."""
    from transformers import AutoModelForCausalLM

    from referee.recipes.common.loading import load_tokenizer
    from referee.rewards import get_reward

    started = time.perf_counter()
    tokenizer = load_tokenizer(model_dir)
    model = AutoModelForCausalLM.from_pretrained(model_dir).eval()
    reward = get_reward(reward_name)
    generate_s = score_s = 0.0
    passes = 0
    torch.manual_seed(args.seed)
    for row in rows:
        ids = tokenizer(row[prompt_column], return_tensors="pt")
        clock = time.perf_counter()
        with torch.inference_mode():
            output = model.generate(**ids, do_sample=True, temperature=args.temperature, num_return_sequences=args.num_generations,
                                    max_new_tokens=args.max_tokens, pad_token_id=tokenizer.pad_token_id)
        texts = tokenizer.batch_decode(output[:, ids.input_ids.shape[1]:], skip_special_tokens=True)
        generate_s += time.perf_counter() - clock
        clock = time.perf_counter()
        columns = {key: [value] * len(texts) for key, value in row.items() if key != prompt_column}
        values = reward(prompts=[row[prompt_column]] * len(texts), completions=texts, **columns)
        passes += sum(value is not None and value >= 1.0 for value in values)
        score_s += time.perf_counter() - clock
    return {"wall_s": time.perf_counter() - started, "generate_s": generate_s, "score_s": score_s, "passes": passes}


def referee_run(model_dir: str, data: str, out: Path, batch_size: int, args: argparse.Namespace) -> dict:
    from referee.recipes.prefilter import EngineOptions, KeepBounds, PrefilterConfig, SamplingOptions, run_prefilter

    config = PrefilterConfig(
        model=model_dir, data=data, rewards=(args.reward,), out=str(out), keep=KeepBounds.parse(args.keep),
        num_generations=args.num_generations, prompt_column=args.prompt_column, chunk_size=args.chunk_size,
        sampling=SamplingOptions(temperature=args.temperature, max_tokens=args.max_tokens, seed=args.seed),
        engine=EngineOptions(backend="transformers", batch_size=batch_size), progress=False,
    )
    started = time.perf_counter()
    report = run_prefilter(config)
    wall = time.perf_counter() - started
    return {"wall_s": wall, "generate_s": report["timing"]["generate_s"], "score_s": report["timing"]["score_s"],
            "passes": report["samples"]["passed"], "kept": report["kept"],
            "degenerate_before": report["degenerate_groups"]["before"],
            "degenerate_after": report["degenerate_groups"]["after"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", required=True, help="JSONL with a prompt column and a gold column")
    parser.add_argument("--prompt-column", default="prompt")
    parser.add_argument("--gold-column", default="answer", help="what --warm-start-steps teaches (default answer)")
    parser.add_argument("--reward", default="gsm8k_accuracy", help="a referee reward name (default gsm8k_accuracy)")
    parser.add_argument("--limit", type=int, default=32, help="use the first N rows (0: all)")
    parser.add_argument("--num-generations", type=int, default=8)
    parser.add_argument("--max-tokens", type=int, default=48)
    parser.add_argument("--temperature", type=float, default=1.0)
    parser.add_argument("--batch-sizes", default="1,8", help="referee --batch-size values to measure (default 1,8)")
    parser.add_argument("--chunk-size", type=int, default=16)
    parser.add_argument("--keep", default="0.125:0.875")
    parser.add_argument("--warm-start-steps", type=int, default=0, help="supervised steps before sampling (default 0)")
    parser.add_argument("--threads", type=int, default=1, help="torch threads (default 1)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=None, help="keep the last referee run's output folder here")
    parser.add_argument("--json", default="benchmarks/results/prefilter.json", help="where to write the results")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)

    lines = Path(args.data).read_text(encoding="utf-8").splitlines()
    rows = [json.loads(line) for line in lines if line.strip()]
    rows = rows[: args.limit] if args.limit else rows
    work = Path(tempfile.mkdtemp(prefix="prefilter-bench-"))
    data = work / "rows.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    model_dir = build_model(work / "model", rows, args.prompt_column, args.gold_column, args.warm_start_steps, args.seed)

    results = {"naive loop (anchor)": naive_loop(model_dir, rows, args.prompt_column, args.reward, args)}
    sizes = [int(size) for size in args.batch_sizes.split(",")]
    for size in sizes:
        out = Path(args.out) if args.out and size == sizes[-1] else work / f"run-{size}"
        results[f"referee prefilter, batch {size}"] = referee_run(model_dir, str(data), out, size, args)

    anchor = len(rows) / results["naive loop (anchor)"]["wall_s"]
    print(f"{len(rows)} prompts x {args.num_generations} samples, up to {args.max_tokens} new tokens, "
          f"reward {args.reward}, {args.threads} torch thread(s), warm start {args.warm_start_steps} steps\n")
    print("| pipeline | prompts/s | generate | score | other | x naive |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, result in results.items():
        wall = result["wall_s"]
        result["prompts_per_s"] = len(rows) / wall
        result["speed_vs_naive"] = result["prompts_per_s"] / anchor
        result["generate_share"] = result["generate_s"] / wall
        result["score_share"] = result["score_s"] / wall
        result["other_share"] = 1 - result["generate_share"] - result["score_share"]
        print(f"| {name} | {result['prompts_per_s']:.2f} | {result['generate_share']:.1%} | {result['score_share']:.2%} "
              f"| {result['other_share']:.1%} | {result['speed_vs_naive']:.2f}x |")
    last = results[f"referee prefilter, batch {sizes[-1]}"]
    print(f"\nkept {last['kept']} of {len(rows)}; predicted degenerate groups {last['degenerate_before']:.0%} -> "
          f"{'n/a' if last['degenerate_after'] is None else format(last['degenerate_after'], '.0%')}")
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps({"prompts": len(rows), "args": vars(args), "results": results}, indent=2))


if __name__ == "__main__":
    main()
