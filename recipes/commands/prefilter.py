"""``referee prefilter``: keep the prompts a model solves sometimes, but not always or never."""

from __future__ import annotations

import argparse
import dataclasses
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from referee.recipes.commands._io import same_file
from referee.recipes.commands.score import parse_options
from referee.recipes.common.config_flags import add_flags, from_flags, missing_flags

_DESCRIPTION = (
    "Sample G completions per prompt with MODEL, score them with the same referee reward functions "
    "the trainer uses, and keep the rows whose pass rate (share of samples where the success reward "
    "reaches --threshold) lies in --keep LO:HI, both bounds inclusive. A None reward (not the "
    "completion's fault, e.g. an unusable gold) is reported per row and left out of the pass-rate "
    "denominator. Writes all.jsonl, kept.jsonl, report.json and pass_rate_hist.png to --out; results "
    "are saved chunk by chunk, so rerunning the same command resumes a stopped run. Shards "
    "(--shard-index/--num-shards) are combined with --merge. Exits 3 when a reward read no answer in 90% or more "
    "of the completions, or when no row is kept and the success reward pays almost none of the samples given the "
    "right answer in place of the model's own (the model never writes what it reads)."
)


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
    from referee.recipes.prefilter.config import PrefilterConfig

    parser = subparsers.add_parser("prefilter", help="keep the prompts whose pass rate lies in a band",
                                   description=_DESCRIPTION)
    groups = add_flags(parser, PrefilterConfig)  # every option of a run, from its config field
    groups["long runs and output"].add_argument(
        "--merge", nargs="+", metavar="SHARD_DIR",
        help="merge the --out folders of finished shard runs into --out (no generation)")
    parser.set_defaults(run=run_command)


def run_config(cls: type, args: argparse.Namespace) -> Any:
    """The run config (``PrefilterConfig`` or ``EvalConfig``) of a command line: flags first, then a
    ``--recipe``'s model, reward, temperature, chat template variables and completion budget for those
    not given, then a new-token budget that fits the model's context (:mod:`referee.recipes.prefilter.budget`).

    Example:
        >>> import json, tempfile
        >>> from referee.recipes.common.tiny_model import save_tiny_model
        >>> from referee.recipes.prefilter import PrefilterConfig
        >>> folder = tempfile.mkdtemp()
        >>> _ = open(f"{folder}/rows.jsonl", "w").write(json.dumps({"prompt": "1 + 1 = ", "answer": 2}))
        >>> parser = argparse.ArgumentParser()
        >>> add_parser(parser.add_subparsers())
        >>> args = parser.parse_args(["prefilter", "--model", str(save_tiny_model(f"{folder}/model")), "--data",
        ...                           f"{folder}/rows.jsonl", "--reward", "gsm8k_accuracy", "--out", f"{folder}/out",
        ...                           "--keep", "0:1"])
        >>> run_config(PrefilterConfig, args).sampling.max_tokens  # the tiny model's 256 tokens less the prompt's 8
        248
    """
    from referee.recipes.prefilter.budget import DEFAULT_MAX_TOKENS, fitted_budget

    wanted = DEFAULT_MAX_TOKENS
    options = scope_reward_options(args.reward_options, args.rewards)
    if args.recipe is not None:
        from referee.recipes.prefilter.recipe_prompts import read_recipe_prompts

        recipe = read_recipe_prompts(args.recipe)
        args.model = args.model or recipe.model
        if not args.rewards:
            args.rewards = [recipe.reward]
            options = {recipe.reward: recipe.reward_options} if recipe.reward_options else {}
        args.temperature = recipe.temperature if args.temperature is None else args.temperature
        args.chat_template_kwargs = args.chat_template_kwargs or recipe.chat_template_kwargs
        wanted = recipe.max_completion_length
    missing = missing_flags(cls, args)
    if missing:
        raise ValueError(f"{', '.join(missing)} {'is' if len(missing) == 1 else 'are'} required (unless --merge).")
    config = from_flags(cls, args, reward_options=options)
    if args.max_tokens is not None:
        return config
    budget = fitted_budget(config, wanted)
    if budget.longest_prompt is not None:
        print(budget.reason, file=sys.stderr)
    return dataclasses.replace(config, sampling=dataclasses.replace(config.sampling, max_tokens=budget.max_tokens))


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
    """Run (or merge) the pre-filter ``args`` describe; 0 on success, 2 for a user error, 3 when the
    reward read no answer in almost every completion, 130 after Ctrl-C.

    Example:
        >>> parser = argparse.ArgumentParser()
        >>> add_parser(parser.add_subparsers())
        >>> run_command(parser.parse_args(["prefilter", "--out", "runs/x", "--merge", "no/such/shard"]))
        2
    """
    from referee.recipes.prefilter import PrefilterConfig, merge_runs, run_prefilter

    def work() -> dict[str, Any]:
        if args.merge:
            _check_paths(args)
            return merge_runs(args.merge, args.out, keep=args.keep, group_size=args.group_size,
                              output_format=args.output_format)
        config = run_config(PrefilterConfig, args)
        _check_paths(args)
        return run_prefilter(config)

    return report_run("prefilter", args.out, work, summary_lines)


def report_run(command: str, out: str, work: Callable[[], dict[str, Any]],
               summary: Callable[[dict[str, Any], str], list[str]]) -> int:
    """Run a chunked run's ``work`` and print its ``summary``: 0, or 2 for a user error (one line), 1
    when a worker failed or no row could be scored, 3 when a reward read no answer in almost every
    completion (:func:`unread_answers`), 130 after Ctrl-C (the chunks done are kept).

    Example:
        >>> def broken():
        ...     raise ValueError("--data d.jsonl does not exist")
        >>> report_run("prefilter", "out", broken, lambda report, out: [])
        2
    """
    from referee.recipes.prefilter.parallel import WorkerError

    try:
        report = work()
    except KeyboardInterrupt:
        print(f"referee {command}: stopped; finished chunks are saved in {out}/state. Run the same command "
              "again to resume.", file=sys.stderr)
        return 130
    except ValueError as exc:
        print(f"referee {command}: {exc}", file=sys.stderr)
        return 2
    except WorkerError as exc:
        print(f"referee {command}: {exc}", file=sys.stderr)
        return 1
    print("\n".join(summary(report, out)))
    problem = no_row_scored(report)
    if problem:
        print(f"referee {command}: {problem}", file=sys.stderr)
        return 1
    unread = unread_answers(report)
    if unread:
        print(f"referee {command}: {unread}", file=sys.stderr)
        return UNREAD_EXIT
    return 0


UNREAD_EXIT = 3  # the run finished, but the reward read no answer in (almost) every completion
UNREAD_SHARE = 0.9


def unread_answers(report: dict[str, Any]) -> str | None:
    """Why a finished run means nothing: a reward read no answer in at least 90% of the completions
    (its ``rewards/<name>/no_answer`` share), or, for a reward that logs no such share, no row was kept
    (eval: solved) and the success reward paid at most 10% of the samples given the right answer where the model
    wrote its own (:data:`referee.recipes.prefilter.unread.UNREAD_METRIC`): the model never writes
    what the reward reads.

    Example:
        >>> print(unread_answers({"kept": 0, "reward_metrics": {"rewards/json_answer/no_answer": 1.0,
        ...                                                      "rewards/json_answer/error": 0.0}}))
        the reward json_answer read no answer in 100% of the completions: the model never writes what the reward reads, so no pass rate means anything (kept 0 rows); read the samples in all.jsonl and prompt for the format the reward reads (referee audit names it), or pick a reward that reads what the model writes.
        >>> unread_answers({"reward_metrics": {"rewards/gsm8k_accuracy/no_answer": 0.3}}) is None
        True
        >>> print(unread_answers({"kept": 0, "success_reward": "final_tags",
        ...                       "reward_metrics": {"prefilter/right_answer_unread": 1.0}}))
        no row can be kept: the reward final_tags paid nothing, not even the samples given the right answer in place of the model's own (100% of them unpaid), so it does not read where the model writes its answer: the model never writes what the reward reads; read the samples (--save-samples) and prompt for the format the reward reads (referee audit REWARD DATA names it), or pick a reward that reads what the model writes.
    """
    detail = f" {report['unread_detail']}" if report.get("unread_detail") else ""  # what the model wrote
    for name, share in sorted((report.get("reward_metrics") or {}).items()):
        if name.startswith("rewards/") and name.endswith("/no_answer") and share is not None and share >= UNREAD_SHARE:
            reward = name.removeprefix("rewards/").removesuffix("/no_answer")
            kept = f" (kept {report['kept']} rows)" if "kept" in report else ""
            return (f"the reward {reward} read no answer in {share:.0%} of the completions: the model never writes "
                    f"what the reward reads, so no pass rate means anything{kept}; read the samples in all.jsonl and "
                    "prompt for the format the reward reads (referee audit names it), or pick a reward that reads "
                    f"what the model writes.{detail}")
    from referee.recipes.prefilter.unread import UNREAD_METRIC

    unpaid = (report.get("reward_metrics") or {}).get(UNREAD_METRIC)
    nothing_paid = report.get("kept", report.get("rows_solved")) == 0  # eval: no row with a right sample
    if unpaid is not None and unpaid >= UNREAD_SHARE and nothing_paid:
        outcome = "no row can be kept" if "kept" in report else "no row is solved"
        return (f"{outcome}: the reward {report.get('success_reward', '')} paid nothing, not even the samples "
                f"given the right answer in place of the model's own ({unpaid:.0%} of them unpaid), so it does not read "
                "where the model writes its answer: the model never writes what the reward reads; read the samples "
                "(--save-samples) and prompt for the format the reward reads (referee audit REWARD DATA names it), or "
                f"pick a reward that reads what the model writes.{detail}")
    return None


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
