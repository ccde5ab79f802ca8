"""``referee plan``: memory per GPU and generated tokens per step of a GRPO recipe."""

from __future__ import annotations

import argparse
import json
import re
import sys
from typing import Any

import yaml

from referee.recipes.plan import DEFAULT_PASS_RATES, RunPlan, plan_run, weight_bytes
from referee.recipes.plan.inputs import RecipeSettings, settings_field_names
from referee.recipes.plan.model_params import model_shape, read_model_config
from referee.recipes.plan.sharding import read_accelerate_config
from referee.recipes.train.shipped import recipe_path

_SUFFIXES = {"": 1, "K": 10**3, "M": 10**6, "B": 10**9, "G": 10**9, "T": 10**12}


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "plan",
        help="memory per GPU and generated tokens per step of a GRPO recipe",
        description=(
            "Plan a GRPO run from a recipe (the YAML that 'referee train' takes) and the model's "
            "config.json: parameters, model states (per trainable parameter: 8 bytes for bf16 weights "
            "under a plain run, 16 with fp32 master weights (DeepSpeed), FSDP, LoRA's fp32 adapters or "
            "fp32 weights; a frozen one its loaded size; divided by the ZeRO / FSDP sharding), the reference model, vLLM's colocated share "
            "and the KV cache its sequences need, generated tokens per optimizer step and the "
            "expected share of degenerate groups. Activations are not estimated: confirm on a short run. "
            "Exits 1 when the plan does not fit the card."
        ),
    )
    parser.add_argument("config", metavar="RECIPE", nargs="?",
                        help="recipe YAML file or shipped recipe name, as 'referee train' takes (optional: flags alone work)")
    parser.add_argument("--model", metavar="NAME_OR_PATH",
                        help="model folder or hub name whose config.json to read (default: the recipe's model_name_or_path)")
    parser.add_argument("--revision", default=None, help="hub revision of --model")
    parser.add_argument("--params", type=parse_count, metavar="N",
                        help="parameter count (e.g. 1.5B, 7e9); overrides the count from the config")
    parser.add_argument("--accelerate-config", metavar="FILE",
                        help="the 'accelerate launch --config_file' YAML: its DeepSpeed / FSDP sharding and process count")
    parser.add_argument("--num-gpus", type=int, default=None, metavar="N",
                        help="training GPUs (default: the accelerate config's processes, else 1)")
    parser.add_argument("--gpu-memory", type=float, default=80.0, metavar="GB", help="memory of one card in GB (default: 80)")
    parser.add_argument("--prompt-length", type=int, default=None, metavar="TOKENS",
                        help="longest prompt in tokens (default: the recipe's max_prompt_length, else 512)")
    parser.add_argument("--expected-length", type=float, default=None, metavar="TOKENS",
                        help="mean completion length for the token count (default: max_completion_length)")
    parser.add_argument("--pass-rate", type=float, action="append", default=None, metavar="P",
                        help="pass rate for the degenerate-group share; repeat for several (default: 0.1 ... 0.9)")
    parser.add_argument("--pass-rate-report", metavar="REPORT.json",
                        help="a referee prefilter or eval report.json: its pass-rate histogram for the degenerate-group "
                             "share and the rounds dynamic sampling needs")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", dest="overrides",
                        help="override a recipe key, VALUE read as YAML (e.g. --set num_generations=16)")
    parser.add_argument("--json", action="store_true", help="print the plan as JSON")
    parser.set_defaults(run=run)


def parse_count(text: str) -> int:
    """A parameter count written as ``1543714304``, ``1.5e9``, ``1.5B`` or ``500M``.

    Example:
        >>> parse_count("1.5B"), parse_count("7e9"), parse_count("500M")
        (1500000000, 7000000000, 500000000)
    """
    match = re.fullmatch(r"\s*([0-9]*\.?[0-9]+(?:[eE][0-9]+)?)\s*([kKmMbBgGtT]?)\s*", text)
    if not match:
        raise argparse.ArgumentTypeError(f"{text!r} is not a parameter count; write it like 1.5B or 1500000000.")
    return int(round(float(match.group(1)) * _SUFFIXES[match.group(2).upper()]))


def parse_overrides(pairs: list[str]) -> dict[str, Any]:
    """``["beta=0.04", "use_peft=true"]`` -> ``{"beta": 0.04, "use_peft": True}`` (values read as YAML).

    Example:
        >>> parse_overrides(["beta=0.04", "use_peft=true", "lora_target_modules=[q_proj, v_proj]"])
        {'beta': 0.04, 'use_peft': True, 'lora_target_modules': ['q_proj', 'v_proj']}
    """
    known = settings_field_names()
    overrides: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or key not in known:
            raise ValueError(f"--set {pair!r} is not KEY=VALUE with a key the plan reads; write it like --set beta=0.04.")
        try:
            overrides[key] = yaml.safe_load(value)
        except yaml.YAMLError:
            overrides[key] = value
    return overrides


def format_plan(plan: RunPlan, settings: RecipeSettings) -> str:
    """The plan as the lines ``referee plan`` prints.

    Example:
        >>> settings = RecipeSettings.from_dict({"beta": 0.04, "use_vllm": False, "dtype": "float32"})
        >>> print(format_plan(plan_run(settings, params=1_500_000_000), settings))
        per GPU (1 GPU, 80 GB card; sharding: none (every GPU holds all model states); generation: transformers)
          parameters               1.50 B    1,500,000,000, trainable 1,500,000,000
          model states            24.00 GB   16 B per trainable parameter: fp32 weights, gradients and AdamW moments
          reference model          6.00 GB   4 B per parameter (beta 0.04 > 0, no LoRA)
          generation KV cache  unknown (needs the model's config)
          total                   30.00 GB   of 80 GB card: fits, 50.0 GB left for activations and logits
        per optimizer step
          prompts x G          1 x 8 = 8 completions
          generated tokens     4,096   (512 per completion)
        degenerate groups at G=8 (p^G + (1-p)^G, no gradient)
          p=0.1: 43.0%   p=0.3: 5.8%   p=0.5: 0.8%   p=0.7: 5.8%   p=0.9: 43.0%
        for comparison: PPO (critic + reward model) holds 60.0 GB of model states before sharding
        assumed (not in the recipe): per_device_train_batch_size, ..., prompt length 512
    """
    card = f"{plan.gpu_memory_gb:g} GB card"
    gpus = f"{plan.num_gpus} GPU{'s' if plan.num_gpus > 1 else ''}"
    states_note = (f"{plan.bytes_per_trainable_param} B per {'adapter' if settings.use_peft else 'trainable'} "
                   f"parameter{' + frozen base' if settings.use_peft else ''}: {plan.state_precision}")
    if settings.use_peft:
        reference_note = "none: LoRA's base model with adapters off"
    elif settings.beta > 0:
        reference_note = f"{weight_bytes(settings):g} B per parameter (beta {settings.beta:g} > 0, no LoRA)"
    else:
        reference_note = "none: beta = 0"
    lines = [
        f"per GPU ({gpus}, {card}; sharding: {plan.sharding}; generation: {plan.generation})",
        f"  {'parameters':<20} {plan.params / 1e9:>8.2f} B    {plan.params:,}, trainable {plan.trainable_params:,}",
        f"  {'model states':<20} {plan.model_states_gb:>8.2f} GB   {states_note}",
    ]
    if plan.offloaded_gb:
        lines.append(f"  {'offloaded to CPU':<20} {plan.offloaded_gb:>8.2f} GB")
    lines.append(f"  {'reference model':<20} {plan.reference_gb:>8.2f} GB   {reference_note}")
    kv = ("unknown (needs the model's config)" if plan.kv_cache_gb is None
          else f"{plan.kv_cache_gb:.2f} GB for {plan.kv_sequences} sequences x {plan.sequence_length:,} tokens")
    if plan.generation == "vllm-colocate":
        lines += [
            f"  {'vLLM colocate share':<20} {plan.vllm_gb:>8.2f} GB   "
            f"vllm_gpu_memory_utilization {settings.vllm_gpu_memory_utilization:g} of the card",
            f"    weights {plan.vllm_weights_gb:.2f} GB, KV cache needed {kv}",
        ]
    elif plan.generation == "vllm-server":
        lines.append(f"  {'vLLM server':<20} on its own GPUs: weights {plan.vllm_weights_gb:.2f} GB, KV cache {kv}")
    else:
        lines.append(f"  {'generation KV cache':<20} {kv}")
    sleeping = " (vLLM sleeps while training)" if settings.use_vllm and settings.vllm_enable_sleep_mode else ""
    verdict = (f"fits, {plan.headroom_gb:.1f} GB left for activations and logits{sleeping}" if plan.fits
               else "does NOT fit")
    lines += [
        f"  {'total':<20} {plan.total_gb:>8.2f} GB   of {card}: {verdict}",
        "per optimizer step",
        f"  {'prompts x G':<20} {plan.prompts_per_step:g} x {settings.num_generations} = "
        f"{plan.completions_per_step:g} completions",
        f"  {'generated tokens':<20} {plan.tokens_per_step:,.0f}   ({plan.completion_length:,.0f} per completion)",
        f"degenerate groups at G={settings.num_generations} (p^G + (1-p)^G, no gradient)",
        "  " + "   ".join(f"p={p}: {share:.1%}" for p, share in plan.degenerate_share.items()),
    ]
    if plan.dynamic_sampling is not None:
        rounds = (settings.dynamic_sampling or {}).get("max_rounds", 3)
        lines.append(f"dynamic sampling (max_rounds {rounds}): expected rounds, generated tokens per step, "
                     "chance the rounds run out")
        lines += [f"  {source:<10} {row['expected_rounds']:.2f} rounds   {row['tokens_per_step']:,.0f} tokens   "
                  f"{row['shortfall_chance']:.1%}" for source, row in plan.dynamic_sampling.items()]
    if plan.tool_turns is not None:
        tools = plan.tool_turns
        rounds = "no cap" if tools["rounds"] is None else f"up to {tools['rounds']:g}"
        lines.append(f"python tool, per process and generation: {rounds} generation rounds, at most "
                     f"{tools['cells']:,.0f} cells; longest wait for cells {tools['concurrent_wait_s']:,.0f} s with "
                     f"each turn's cells at once (RefereeGRPOTrainer), {tools['serial_wait_s']:,.0f} s one rollout "
                     "after another (TRL's GRPOTrainer)")
    if plan.ppo_model_states_gb is not None:
        lines.append(f"for comparison: PPO (critic + reward model) holds {plan.ppo_model_states_gb:.1f} GB of "
                     "model states before sharding")
    if plan.assumed:
        lines.append("assumed (not in the recipe): " + ", ".join(plan.assumed))
    lines += [f"warning: {warning}" for warning in plan.warnings]
    return "\n".join(lines)


def read_histogram(path: str) -> list[dict[str, Any]]:
    """The ``pass_rate_histogram`` of a ``referee prefilter`` or ``referee eval`` ``report.json``.

    Example:
        >>> import json, os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "report.json")
        >>> _ = open(path, "w").write(json.dumps({"pass_rate_histogram": [{"pass_rate": 0.5, "rows": 3}]}))
        >>> read_histogram(path)
        [{'pass_rate': 0.5, 'rows': 3}]
    """
    try:
        report = json.loads(open(path, encoding="utf-8").read())
        histogram = report["pass_rate_histogram"]
    except (OSError, ValueError, KeyError, TypeError):
        raise ValueError(f"--pass-rate-report {path} is not a readable report.json with a pass_rate_histogram; give "
                         "the report.json of a referee prefilter or referee eval run.") from None
    return histogram


def run(args: argparse.Namespace) -> int:
    try:
        overrides = parse_overrides(args.overrides)
        settings = (RecipeSettings.from_yaml(recipe_path(args.config), overrides) if args.config
                    else RecipeSettings.from_dict(overrides))
        model = args.model or (settings.model_name_or_path if args.params is None else None)
        if model is None and args.params is None:
            raise ValueError("no model to plan: give --model NAME_OR_PATH, --params N, or a recipe with model_name_or_path.")
        shape = model_shape(read_model_config(model, revision=args.revision)) if model else None
        launch = read_accelerate_config(args.accelerate_config) if args.accelerate_config else None
        num_gpus = args.num_gpus or (launch.num_processes if launch else 1)
        plan = plan_run(settings, params=args.params, shape=shape, num_gpus=num_gpus,
                        sharding=launch.sharding if launch else None,
                        gpu_memory_gb=args.gpu_memory, prompt_length=args.prompt_length,
                        expected_length=args.expected_length,
                        pass_rates=tuple(args.pass_rate or DEFAULT_PASS_RATES),
                        pass_rate_histogram=read_histogram(args.pass_rate_report) if args.pass_rate_report else None)
    except ValueError as exc:
        print(f"referee plan: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(plan.to_dict(), indent=2))
    else:
        source = f" ({model})" if model else ""
        print(f"referee plan: {args.config or 'flags only'}{source}")
        print(format_plan(plan, settings))
    return 0 if plan.fits else 1
