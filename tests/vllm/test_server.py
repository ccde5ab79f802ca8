"""`referee train` with ``vllm_mode: server`` against `trl vllm-serve` on loopback, started and stopped here.

The trainer is on the CPU, where TRL's NCCL weight transfer cannot run; referee hands the weights
over in a file that the server loads with its worker extension. After training, the server's
log-probs of a fixed completion are those of the checkpoint it was last synced to (the one
before the last optimizer step), not those of the starting model nor of the final one.
"""

from __future__ import annotations

import json
import sys
import urllib.request
from pathlib import Path

import pytest
import torch
from transformers import AutoModelForCausalLM

from referee.recipes.common.loading import load_tokenizer
from referee.recipes.train.recipe import write_recipe
from referee.recipes.train.sync_check import completion_ids, model_logprobs
from referee.recipes.train.vllm_cpu_server import EXTENSION

pytestmark = pytest.mark.slow
TOLERANCE = 1e-4  # float32 on both sides


@pytest.fixture
def server(model_dir, engine_env, tmp_path, loopback_server):
    """`trl vllm-serve` on 127.0.0.1 in float32 with referee's worker extension; stopped (its whole session) after."""
    trl = str(Path(sys.executable).with_name("trl"))
    with loopback_server(lambda port: [trl, "vllm-serve", "--model", model_dir, "--host", "127.0.0.1", "--port",
                                       str(port), "--dtype", "float32", "--max_model_len", "128",
                                       "--worker-extension-cls", EXTENSION],
                         engine_env, tmp_path / "server.log") as port:
        yield port


def server_logprobs(port: int, model: str, ids: list[int], prompt_length: int) -> torch.Tensor:
    body = json.dumps({"model": model, "prompt": ids, "max_tokens": 1, "prompt_logprobs": 0}).encode()
    request = urllib.request.Request(f"http://127.0.0.1:{port}/v1/completions", body,
                                     {"Content-Type": "application/json"})
    answer = json.loads(urllib.request.urlopen(request, timeout=60).read())
    logprobs = answer["choices"][0]["prompt_logprobs"]
    return torch.tensor([logprobs[i][str(ids[i])]["logprob"] for i in range(prompt_length, len(ids))])


def test_server_mode_trains_and_the_server_gets_each_steps_weights(tmp_path, model_dir, sums_jsonl, server,
                                                                     run_referee):
    out = tmp_path / "out"
    recipe = write_recipe(
        tmp_path / "recipe.yaml", model_name_or_path=model_dir, dataset_name=str(sums_jsonl), dataset_format="gsm8k",
        system_prompt="", reward_funcs=["gsm8k_accuracy", {"name": "regex_format", "weight": 0.5,
                                                           "options": {"pattern": "[0-9]"}}],
        output_dir=str(out), use_cpu=True, bf16=False, use_vllm=True, vllm_mode="server",
        vllm_server_host="127.0.0.1", vllm_server_port=server, activation_checkpointing=False,
        per_device_train_batch_size=4, num_generations=4, max_completion_length=8, learning_rate=3e-4,
        lr_scheduler_type="constant", max_steps=3, logging_steps=1, save_strategy="steps", save_steps=1,
        report_to="none", seed=0, disable_tqdm=True)
    done = run_referee("train", str(recipe))
    assert done.returncode == 0, done.stderr[-4000:]
    assert "Traceback" not in done.stderr, done.stderr[-4000:]
    history = [entry for entry in json.loads((out / "trainer_state.json").read_text())["log_history"] if "loss" in entry]
    assert len(history) == 3
    assert all(entry["sampling/sampling_logp_difference/max"] < TOLERANCE for entry in history)

    ids, prompt_length = completion_ids(load_tokenizer(model_dir))
    served = server_logprobs(server, model_dir, ids, prompt_length)

    def gap(folder) -> float:
        model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32)
        return float((served - model_logprobs(model, ids, prompt_length)).abs().max())

    assert gap(out / "checkpoint-2") < TOLERANCE  # the weights of the last sync (before step 3's generation)
    assert gap(model_dir) > 100 * TOLERANCE  # the server did not keep the starting weights
    assert gap(out) > 100 * TOLERANCE  # nor did it get step 3's, which no generation followed
