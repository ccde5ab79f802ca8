"""``referee prefilter``: keep the prompts a model solves sometimes, but not always or never."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from referee.recipes.commands._io import same_file
from referee.recipes.commands.score import parse_options
from referee.recipes.prefilter.bounds import KeepBounds
from referee.recipes.prefilter.generation import BACKENDS, EngineOptions, SamplingOptions
from referee.recipes.prefilter.outputs import OUTPUT_FORMATS
from referee.recipes.prefilter.prompts import CHAT_TEMPLATE_MODES

_DESCRIPTION = (
    "Sample G completions per prompt with MODEL, score them with the same referee reward functions "
    "the trainer uses, and keep the rows whose pass rate (share of samples where the success reward "
    "reaches --threshold) lies in --keep LO:HI, both bounds inclusive. A None reward (not the "
    "completion's fault, e.g. an unusable gold) is reported per row and left out of the pass-rate "
    "denominator. Writes all.jsonl, kept.jsonl, report.json and pass_rate_hist.png to --out; results "
    "are saved chunk by chunk, so rerunning the same command resumes a stopped run. Shards "
    "(--shard-index/--num-shards) are combined with --merge."
)


def _json_object(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        value = None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError(f"{text!r} is not a JSON object; write it like '{{\"enable_thinking\": false}}'")
    return value


def _keep(text: str) -> KeepBounds:
    try:
        return KeepBounds.parse(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def scope_reward_options(pairs: list[str], rewards: list[str]) -> dict[str, dict[str, Any]]:
    """``-O`` pairs grouped by reward: ``REWARD.KEY=VALUE``, or ``KEY=VALUE`` with one reward.

    Example:
        >>> scope_reward_options(["gsm8k_accuracy.mode=strict", "soft_overlong.max_length=64"],
        ...                      ["gsm8k_accuracy", "soft_overlong"])
        {'gsm8k_accuracy': {'mode': 'strict'}, 'soft_overlong': {'max_length': 64}}
        >>> scope_reward_options(["mode=strict"], ["gsm8k_accuracy"])
        {'gsm8k_accuracy': {'mode': 'strict'}}
    """
    scoped: dict[str, dict[str, Any]] = {}
    for key, value in parse_options(pairs).items():
        reward, dot, option = key.rpartition(".")
        if not dot and len(rewards) == 1:
            reward = rewards[0]
        if reward not in rewards:
            raise ValueError(f"Option {key!r} does not name one of the rewards ({', '.join(rewards)}); write it as "
                             f"REWARD.{option}=VALUE.")
        scoped.setdefault(reward, {})[option] = value
    return scoped


def add_parser(subparsers: Any) -> None:
    """Add ``prefilter`` to the ``referee`` subcommands.

    Example:
        >>> parser = argparse.ArgumentParser()
        >>> add_parser(parser.add_subparsers())
        >>> parser.parse_args(["prefilter", "--out", "runs/x", "--keep", "0.125:0.875"]).keep
        KeepBounds(low=0.125, high=0.875)
    """
    parser = subparsers.add_parser("prefilter", help="keep the prompts whose pass rate lies in a band",
                                   description=_DESCRIPTION)
    sampling, engine = SamplingOptions(), EngineOptions()
    main = parser.add_argument_group("what to run")
    main.add_argument("--model", help="model folder or hub name")
    main.add_argument("--data", help="a .jsonl/.jsonl.gz/.parquet file, a datasets folder or a hub dataset name")
    main.add_argument("--reward", action="append", default=[], metavar="R",
                      help="reward name (referee.rewards) or module:function; repeat for several")
    main.add_argument("-O", "--option", action="append", default=[], metavar="REWARD.KEY=VALUE",
                      help="reward option, VALUE read as JSON when it parses (e.g. -O gsm8k_accuracy.mode=strict; "
                           "KEY=VALUE alone with one --reward)")
    main.add_argument("--num-generations", type=int, default=8, metavar="G", help="samples per prompt (default 8)")
    main.add_argument("--keep", type=_keep, metavar="LO:HI",
                      help="inclusive pass-rate band of the rows to keep, e.g. 0.125:0.875 (required unless --merge)")
    main.add_argument("--out", required=True, metavar="DIR", help="output folder (a rerun resumes from it)")
    scoring = parser.add_argument_group("scoring")
    scoring.add_argument("--success-reward", metavar="NAME", help="the reward that decides a pass (default: the first)")
    scoring.add_argument("--threshold", type=float, default=1.0,
                         help="a sample passes when the success reward is >= this (default 1.0)")
    data = parser.add_argument_group("data and prompts")
    data.add_argument("--split", default="train", help="split of a datasets source (default train)")
    data.add_argument("--data-config", metavar="NAME", help="configuration of a hub dataset (e.g. main for gsm8k)")
    data.add_argument("--prompt-column", default="prompt", metavar="COL", help="column with the prompt (default prompt)")
    data.add_argument("--chat-template", choices=CHAT_TEMPLATE_MODES, default="auto",
                      help="auto: chat template for chat prompts only, as TRL does; always: also wrap text prompts")
    data.add_argument("--system-prompt", metavar="TEXT", help="system message added when --chat-template always wraps")
    data.add_argument("--chat-template-kwargs", type=_json_object, default={}, metavar="JSON",
                      help="extra chat template variables, e.g. '{\"enable_thinking\": false}'")
    sample = parser.add_argument_group("sampling (defaults are TRL GRPOConfig's)")
    sample.add_argument("--temperature", type=float, default=sampling.temperature, help="0 means greedy")
    sample.add_argument("--top-p", type=float, default=sampling.top_p)
    sample.add_argument("--top-k", type=int, default=sampling.top_k, help="0 switches it off")
    sample.add_argument("--min-p", type=float, default=sampling.min_p, help="0 switches it off")
    sample.add_argument("--max-tokens", type=int, default=sampling.max_tokens, help="new tokens per sample")
    sample.add_argument("--seed", type=int, default=sampling.seed)
    backend = parser.add_argument_group("generation backend")
    backend.add_argument("--backend", choices=BACKENDS, default=engine.backend,
                         help="auto: vLLM when CUDA and vLLM are available, else transformers")
    backend.add_argument("--device", default=engine.device, help="transformers: auto, cpu, cuda, cuda:1, ...")
    backend.add_argument("--dtype", default=engine.dtype, help="auto (bfloat16 on GPU, float32 on CPU), float16, ...")
    backend.add_argument("--batch-size", type=int, default=engine.batch_size,
                         help="transformers: prompts per generate call (each times G samples)")
    backend.add_argument("--tensor-parallel-size", type=int, default=engine.tensor_parallel_size, help="vLLM: GPUs per engine")
    backend.add_argument("--data-parallel-size", type=int, default=engine.data_parallel_size,
                         help="worker processes, each on its own group of --tensor-parallel-size GPUs")
    backend.add_argument("--gpu-memory-utilization", type=float, default=engine.gpu_memory_utilization, help="vLLM")
    backend.add_argument("--max-model-len", type=int, default=engine.max_model_len, help="vLLM: context length")
    backend.add_argument("--no-prefix-caching", action="store_true", help="vLLM: switch prefix caching off")
    run = parser.add_argument_group("long runs and output")
    run.add_argument("--chunk-size", type=int, default=64, help="rows per saved chunk (default 64)")
    run.add_argument("--shard-index", type=int, default=0, help="this machine's shard (default 0)")
    run.add_argument("--num-shards", type=int, default=1, help="how many machines split the data (default 1)")
    run.add_argument("--merge", nargs="+", metavar="SHARD_DIR",
                     help="merge the --out folders of finished shard runs into --out (no generation)")
    run.add_argument("--group-size", type=int, metavar="G",
                     help="training group size for the predicted degenerate-group share (default --num-generations)")
    run.add_argument("--save-samples", action="store_true", help="keep each sample's text, rewards and verdict fields")
    run.add_argument("--format", choices=OUTPUT_FORMATS, default=None,
                     help="format of all/kept: jsonl (default), parquet or datasets")
    run.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    parser.set_defaults(run=run_command)


def _config(args: argparse.Namespace) -> Any:
    from referee.recipes.prefilter import PrefilterConfig

    missing = [flag for flag, value in (("--model", args.model), ("--data", args.data), ("--reward", args.reward),
                                        ("--keep", args.keep)) if not value]
    if missing:
        raise ValueError(f"{', '.join(missing)} {'is' if len(missing) == 1 else 'are'} required (unless --merge).")
    return PrefilterConfig(
        model=args.model, data=args.data, rewards=tuple(args.reward), out=args.out, keep=args.keep,
        reward_options=scope_reward_options(args.option, args.reward),
        num_generations=args.num_generations, success_reward=args.success_reward, threshold=args.threshold,
        split=args.split, data_config=args.data_config, prompt_column=args.prompt_column,
        chat_template=args.chat_template, system_prompt=args.system_prompt,
        chat_template_kwargs=args.chat_template_kwargs,
        sampling=SamplingOptions(temperature=args.temperature, top_p=args.top_p, top_k=args.top_k, min_p=args.min_p,
                                 max_tokens=args.max_tokens, seed=args.seed),
        engine=EngineOptions(backend=args.backend, device=args.device, dtype=args.dtype, batch_size=args.batch_size,
                             tensor_parallel_size=args.tensor_parallel_size,
                             data_parallel_size=args.data_parallel_size,
                             gpu_memory_utilization=args.gpu_memory_utilization, max_model_len=args.max_model_len,
                             enable_prefix_caching=not args.no_prefix_caching),
        chunk_size=args.chunk_size, shard_index=args.shard_index, num_shards=args.num_shards,
        group_size=args.group_size, save_samples=args.save_samples, output_format=args.format or "jsonl",
        progress=not args.no_progress,
    )


def summary_lines(report: dict[str, Any], out: str) -> list[str]:
    """The printed summary of a finished run.

    Example:
        >>> report = {"rows": 10, "rows_scored": 9, "rows_with_errors": 1, "kept": 4,
        ...           "keep": {"low": 0.125, "high": 0.875}, "mean_pass_rate": {"before": 0.5, "after": 0.4},
        ...           "degenerate_groups": {"group_size": 8, "before": 0.5, "after": 0.05},
        ...           "files": {"kept": "kept.jsonl"}}
        >>> print("\\n".join(summary_lines(report, "out")))
        rows              10 (9 scored, 1 with errors)
        kept              4 with pass rate in [0.125, 0.875]
        mean pass rate    0.500 -> 0.400
        degenerate groups 50.0% -> 5.0% at G=8
        results           out/kept.jsonl, out/report.json, out/pass_rate_hist.png
    """
    def share(value: float | None, fmt: str) -> str:
        return "n/a" if value is None else format(value, fmt)

    keep, means, degenerate = report["keep"], report["mean_pass_rate"], report["degenerate_groups"]
    return [
        f"{'rows':<17} {report['rows']} ({report['rows_scored']} scored, {report['rows_with_errors']} with errors)",
        f"{'kept':<17} {report['kept']} with pass rate in [{keep['low']:g}, {keep['high']:g}]",
        f"{'mean pass rate':<17} {share(means['before'], '.3f')} -> {share(means['after'], '.3f')}",
        f"{'degenerate groups':<17} {share(degenerate['before'], '.1%')} -> {share(degenerate['after'], '.1%')} "
        f"at G={degenerate['group_size']}",
        f"{'results':<17} {out}/{report['files']['kept']}, {out}/report.json, {out}/pass_rate_hist.png",
    ]


def run_command(args: argparse.Namespace) -> int:
    """Run (or merge) the pre-filter ``args`` describe; 0 on success, 2 for a user error, 130
    after Ctrl-C.

    Example:
        >>> parser = argparse.ArgumentParser()
        >>> add_parser(parser.add_subparsers())
        >>> run_command(parser.parse_args(["prefilter", "--out", "runs/x", "--merge", "no/such/shard"]))
        2
    """
    from referee.recipes.prefilter import merge_runs, run_prefilter
    from referee.recipes.prefilter.parallel import WorkerError

    try:
        if args.merge:
            _check_paths(args)
            report = merge_runs(args.merge, args.out, keep=args.keep, group_size=args.group_size,
                                output_format=args.format)
        else:
            config = _config(args)
            _check_paths(args)
            report = run_prefilter(config)
    except KeyboardInterrupt:
        print(f"referee prefilter: stopped; finished chunks are saved in {args.out}/state. Run the same command "
              "again to resume.", file=sys.stderr)
        return 130
    except ValueError as exc:
        print(f"referee prefilter: {exc}", file=sys.stderr)
        return 2
    except WorkerError as exc:
        print(f"referee prefilter: {exc}", file=sys.stderr)
        return 1
    print("\n".join(summary_lines(report, args.out)))
    problem = no_row_scored(report)
    if problem:
        print(f"referee prefilter: {problem}", file=sys.stderr)
        return 1
    return 0


def no_row_scored(report: dict[str, Any]) -> str | None:
    """The one-line reason a run failed as a whole: no row got a pass rate (``None`` otherwise).

    Example:
        >>> no_row_scored({"rows": 3, "rows_scored": 0, "errors": {"unscored_reasons": [
        ...     {"reason": "prompt is 9 tokens; with 512 new tokens that exceeds ...", "rows": 2},
        ...     {"reason": "prompt is empty", "rows": 1}]}})
        'no row of 3 could be scored; most often (2 rows): prompt is 9 tokens; with 512 new tokens that exceeds ...'
        >>> no_row_scored({"rows": 3, "rows_scored": 1, "errors": {}}) is None
        True
    """
    if not report.get("rows") or report.get("rows_scored"):
        return None
    reasons = report.get("errors", {}).get("unscored_reasons") or []
    if not reasons:
        return f"no row of {report['rows']} could be scored; see the errors in all.jsonl."
    return f"no row of {report['rows']} could be scored; most often ({reasons[0]['rows']} rows): {reasons[0]['reason']}"


def _check_paths(args: argparse.Namespace) -> None:
    """Refuse an ``--out``, ``--data``, ``--model`` or ``--merge`` path that cannot work, in one
    line (``ValueError``), before anything is loaded; ``--out`` is created when missing."""
    for folder in args.merge or ():
        if not Path(folder).is_dir():
            raise ValueError(f"--merge {folder} is not a folder; pass the --out folders of the shard runs.")
    for flag, value in (("--data", args.data), ("--model", args.model)):
        if value and _looks_local(value) and not Path(value).exists():
            raise ValueError(f"{flag} {value} does not exist; give a path that exists or a hub name such as "
                             f"{'openai/gsm8k' if flag == '--data' else 'Qwen/Qwen2.5-0.5B-Instruct'}.")
    if args.model and Path(args.model).is_file():
        raise ValueError(f"--model {args.model} is a file; give the model's folder or a hub name.")
    if args.data and Path(args.data).is_dir() and not any(Path(args.data).iterdir()):
        raise ValueError(f"--data {args.data} is an empty folder; give a .jsonl/.parquet file or a folder saved by "
                         "datasets.")
    out = Path(args.out)
    if args.data and Path(args.data).exists():
        written = [out / f"{stem}{suffix}" for stem in ("all", "kept") for suffix in ("", ".jsonl", ".parquet")]
        if any(same_file(args.data, path) for path in written if path.exists()):
            raise ValueError(f"--data {args.data} is a result file of --out {args.out}, which this run rewrites; copy "
                             "it elsewhere or choose another --out.")
    if out.exists() and not out.is_dir():
        raise ValueError(f"--out {args.out} is a file; give a folder for the results (it is created if missing).")
    try:
        out.mkdir(parents=True, exist_ok=True)
        tempfile.NamedTemporaryFile(dir=out, prefix=".write-check-").close()
    except OSError as exc:
        raise ValueError(f"--out {args.out} cannot be written ({exc.strerror or exc}); choose a folder you can "
                         "write to.") from None


def _looks_local(value: str) -> bool:
    """Whether a ``--model``/``--data`` value is a path rather than a hub name (``owner/name``).

    Example:
        >>> _looks_local("Qwen/Qwen2.5-0.5B"), _looks_local("./model"), _looks_local("/data/x.jsonl")
        (False, True, True)
    """
    return (value.startswith(("/", ".", "~")) or value.count("/") > 1
            or value.endswith((".jsonl", ".json", ".gz", ".parquet", ".csv")))
