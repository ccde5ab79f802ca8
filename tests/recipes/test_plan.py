"""`referee plan`: parameter counts against transformers and peft, the seeds' worked numbers,
sharding, vLLM and KV cache, and the command line (never the network)."""

import dataclasses
import json
from pathlib import Path

import pytest
from hypothesis import given

import referee.recipes
from hypothesis import strategies as st

from referee.recipes.cli import main
from referee.recipes.plan import model_params
from referee.recipes.plan.model_params import (
    count_lora_parameters,
    count_parameters,
    kv_cache_bytes_per_token,
    model_shape,
    read_model_config,
)
from referee.recipes.plan import GB, degenerate_group_share, plan_run
from referee.recipes.plan.inputs import RECIPE_DEFAULTS, RecipeSettings
from referee.recipes.plan.sharding import LaunchConfig, Sharding, read_accelerate_config, sharding_of

# The architecture numbers of Qwen/Qwen2.5-1.5B-Instruct's config.json.
QWEN_1_5B = {
    "architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "hidden_size": 1536,
    "intermediate_size": 8960, "num_hidden_layers": 28, "num_attention_heads": 12,
    "num_key_value_heads": 2, "vocab_size": 151936, "max_position_embeddings": 32768,
    "tie_word_embeddings": True, "torch_dtype": "bfloat16", "rms_norm_eps": 1e-06,
}
SMALL = {"vocab_size": 320, "hidden_size": 64, "num_hidden_layers": 3, "num_attention_heads": 8,
         "num_key_value_heads": 2, "intermediate_size": 160}
ARCHITECTURES = {
    "qwen2.5-1.5b": QWEN_1_5B,
    "qwen2-untied": {**SMALL, "model_type": "qwen2", "tie_word_embeddings": False},
    "qwen2-tie-left-out": {**SMALL, "model_type": "qwen2"},
    "llama-untied": {**SMALL, "model_type": "llama", "tie_word_embeddings": False},
    "llama-biases": {**SMALL, "model_type": "llama", "attention_bias": True, "mlp_bias": True,
                     "tie_word_embeddings": True},
    "mistral": {**SMALL, "model_type": "mistral", "num_key_value_heads": 4},
    "qwen3-head-dim": {**SMALL, "model_type": "qwen3", "head_dim": 32, "tie_word_embeddings": True},
    "qwen3-head-dim-left-out": {**SMALL, "model_type": "qwen3"},
    "gemma": {**SMALL, "model_type": "gemma", "num_key_value_heads": 1},
}


@pytest.fixture
def qwen_folder(tmp_path):
    folder = tmp_path / "qwen2.5-1.5b-instruct"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(QWEN_1_5B))
    return folder


def _transformers_model(config):
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    fields = {key: value for key, value in config.items() if key not in ("architectures", "model_type")}
    with torch.device("meta"):
        return AutoModelForCausalLM.from_config(AutoConfig.for_model(config["model_type"], **fields))


@pytest.mark.parametrize("name", sorted(ARCHITECTURES))
def test_parameter_count_equals_the_instantiated_model(name):
    config = ARCHITECTURES[name]
    model = _transformers_model(config)
    assert count_parameters(model_shape(config)) == sum(p.numel() for p in model.parameters())


def test_qwen_1_5b_numbers():
    shape = model_shape(QWEN_1_5B)
    assert count_parameters(shape) == 1_543_714_304
    assert kv_cache_bytes_per_token(shape) == 2 * 28 * 2 * 128 * 2


@pytest.mark.parametrize("targets, use_dora", [(None, False), (["q_proj", "k_proj", "o_proj"], False),
                                                ("all-linear", False), (["all-linear"], False),
                                                (["v_proj", "down_proj"], True)])
def test_lora_count_equals_peft(targets, use_dora):
    from peft import LoraConfig, get_peft_model

    config = {**SMALL, "model_type": "qwen2", "tie_word_embeddings": True}
    # TRL's ModelConfig turns a one-name list into the name, which is how ["all-linear"] works.
    peft_targets = targets[0] if isinstance(targets, list) and len(targets) == 1 else targets
    model = get_peft_model(_transformers_model(config), LoraConfig(r=4, target_modules=peft_targets, use_dora=use_dora))
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    assert count_lora_parameters(model_shape(config), targets, 4, use_dora=use_dora) == trainable


def test_unsupported_configs_say_what_to_do():
    with pytest.raises(ValueError, match="--params"):
        model_shape({**SMALL, "model_type": "gpt2"})
    with pytest.raises(ValueError, match="mixture-of-experts.*--params"):
        model_shape({**SMALL, "model_type": "qwen2", "num_experts": 8})
    with pytest.raises(ValueError, match="'hidden_size'"):
        model_shape({"model_type": "llama", "vocab_size": 10})
    with pytest.raises(ValueError, match="'mlp'.*all-linear"):
        count_lora_parameters(model_shape(QWEN_1_5B), ["mlp"], 8)


def test_read_model_config_never_mistakes_a_missing_folder_for_a_hub_name(tmp_path):
    with pytest.raises(ValueError, match="no config.json"):
        read_model_config(tmp_path)
    with pytest.raises(ValueError, match="no config.json"):
        read_model_config("./not-there")


def test_broken_config_files_are_named(tmp_path):
    (tmp_path / "config.json").write_text('{"model_type": "qwen2",')
    with pytest.raises(ValueError, match="cannot read the model config"):
        read_model_config(tmp_path)
    (tmp_path / "config.json").write_text("[1, 2]")
    with pytest.raises(ValueError, match="not a JSON object"):
        read_model_config(tmp_path / "config.json")
    with pytest.raises(ValueError, match="not a list of module names"):
        count_lora_parameters(model_shape(QWEN_1_5B), 7, 8)


def test_hub_failure_is_one_clear_error(monkeypatch):
    import huggingface_hub

    def offline(*args, **kwargs):
        raise OSError("offline")

    monkeypatch.setattr(huggingface_hub, "hf_hub_download", offline)
    monkeypatch.setattr(model_params, "hub_unreachable", lambda: None)  # the hub answers, the download fails
    with pytest.raises(ValueError, match="could not read config.json of 'Qwen/Qwen2.5-7B-Instruct'.*--params"):
        read_model_config("Qwen/Qwen2.5-7B-Instruct")


@pytest.fixture
def no_network(monkeypatch):
    """Every connection and name lookup fails at once, as on a machine without network; the
    addresses asked for are recorded."""
    import socket

    asked = []

    def refuse(address, *args, **kwargs):
        asked.append(address)
        raise OSError("no network")

    monkeypatch.setattr(socket.socket, "connect", lambda self, address: refuse(address))
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_ENDPOINT"):
        monkeypatch.delenv(name, raising=False)
    return asked


def test_every_shipped_recipe_plans_without_weights_or_network(monkeypatch, capsys, no_network):
    import huggingface_hub

    from referee.recipes.train.shipped import shipped_recipes

    def no_hub(*args, **kwargs):
        raise AssertionError("the hub was asked")

    monkeypatch.setattr(huggingface_hub, "hf_hub_download", no_hub)
    for recipe in shipped_recipes():
        assert main(["plan", recipe.stem, "--json"]) in (0, 1), recipe.stem
        assert json.loads(capsys.readouterr().out)["params"] > 1_500_000_000
    # the sizes carried are the ones a real Qwen2.5-1.5B config gives
    assert count_parameters(model_shape(read_model_config("Qwen/Qwen2.5-1.5B-Instruct"))) == 1_543_714_304
    assert count_parameters(model_shape(read_model_config("deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B"))) == \
        1_543_714_304 + 151936 * 1536  # its own output head
    assert no_network == []  # not even a connection tried


def test_an_unknown_model_offline_never_asks_the_hub(monkeypatch):
    import huggingface_hub

    asked = []

    def hub(*args, local_files_only=False, **kwargs):
        asked.append(local_files_only)
        raise OSError("not cached")

    monkeypatch.setattr(huggingface_hub, "hf_hub_download", hub)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ValueError, match="could not read config.json of 'my/model'"):
        read_model_config("my/model")
    assert asked == [True]  # the local cache only


def test_an_unknown_model_without_network_is_one_error_without_the_hubs_retries(monkeypatch, capsys, no_network):
    import huggingface_hub

    asked = []

    def hub(*args, local_files_only=False, **kwargs):
        asked.append(local_files_only)
        raise OSError("not cached")

    monkeypatch.setattr(huggingface_hub, "hf_hub_download", hub)
    assert main(["plan", "--model", "my/model"]) == 2
    assert capsys.readouterr().err == ("referee plan: could not read config.json of 'my/model' from the hub (no "
                                       "connection to https://huggingface.co); give a local model folder with --model "
                                       "or the parameter count with --params N.\n")
    assert asked == [True]  # the local cache, then no download: the hub took no connection
    assert len(no_network) == 1  # one try to connect, not the download's retries


# The seeds' worked numbers (seed 000 "Where the memory goes" / "Where the GPU time goes",
# seed 003 section 5).

# The seeds count mixed precision (fp32 master weights and moments), as DeepSpeed keeps them.
MIXED = {"dtype": "bfloat16", "deepspeed": {"zero_optimization": {"stage": 0}}}


def test_seed_7b_full_fine_tune_states_and_reference():
    with_kl = plan_run(RecipeSettings.from_dict({**MIXED, "beta": 0.04, "use_vllm": False}), params=7_000_000_000)
    assert with_kl.model_states_gb == 112.0 and with_kl.bytes_per_trainable_param == 16
    assert with_kl.reference_gb == 14.0
    assert with_kl.total_gb == 126.0
    without_kl = plan_run(RecipeSettings.from_dict({**MIXED, "beta": 0.0, "use_vllm": False}), params=7_000_000_000)
    assert without_kl.reference_gb == 0.0 and without_kl.total_gb == 112.0
    assert not with_kl.fits and not without_kl.fits
    assert "more than the 80 GB card" in with_kl.warnings[0]


def test_a_plain_bf16_run_keeps_no_master_copy():
    """HF Trainer's AdamW on bf16 weights: bf16 moments, no fp32 copy (8 B); fp32 weights: 16 B."""
    plain = plan_run(RecipeSettings.from_dict({"dtype": "bfloat16", "beta": 0.04, "use_vllm": False}),
                     params=7_000_000_000)
    assert (plain.bytes_per_trainable_param, plain.model_states_gb, plain.reference_gb) == (8, 56.0, 14.0)
    assert plain.fits and "master" in plain.state_precision
    assert any("rounded away" in warning for warning in plain.warnings)
    fp32 = plan_run(RecipeSettings.from_dict({"beta": 0.04, "use_vllm": False}), params=7_000_000_000)
    assert (fp32.bytes_per_trainable_param, fp32.model_states_gb, fp32.reference_gb) == (16, 112.0, 28.0)
    assert "dtype" in fp32.assumed  # TRL's ModelConfig loads float32 unless the recipe says otherwise
    fsdp = plan_run(RecipeSettings.from_dict({"dtype": "bfloat16", "fsdp": "no_shard", "use_vllm": False}),
                    params=7_000_000_000)
    assert fsdp.bytes_per_trainable_param == 16  # accelerate upcasts FSDP's parameters to fp32


def test_seed_1_5b_grpo_versus_ppo():
    plan = plan_run(RecipeSettings.from_dict({**MIXED, "beta": 0.04}), params=1_500_000_000)
    assert plan.model_states_gb + plan.reference_gb == 27.0
    assert plan.ppo_model_states_gb == 54.0


def test_seed_tokens_per_step():
    recipe = {"per_device_train_batch_size": 16, "gradient_accumulation_steps": 32, "num_generations": 8,
              "max_completion_length": 1000}
    plan = plan_run(RecipeSettings.from_dict(recipe), params=10**9)
    assert (plan.prompts_per_step, plan.completions_per_step, plan.tokens_per_step) == (64, 512, 512_000)
    spread = plan_run(RecipeSettings.from_dict({**recipe, "gradient_accumulation_steps": 8}), params=10**9,
                      num_gpus=4, expected_length=250)
    assert (spread.prompts_per_step, spread.tokens_per_step) == (64, 128_000)
    reused = plan_run(RecipeSettings.from_dict({**recipe, "num_iterations": 2}), params=10**9)
    assert reused.tokens_per_step == 256_000  # each rollout batch is trained on twice


@pytest.mark.parametrize("p, group, share", [(0.1, 4, 0.656), (0.3, 8, 0.058), (0.5, 4, 0.125), (0.5, 8, 0.0078),
                                             (0.9, 8, 0.430), (0.9, 16, 0.185), (0.3, 16, 0.0033)])
def test_degenerate_share_matches_the_seed_table(p, group, share):
    assert degenerate_group_share(p, group) == pytest.approx(share, abs=6e-4)


@given(st.floats(0, 1), st.integers(1, 64))
def test_degenerate_share_is_a_symmetric_share_lowest_at_one_half(p, group):
    share = degenerate_group_share(p, group)
    assert 0.0 <= share <= 1.0
    assert share == pytest.approx(degenerate_group_share(1 - p, group), abs=1e-12)
    assert share >= degenerate_group_share(0.5, group) - 1e-12
    assert degenerate_group_share(p, group + 1) <= share + 1e-12


def test_bad_pass_rate_is_refused():
    with pytest.raises(ValueError, match="1.5 is not a probability"):
        degenerate_group_share(1.5, 8)


# Sharding.

@pytest.mark.parametrize("stage, per_gpu", [(0, 16.0), (1, 2 + 2 + 12 / 8), (2, 2 + 14 / 8), (3, 16 / 8)])
def test_zero_stages_shard_the_states_they_name(tmp_path, stage, per_gpu):
    (tmp_path / "ds.json").write_text(json.dumps({"zero_optimization": {"stage": stage}}))
    settings = RecipeSettings.from_dict({"deepspeed": "ds.json", "beta": 0.04, "use_vllm": False, "dtype": "bfloat16"},
                                        base_dir=tmp_path)
    plan = plan_run(settings, params=10**9, num_gpus=8)
    assert plan.model_states_gb == pytest.approx(per_gpu, abs=1e-3)
    assert plan.reference_gb == (2 / 8 if stage == 3 else 2.0)


def test_offloaded_optimizer_leaves_the_card():
    settings = RecipeSettings.from_dict({"use_vllm": False, "dtype": "bfloat16", "deepspeed": {
        "zero_optimization": {"stage": 2, "offload_optimizer": {"device": "cpu", "pin_memory": True}}}})
    plan = plan_run(settings, params=10**9, num_gpus=2)
    assert plan.model_states_gb == 2 + 2 / 2
    assert plan.offloaded_gb == 12 / 2
    assert "optimizer offloaded" in plan.sharding


@pytest.mark.parametrize("fsdp, fsdp_config, expected", [
    ("full_shard auto_wrap", None, Sharding(3, False, False, "fsdp")),
    (["shard_grad_op"], None, Sharding(2, False, False, "fsdp")),
    (True, {"reshard_after_forward": False}, Sharding(2, False, False, "fsdp")),
    ("full_shard offload", None, Sharding(3, True, True, "fsdp")),
    (True, {"cpu_offload": True}, Sharding(3, True, True, "fsdp")),
    ("no_shard", None, Sharding(0, False, False, "fsdp")),
    (None, None, Sharding()),
])
def test_fsdp_options_map_to_a_zero_stage(fsdp, fsdp_config, expected):
    assert sharding_of(RecipeSettings.from_dict({"fsdp": fsdp, "fsdp_config": fsdp_config})) == expected


@pytest.mark.parametrize("name, stage, processes", [("zero1", 1, 8), ("zero2", 2, 8), ("zero3", 3, 8),
                                                     ("fsdp1", 3, 8), ("fsdp2", 3, 8), ("multi_gpu", 0, 8),
                                                     ("single_gpu", 0, 1)])
def test_trl_accelerate_configs(name, stage, processes):
    import trl

    launch = read_accelerate_config(Path(trl.__file__).parent / "accelerate_configs" / f"{name}.yaml")
    assert (launch.sharding.stage, launch.num_processes) == (stage, processes)
    assert not launch.sharding.offload_optimizer and not launch.sharding.offload_params


def test_accelerate_configs_with_offload_strategies_and_json_files(tmp_path):
    (tmp_path / "ds.json").write_text(json.dumps({"zero_optimization": {"stage": 3, "offload_param": {"device": "cpu"}}}))
    cases = {
        "distributed_type: DEEPSPEED\nnum_machines: 2\nnum_processes: 4\ndeepspeed_config:\n"
        "  deepspeed_config_file: ds.json\n": (Sharding(3, False, True, "deepspeed"), 8),
        "distributed_type: DEEPSPEED\ndeepspeed_config:\n  zero_stage: 2\n  offload_optimizer_device: cpu\n":
            (Sharding(2, True, False, "deepspeed"), 1),
        "distributed_type: FSDP\nnum_processes: 2\nfsdp_config:\n  fsdp_version: 2\n"
        "  fsdp_reshard_after_forward: false\n  fsdp_offload_params: true\n": (Sharding(2, True, True, "fsdp"), 2),
        "distributed_type: FSDP\nfsdp_config:\n  fsdp_sharding_strategy: NO_SHARD\n": (Sharding(0, False, False, "fsdp"), 1),
    }
    for text, (sharding, processes) in cases.items():
        (tmp_path / "launch.yaml").write_text(text)
        assert read_accelerate_config(tmp_path / "launch.yaml") == LaunchConfig(sharding, processes), text


def test_bad_deepspeed_configs_are_named(tmp_path):
    with pytest.raises(ValueError, match="'missing.json' is neither"):
        sharding_of(RecipeSettings.from_dict({"deepspeed": "missing.json"}, base_dir=tmp_path))
    (tmp_path / "bad.json").write_text("{stage: 2")
    with pytest.raises(ValueError, match="not valid JSON"):
        sharding_of(RecipeSettings.from_dict({"deepspeed": "bad.json"}, base_dir=tmp_path))
    with pytest.raises(ValueError, match="stage='auto'"):
        sharding_of(RecipeSettings.from_dict({"deepspeed": {"zero_optimization": {"stage": "auto"}}}))


# LoRA, vLLM and the KV cache.

def test_lora_states_are_adapters_plus_frozen_base_and_no_reference():
    shape = model_shape(QWEN_1_5B)
    settings = RecipeSettings.from_dict({"use_peft": True, "lora_r": 16, "beta": 0.04, "use_vllm": False,
                                         "dtype": "bfloat16",
                                         "lora_target_modules": ["q_proj", "k_proj", "v_proj", "o_proj"]})
    plan = plan_run(settings, shape=shape)
    adapters = count_lora_parameters(shape, ["q_proj", "k_proj", "v_proj", "o_proj"], 16)
    assert plan.trainable_params == adapters
    assert plan.model_states_gb == pytest.approx((16 * adapters + 2 * 1_543_714_304) / GB, abs=1e-3)
    assert plan.reference_gb == 0.0
    quantized = plan_run(dataclasses.replace(settings, load_in_4bit=True), shape=shape)
    # TRL keeps a quantized base's adapters in bf16 (QLoRA): 8 B each.
    assert quantized.model_states_gb == pytest.approx((8 * adapters + 0.5 * 1_543_714_304) / GB, abs=1e-3)


def test_lora_needs_the_architecture():
    with pytest.raises(ValueError, match="LoRA plan needs the model's architecture"):
        plan_run(RecipeSettings.from_dict({"use_peft": True}), params=10**9)


def test_vllm_colocate_share_and_kv_cache():
    settings = RecipeSettings.from_dict({"per_device_train_batch_size": 16, "gradient_accumulation_steps": 4,
                                         "max_completion_length": 1024, "max_prompt_length": 512,
                                         "use_vllm": True, "vllm_gpu_memory_utilization": 0.3})
    plan = plan_run(settings, shape=model_shape(QWEN_1_5B))
    assert plan.vllm_gb == 24.0
    assert (plan.kv_sequences, plan.sequence_length) == (64, 1536)
    assert plan.kv_cache_gb == pytest.approx(64 * 1536 * 28672 / GB, abs=1e-3)
    assert plan.total_gb == pytest.approx(plan.model_states_gb + 24.0, abs=1e-3)
    assert plan.fits and plan.warnings == ()


def test_a_sleeping_vllm_gives_its_share_back_for_training():
    settings = RecipeSettings.from_dict({"use_vllm": True, "vllm_gpu_memory_utilization": 0.5})
    awake = plan_run(settings, shape=model_shape(QWEN_1_5B))
    asleep = plan_run(dataclasses.replace(settings, vllm_enable_sleep_mode=True), shape=model_shape(QWEN_1_5B))
    assert awake.total_gb == asleep.total_gb == pytest.approx(awake.model_states_gb + 40.0, abs=1e-3)
    assert awake.headroom_gb == pytest.approx(80 - awake.total_gb, abs=1e-3)
    assert asleep.headroom_gb == pytest.approx(80 - asleep.model_states_gb, abs=1e-3)


def test_vllm_share_too_small_is_a_warning():
    shape = model_shape(QWEN_1_5B)
    tiny_share = RecipeSettings.from_dict({"use_vllm": True, "vllm_gpu_memory_utilization": 0.03})
    assert "cannot hold the model's weights" in plan_run(tiny_share, shape=shape).warnings[0]
    long_runs = RecipeSettings.from_dict({"use_vllm": True, "vllm_gpu_memory_utilization": 0.1,
                                          "max_completion_length": 8192,
                                          "per_device_train_batch_size": 64, "gradient_accumulation_steps": 4})
    assert "generate in several waves" in plan_run(long_runs, shape=shape).warnings[0]


def test_without_vllm_the_kv_cache_is_in_the_training_process():
    settings = RecipeSettings.from_dict({"use_vllm": False, "max_completion_length": 1024})
    plan = plan_run(settings, shape=model_shape(QWEN_1_5B), prompt_length=256)
    assert plan.vllm_gb == 0.0 and plan.generation == "transformers"
    assert plan.total_gb == pytest.approx(plan.model_states_gb + plan.kv_cache_gb, abs=2e-3)


def test_server_mode_sizes_the_kv_cache_of_the_global_batch():
    settings = RecipeSettings.from_dict({"use_vllm": True, "vllm_mode": "server", "per_device_train_batch_size": 8})
    plan = plan_run(settings, shape=model_shape(QWEN_1_5B), num_gpus=4)
    assert plan.vllm_gb == 0.0 and plan.kv_sequences == 32


def test_generation_batch_not_divisible_by_group_size_is_flagged():
    plan = plan_run(RecipeSettings.from_dict({"per_device_train_batch_size": 6, "num_generations": 4}), params=10**8)
    assert any("not a multiple of num_generations=4" in warning for warning in plan.warnings)


def test_bad_recipe_values_are_named():
    with pytest.raises(ValueError, match="num_generations='8' is not a positive integer"):
        RecipeSettings.from_dict({"num_generations": "8"})
    with pytest.raises(ValueError, match="use_peft=1 is not true or false"):
        RecipeSettings.from_dict({"use_peft": 1})
    with pytest.raises(ValueError, match="vllm_gpu_memory_utilization=1.5"):
        RecipeSettings.from_dict({"vllm_gpu_memory_utilization": 1.5})
    with pytest.raises(ValueError, match="vllm_mode='remote'"):
        RecipeSettings.from_dict({"vllm_mode": "remote"})
    with pytest.raises(ValueError, match="dtype='bf16' is not one of"):
        RecipeSettings.from_dict({"dtype": "bf16"})


def test_defaults_are_those_referee_train_uses():
    from referee.recipes.train.recipe import recipe_parser

    parsed_into = recipe_parser().dataclass_types
    defaults = {f.name: f.default for cls in parsed_into for f in dataclasses.fields(cls)}
    for key, value in RECIPE_DEFAULTS.items():
        assert value == defaults[key], key


# The command line.

GSM8K_LIKE_RECIPE = """\
model_name_or_path: Qwen/Qwen2.5-1.5B-Instruct
dtype: bfloat16
dataset_name: openai/gsm8k
reward_funcs: [gsm8k_accuracy, answer_format]
reward_weights: [1.0, 0.1]
learning_rate: 1.0e-6
per_device_train_batch_size: 16
gradient_accumulation_steps: 4
num_generations: 8
max_completion_length: 1024
max_prompt_length: 512
beta: 0.0
use_vllm: true
vllm_mode: colocate
vllm_gpu_memory_utilization: 0.3
"""


def test_cli_plans_a_recipe_with_a_local_config(tmp_path, qwen_folder, capsys):
    recipe = tmp_path / "gsm8k.yaml"
    recipe.write_text(GSM8K_LIKE_RECIPE)
    assert main(["plan", str(recipe), "--model", str(qwen_folder), "--gpu-memory", "80"]) == 0
    out = capsys.readouterr().out
    assert "1,543,714,304" in out and "fits" in out
    assert "64 completions" in out and "65,536" in out


def test_cli_json_has_the_stable_keys(tmp_path, qwen_folder, capsys):
    recipe = tmp_path / "gsm8k.yaml"
    recipe.write_text(GSM8K_LIKE_RECIPE)
    assert main(["plan", str(recipe), "--model", str(qwen_folder), "--json", "--set", "beta=0.04"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert {"params", "model_states_gb", "reference_gb", "kv_cache_gb", "vllm_gb", "tokens_per_step",
            "fits"} <= set(data)
    assert data["params"] == 1_543_714_304
    assert data["reference_gb"] == pytest.approx(3.087, abs=1e-3)  # the recipe's bf16 weights
    assert data["bytes_per_trainable_param"] == 8 and data["state_precision"]


def test_cli_params_only_and_a_plan_that_does_not_fit(capsys):
    assert main(["plan", "--params", "7B", "--set", "beta=0.04", "--set", "use_vllm=false"]) == 1
    out = capsys.readouterr().out  # no dtype: TRL loads float32, 16 B per parameter and a 4 B reference
    assert "112.00 GB" in out and "28.00 GB" in out and "does NOT fit" in out and "16 B per trainable" in out
    assert "280.0 GB" in out  # PPO in fp32: policy and critic 16 B each, reference and reward model 4 B each


SHIPPED_CONFIGS = Path(referee.recipes.__file__).parent / "configs"


@pytest.mark.parametrize("variant", ["full", "lora"])
def test_shipped_gsm8k_recipe_plans_offline_on_an_80_gb_card(variant, qwen_folder, monkeypatch, capsys):
    import huggingface_hub

    def no_network(*args, **kwargs):
        raise AssertionError("referee plan must not reach the hub when given a local config")

    monkeypatch.setattr(huggingface_hub, "hf_hub_download", no_network)
    recipe = SHIPPED_CONFIGS / f"gsm8k_qwen2.5-1.5b_{variant}.yaml"
    assert main(["plan", str(recipe), "--model", str(qwen_folder), "--gpu-memory", "80"]) == 0
    text = capsys.readouterr().out
    assert "1,543,714,304" in text and "of 80 GB card: fits" in text and "warning" not in text
    assert main(["plan", str(recipe), "--model", str(qwen_folder), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    shape = model_shape(QWEN_1_5B)
    settings = RecipeSettings.from_yaml(recipe)
    completions = settings.per_device_train_batch_size * settings.gradient_accumulation_steps
    assert data["tokens_per_step"] == completions * settings.max_completion_length
    assert data["vllm_gb"] == 80 * settings.vllm_gpu_memory_utilization
    if variant == "full":
        assert data["trainable_params"] == 1_543_714_304
        assert data["model_states_gb"] == pytest.approx(16 * 1_543_714_304 / GB, abs=1e-3)  # fp32 weights, bf16 compute
    else:
        adapters = count_lora_parameters(shape, settings.lora_target_modules, settings.lora_r)
        assert data["trainable_params"] == adapters
        assert data["model_states_gb"] == pytest.approx((16 * adapters + 2 * 1_543_714_304) / GB, abs=1e-3)
    assert data["reference_gb"] == 0.0 and data["fits"]
    assert main(["plan", recipe.stem, "--model", str(qwen_folder), "--json"]) == 0  # a shipped name works too
    assert json.loads(capsys.readouterr().out) == data


def test_cli_reads_sharding_and_gpus_from_an_accelerate_config(tmp_path, capsys):
    launch = tmp_path / "zero3.yaml"
    launch.write_text("distributed_type: DEEPSPEED\nnum_processes: 8\ndeepspeed_config:\n  zero_stage: 3\n")
    args = ["plan", "--params", "7B", "--set", "use_vllm=false", "--accelerate-config", str(launch), "--json"]
    assert main(args) == 0
    data = json.loads(capsys.readouterr().out)
    assert (data["num_gpus"], data["model_states_gb"], data["sharding"]) == (8, 14.0, "deepspeed ZeRO-3")
    assert main(args + ["--num-gpus", "16"]) == 0
    assert json.loads(capsys.readouterr().out)["model_states_gb"] == 7.0


def test_cli_errors_are_one_line(tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_text("- just\n- a list\n")
    assert main(["plan", str(bad), "--params", "1B"]) == 2
    assert main(["plan", "--params", "1B", "--set", "num_generation=8"]) == 2
    assert main(["plan"]) == 2
    errors = capsys.readouterr().err.strip().splitlines()
    assert len(errors) == 3 and all(line.startswith("referee plan: ") for line in errors)
    assert "not a mapping" in errors[0] and "'num_generation=8'" in errors[1] and "no model" in errors[2]


# --- dynamic sampling's cost ------------------------------------------------------------------

def simulated_rounds(informative, groups, max_rounds, trials=20000, seed=0):
    """Rounds per step and the share of steps that run out, by drawing groups one round at a time."""
    import random

    generator = random.Random(seed)
    rounds_total, short = 0, 0
    for _ in range(trials):
        kept = 0
        for round_index in range(1, max_rounds + 1):
            kept += sum(generator.random() < informative for _ in range(groups))
            if kept >= groups:
                break
        rounds_total += round_index
        short += kept < groups
    return rounds_total / trials, short / trials


@pytest.mark.parametrize("pass_rate, groups, max_rounds", [(0.9, 8, 3), (0.95, 4, 4), (0.5, 8, 2), (0.99, 8, 3)])
def test_expected_rounds_match_a_simulation(pass_rate, groups, max_rounds):
    from referee.recipes.plan.sampling import sampling_rounds

    informative = 1 - pass_rate**8 - (1 - pass_rate) ** 8
    rounds, shortfall = sampling_rounds(informative, groups, max_rounds)
    simulated, short = simulated_rounds(informative, groups, max_rounds)
    assert rounds == pytest.approx(simulated, abs=0.03)
    assert shortfall == pytest.approx(short, abs=0.015)


def test_plan_prints_the_rounds_dynamic_sampling_needs_from_a_report(tmp_path, capsys):
    recipe = tmp_path / "r.yaml"
    recipe.write_text("num_generations: 8\nper_device_train_batch_size: 16\ngradient_accumulation_steps: 4\n"
                      "max_completion_length: 100\ndynamic_sampling: {max_rounds: 3}\n")
    report = tmp_path / "report.json"
    report.write_text(json.dumps({"pass_rate_histogram": [{"pass_rate": 1.0, "rows": 1}, {"pass_rate": 0.5, "rows": 1}]}))
    assert main(["plan", str(recipe), "--params", "1B", "--pass-rate-report", str(report), "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)["dynamic_sampling"]
    assert plan["histogram"]["informative_share"] == pytest.approx((1 - 2 / 256) / 2)
    assert plan["p=0.9"]["expected_rounds"] > plan["p=0.5"]["expected_rounds"] >= 1
    assert plan["histogram"]["tokens_per_step"] == pytest.approx(plan["histogram"]["expected_rounds"] * 64 * 100)


def test_plan_without_dynamic_sampling_says_nothing_of_rounds(capsys):
    assert main(["plan", "--params", "1B", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["dynamic_sampling"] is None


def test_plan_counts_the_python_tools_rounds_cells_and_waits(tmp_path, capsys):
    recipe = tmp_path / "r.yaml"
    recipe.write_text("num_generations: 8\nper_device_train_batch_size: 16\ngradient_accumulation_steps: 4\n"
                      "python_tool: {timeout: 2, max_calls: 3}\nmax_tool_calling_iterations: 2\n")
    assert main(["plan", str(recipe), "--params", "1B", "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    # 64 rollouts per process; each runs at most 3 cells of 2 s, one after another
    assert plan["tool_turns"] == {"rounds": 3, "cells": 192, "concurrent_wait_s": 6.0, "serial_wait_s": 384.0}
    assert not any("max_tool_calling_iterations" in warning for warning in plan["warnings"])
    assert main(["plan", str(recipe), "--params", "1B", "--set", "max_tool_calling_iterations=1"]) == 0
    assert "up to 2 generation rounds, at most 192 cells" in capsys.readouterr().out


def test_a_python_tool_without_a_cap_on_turns_is_warned_and_a_bad_key_refused(tmp_path, capsys):
    recipe = tmp_path / "r.yaml"
    recipe.write_text("python_tool: {}\n")
    assert main(["plan", str(recipe), "--params", "1B", "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert plan["tool_turns"]["rounds"] is None
    assert any("max_tool_calling_iterations" in warning for warning in plan["warnings"])
    recipe.write_text("python_tool: {timout: 2}\n")
    assert main(["plan", str(recipe), "--params", "1B"]) == 2
    assert "python_tool has no key 'timout'; did you mean 'timeout'?" in capsys.readouterr().err


def test_plan_without_a_tool_says_nothing_of_tools(capsys):
    assert main(["plan", "--params", "1B", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["tool_turns"] is None
