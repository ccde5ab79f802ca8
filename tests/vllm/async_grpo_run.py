"""A whole run of TRL's ``AsyncGRPOTrainer`` with referee's Python tool, against a `vllm serve` on loopback.

Run as ``python async_grpo_run.py MODEL_DIR SERVER_URL DATA.jsonl OUT_DIR`` by
tests/vllm/test_async_grpo.py. Everything of TRL's asynchronous path runs as users run it: the
trainer, its rollout worker in a spawned process (generation over HTTP from the vLLM server, tool
turns on the worker's thread pool, ``environment_factory=PythonTool.factory(...)`` unpickled there,
rewards scored there), LoRA weight sync (each step's adapter written to disk and loaded by the
server under a new name). Two things of it need a CUDA GPU, and only those are replaced here:

- tree attention's kernel, FlashAttention 3 fetched from the Hugging Face hub (Hopper GPUs only),
  by :func:`varlen_attention`, the same varlen causal attention written with PyTorch's SDPA. The
  trainer's log-probs then match those vLLM sampled with (the first step's ``kl``), which a wrong
  mask would not;
- the CUDA device-name lookup for the MFU metric, by ``None`` (what TRL returns for a device whose
  peak FLOPs it does not know: MFU is not logged).

OUT_DIR gets ``log.json`` (the trainer's log history) and ``scored.jsonl`` (every completion the
worker scored, its gold and its ``gsm8k_accuracy`` reward).
"""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F


def varlen_attention(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, cu_seqlens_q: torch.Tensor,
                     cu_seqlens_k: torch.Tensor, max_seqlen_q: int, max_seqlen_k: int,
                     softmax_scale: float | None = None, causal: bool = True,
                     window_size: tuple[int, int] = (-1, -1), **_: Any) -> torch.Tensor:
    """``flash_attn_varlen_func``'s result for packed ``(tokens, heads, dim)`` inputs: each segment's queries
    attend to its own keys, causal aligned to the bottom right (a query segment shorter than its keys sees
    the keys before it), grouped-query heads repeated."""
    assert causal and tuple(window_size) == (-1, -1), "only the causal, unwindowed attention tree packing asks for"
    outputs = []
    for i in range(len(cu_seqlens_q) - 1):
        q = query[cu_seqlens_q[i]:cu_seqlens_q[i + 1]].transpose(0, 1)
        k = key[cu_seqlens_k[i]:cu_seqlens_k[i + 1]].transpose(0, 1)
        v = value[cu_seqlens_k[i]:cu_seqlens_k[i + 1]].transpose(0, 1)
        groups = q.shape[0] // k.shape[0]
        k, v = k.repeat_interleave(groups, 0), v.repeat_interleave(groups, 0)
        mask = torch.ones(q.shape[1], k.shape[1], dtype=torch.bool).tril(k.shape[1] - q.shape[1])
        outputs.append(F.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=softmax_scale).transpose(0, 1))
    return torch.cat(outputs)


class ScoredLog:
    """``gsm8k_accuracy`` as a reward function that also appends what it scored to a JSONL file (a callable
    instance, so that the spawned rollout worker can unpickle it)."""

    __name__ = "gsm8k_accuracy"

    def __init__(self, path: str) -> None:
        self.path = path

    def __call__(self, completions: list[Any], answer: list[str], **kwargs: Any) -> list[float | None]:
        from referee.rewards import get_reward

        scores = get_reward("gsm8k_accuracy")(completions=completions, answer=answer, **kwargs)
        with open(self.path, "a", encoding="utf-8") as log:
            for completion, gold, score in zip(completions, answer, scores):
                log.write(json.dumps({"completion": completion, "answer": gold, "score": score}) + "\n")
        return scores


def main(model_dir: str, server_url: str, data: str, out_dir: str) -> None:
    from datasets import Dataset
    from peft import LoraConfig
    from trl.experimental.async_grpo import AsyncGRPOConfig, AsyncGRPOTrainer, async_grpo_trainer, packing

    from referee.recipes.common.tiny_model import build_tool_tokenizer
    from referee.rewards import parse_reward_sum
    from referee.rewards.tools import PythonTool
    from referee.verifiers.code import CellLimits

    packing._flash_attn = lambda: types.SimpleNamespace(flash_attn_varlen_func=varlen_attention)
    async_grpo_trainer.get_peak_flops_per_device = lambda accelerator, dtype: None

    rows = [json.loads(line) for line in Path(data).read_text(encoding="utf-8").splitlines()]
    args = AsyncGRPOConfig(output_dir=out_dir, vllm_server_base_url=server_url, dtype="float32", use_cpu=True,
                           max_steps=3, num_generations=4, per_device_train_batch_size=8, max_completion_length=64,
                           max_tool_calling_iterations=1, temperature=1.0, learning_rate=1e-4, weight_sync_steps=1,
                           max_staleness=1, logging_steps=1, report_to="none", save_strategy="no")
    trainer = AsyncGRPOTrainer(
        model=model_dir, args=args, train_dataset=Dataset.from_list(rows), processing_class=build_tool_tokenizer(),
        reward_funcs=[ScoredLog(str(Path(out_dir) / "scored.jsonl")), parse_reward_sum("0.1*tool_use")],
        environment_factory=PythonTool.factory(CellLimits(timeout=5.0), max_calls=2),
        peft_config=LoraConfig(r=8, lora_alpha=16, target_modules=["q_proj", "v_proj"]))
    trainer.train()
    (Path(out_dir) / "log.json").write_text(json.dumps(trainer.state.log_history), encoding="utf-8")


if __name__ == "__main__":
    main(*sys.argv[1:5])
