"""TRL's ``AsyncGRPOTrainer`` with referee's ``PythonTool``: a whole run against `vllm serve` on the CPU.

The tiny model is warm-started here to call the tool for sums of 3-digit numbers (which it cannot
do in its head) and to copy the tool's output as its answer; `vllm serve` (with LoRA and the
development endpoints the trainer pauses and loads adapters through) serves it; the run itself is
tests/vllm/async_grpo_run.py in a child process, as users run it (what in it is replaced, and why,
is said there).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from benchmarks.tool_training import sum_rows, warm_start
from referee.recipes.common.tiny_model import build_tiny_model, build_tool_tokenizer
from referee.rewards import completion_text

pytestmark = pytest.mark.slow
RUN = Path(__file__).with_name("async_grpo_run.py")


@pytest.fixture(scope="module")
def tool_model_dir(tmp_path_factory) -> str:
    """The tool tokenizer's tiny model (512 positions: room for a tool turn), warm-started on traces that
    call the tool for 3-digit sums."""
    tokenizer = build_tool_tokenizer()
    model = build_tiny_model(tokenizer, max_positions=512)
    warm_start(model, tokenizer, sum_rows(256, 3, seed=1), with_tool=True, steps=300)
    path = tmp_path_factory.mktemp("tool_model")
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return str(path)


def test_async_grpo_trains_with_the_python_tool_through_a_vllm_server(tool_model_dir, engine_env, loopback_server,
                                                                       run_python, tmp_path):
    data = tmp_path / "sums.jsonl"
    data.write_text("".join(json.dumps({"prompt": row["prompt"], "answer": row["answer"]}) + "\n"
                            for row in sum_rows(64, 3, seed=2)), encoding="utf-8")
    vllm = str(Path(sys.executable).with_name("vllm"))
    server_env = {**engine_env, "VLLM_SERVER_DEV_MODE": "1", "VLLM_ALLOW_RUNTIME_LORA_UPDATING": "1"}
    out = tmp_path / "out"
    with loopback_server(lambda port: [vllm, "serve", tool_model_dir, "--host", "127.0.0.1", "--port", str(port),
                                       "--dtype", "float32", "--max-model-len", "512", "--enable-lora",
                                       "--max-lora-rank", "8", "--max-loras", "4"],
                         server_env, tmp_path / "server.log") as port:
        run = run_python(str(RUN), tool_model_dir, f"http://127.0.0.1:{port}", str(data), str(out))
    assert run.returncode == 0, run.stderr[-4000:]
    steps = [entry for entry in json.loads((out / "log.json").read_text()) if "loss" in entry]
    assert len(steps) == 3

    # The tool ran in the spawned rollout worker, its turns were masked out of the loss, and the policy
    # answered sums it cannot do in its head: the tool's output reached its next turn.
    assert all(step["tools/call_frequency"] > 0.3 for step in steps), steps
    assert all(step["batch/masked_token_frac"] > 0 for step in steps), steps
    assert sum(step["rewards/gsm8k_accuracy"] for step in steps) / 3 > 0.2, steps
    # Each step's adapter was written and synced to the server; some step had a learning signal.
    assert all(step["perf/weight_sync_s"] > 0 for step in steps), steps
    assert any(step["grad_norm"] > 0 for step in steps), steps
    # The substitute attention kernel agrees with vLLM's: before any update, the trainer's log-probs are
    # the ones the server sampled with.
    assert steps[0]["sample/staleness_mean"] == 0 and abs(steps[0]["kl"]) < 1e-3, steps[0]

    # The worker hands the reward conversations with tool turns; a reward is paid for the final assistant
    # message only, never for a sum that only the tool printed.
    scored = [json.loads(line) for line in (out / "scored.jsonl").read_text().splitlines()]
    with_tool = [row for row in scored if any(message["role"] == "tool" for message in row["completion"])]
    assert with_tool and any(row["score"] == 1.0 for row in with_tool)
    for row in scored:
        gold = row["answer"].removeprefix("#### ")
        final = completion_text(row["completion"])
        if row["score"] == 1.0:
            assert gold in final, row
        tool_said_it = any(message["role"] == "tool" and gold in message["content"] for message in row["completion"])
        if tool_said_it and gold not in final:
            assert row["score"] == 0.0, row
