"""`referee train --list` and the 8 GB recipe (seed 003's LoRA + ZeRO-2 offload set-up on one card)."""

from __future__ import annotations

import json

import pytest
import yaml

from referee.recipes.cli import main
from referee.recipes.plan import GB
from referee.recipes.plan.model_params import count_lora_parameters, model_shape
from referee.recipes.plan.sharding import Sharding, read_accelerate_config
from referee.recipes.train.recipe import parse_recipe, resolve_rewards
from referee.recipes.train.shipped import CONFIG_DIR, recipe_path, shipped_recipes, summarize_recipe

EIGHT_GB = "gsm8k_r1-distill-qwen-1.5b_lora_8gb"
OFFLOAD = CONFIG_DIR / "accelerate_zero2_offload.yaml"
# The architecture numbers of deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B's config.json (Qwen2.5-Math-1.5B's
# shape with untied embeddings: 1,777,088,000 parameters).
R1_DISTILL_1_5B = {
    "architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "hidden_size": 1536,
    "intermediate_size": 8960, "num_hidden_layers": 28, "num_attention_heads": 12,
    "num_key_value_heads": 2, "vocab_size": 151936, "max_position_embeddings": 131072,
    "tie_word_embeddings": False, "torch_dtype": "bfloat16", "rms_norm_eps": 1e-06, "rope_theta": 10000,
}
BASE_PARAMS = 1_777_088_000
# LoRA r=16 on q, k, v, o of 28 layers: (1536*16 + 16*1536) + 2 * (1536*16 + 16*256) + (1536*16 + 16*1536).
ADAPTER_PARAMS = 28 * (49_152 + 2 * 28_672 + 49_152)


@pytest.fixture
def r1_folder(tmp_path):
    folder = tmp_path / "r1-distill-qwen-1.5b"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(R1_DISTILL_1_5B))
    return folder


def test_list_prints_model_data_and_rewards_of_every_shipped_recipe(capsys):
    assert main(["train", "--list"]) == 0
    header, *rows, footer = capsys.readouterr().out.splitlines()
    assert header.split() == ["recipe", "model", "data", "rewards", "(weight)"]
    assert [row.split()[0] for row in rows] == [path.stem for path in shipped_recipes()]
    by_name = {row.split()[0]: " ".join(row.split()[1:]) for row in rows}
    assert by_name["gsm8k_qwen2.5-1.5b_full"] == (
        "Qwen/Qwen2.5-1.5B-Instruct, full openai/gsm8k (main) gsm8k_accuracy (1), gsm8k_format (0.1)")
    assert by_name["math_qwen2.5-1.5b_lora"] == ("Qwen/Qwen2.5-1.5B-Instruct, LoRA r=16 "
                                                 "DigitalLearningGmbH/MATH-lighteval math_accuracy (1), boxed_format (0.1)")
    assert by_name[EIGHT_GB].startswith("deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B, LoRA r=16 openai/gsm8k (main)")
    assert not any(".yaml" in row or str(CONFIG_DIR) in row for row in rows)  # names, not file paths
    assert footer.endswith(str(CONFIG_DIR))


@pytest.mark.parametrize("path", shipped_recipes(), ids=lambda path: path.stem)
def test_listed_rewards_are_those_the_trainer_gets(path):
    recipe = parse_recipe(str(path), ["--use_cpu", "true", "--bf16", "false"])
    funcs, weights = resolve_rewards(recipe)
    listed = ", ".join(f"{func.__name__} ({weight:g})" for func, weight in zip(funcs, weights))
    assert summarize_recipe(path).rewards == listed
    assert summarize_recipe(path).model.startswith(recipe.model.model_name_or_path + ", ")
    assert ("LoRA r=" in summarize_recipe(path).model) is recipe.model.use_peft


def test_the_8_gb_recipe_resolves_to_the_seed_set_up(capsys):
    assert main(["train", EIGHT_GB, "--dry-run"]) == 0
    header, _, body = capsys.readouterr().out.partition("\n")
    assert header.startswith(f"# {recipe_path(EIGHT_GB)} resolved with TRL 1.16.0")
    resolved = yaml.safe_load(body)
    model, training = resolved["model"], resolved["training"]
    assert model["model_name_or_path"] == "deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B"
    assert (model["use_peft"], model["lora_r"], model["lora_alpha"]) == (True, 16, 32)
    assert model["lora_target_modules"] == ["q_proj", "k_proj", "v_proj", "o_proj"]
    assert (training["num_generations"], training["beta"], training["learning_rate"]) == (4, 0.04, 5e-5)
    assert (training["per_device_train_batch_size"], training["gradient_accumulation_steps"]) == (1, 8)
    assert (training["max_grad_norm"], training["bf16"], training["use_vllm"]) == (1.0, True, False)
    assert resolved["recipe"]["dataset_name"] == "openai/gsm8k"
    assert resolved["rewards"] == {"gsm8k_accuracy": 1.0, "gsm8k_format": 0.1}


def test_the_offload_accelerate_config_is_zero_2_with_the_optimizer_on_cpu():
    launch = read_accelerate_config(OFFLOAD)
    assert launch.sharding == Sharding(stage=2, offload_optimizer=True, offload_params=False, source="deepspeed")
    assert launch.num_processes == 1
    assert f"--config_file {OFFLOAD.name} -m referee.recipes.cli train" in OFFLOAD.read_text()


def test_the_8_gb_recipe_fits_an_8_gb_card(r1_folder, capsys):
    argv = ["plan", EIGHT_GB, "--model", str(r1_folder), "--gpu-memory", "8", "--accelerate-config", str(OFFLOAD)]
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "of 8 GB card: fits" in text and "warning" not in text
    assert main([*argv, "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert count_lora_parameters(model_shape(R1_DISTILL_1_5B), ["q_proj", "k_proj", "v_proj", "o_proj"], 16) \
        == ADAPTER_PARAMS == 4_358_144
    assert (plan["params"], plan["trainable_params"]) == (BASE_PARAMS, ADAPTER_PARAMS)
    # bf16 weights and gradients of the adapters and the frozen bf16 base on the card; Adam's 12 B per
    # adapter parameter offloaded; no reference model (the base with the adapters disabled).
    assert plan["model_states_gb"] == pytest.approx((4 * ADAPTER_PARAMS + 2 * BASE_PARAMS) / GB, abs=1e-3)
    assert plan["offloaded_gb"] == pytest.approx(12 * ADAPTER_PARAMS / GB, abs=1e-3)
    assert plan["reference_gb"] == 0.0 and plan["generation"] == "transformers"
    assert plan["sharding"] == "deepspeed ZeRO-2, optimizer offloaded to CPU"
    assert (plan["prompts_per_step"], plan["completions_per_step"]) == (2, 8)
    assert plan["fits"] and plan["headroom_gb"] > 4.0


def test_vllm_colocate_would_leave_no_room_to_train_on_8_gb(r1_folder, capsys):
    # What the recipe's comment says: vLLM's share must hold a second copy of the weights and the KV
    # cache (0.5 of the card), and what is left is less than one sequence's fp32 logits.
    base = ["plan", EIGHT_GB, "--model", str(r1_folder), "--gpu-memory", "8", "--accelerate-config", str(OFFLOAD),
            "--json", "--set", "use_vllm=true"]
    assert main([*base, "--set", "vllm_gpu_memory_utilization=0.45"]) == 0
    assert any("cannot hold" in w or "not the KV cache" in w for w in json.loads(capsys.readouterr().out)["warnings"])
    assert main([*base, "--set", "vllm_gpu_memory_utilization=0.5"]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert plan["vllm_weights_gb"] + plan["kv_cache_gb"] <= plan["vllm_gb"]
    logits_of_one_sequence = plan["sequence_length"] * R1_DISTILL_1_5B["vocab_size"] * 4 / GB
    assert plan["headroom_gb"] < 0.5 < logits_of_one_sequence
