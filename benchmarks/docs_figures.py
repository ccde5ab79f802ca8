"""The figures the README and docs state, measured by running the README's commands as a new user does.

Each step runs one command, written exactly as the README writes it, in a work folder (with
``examples/`` linked in, so it runs as from the repository root) and reads its figures from what
it prints and the files it writes:

* ``demo``: ``referee demo`` (what ``make demo`` runs): held-out greedy accuracy before and after
  GRPO, its gain, the sampled reward over the first and last tenth of the steps, the seconds it
  reports, and what it printed (``demo.output``, the block docs/training.md shows);
* ``eval``: the README's ``referee eval`` on the demo's model (pass@1, pass@16, maj@16), and
  ``eval_recipe``: the same run through ``--recipe examples/cpu_recipe.yaml``;
* ``prefilter``: ``sh examples/prefilter.sh`` (rows kept, mean pass rate, predicted degenerate groups);
* ``train``: ``referee train examples/cpu_recipe.yaml`` (seconds, sampled reward and
  ``gsm8k_accuracy`` over the first and last tenth of the logged steps);
* ``make_test`` (only with ``--make-test``): ``make install`` and ``make test`` on a fresh clone of
  this checkout's HEAD: minutes for all of it, and for the tests not marked slow alone.

A figure a page states carries a marker on the same line, ``<!-- figure KEY LO..HI -->``: the
range a run on another machine, or under other load, may land in. Each step's date, machine and
load average (before and after it ran: timings on a busy machine run long) are recorded beside
the figures in ``docs/measured_figures.json``. ``tests/test_docs_figures.py`` checks that each
marked line states the recorded value; ``tests/test_docs_walk.py`` (marked slow) runs every
README command again and fails when a figure lands outside its range.

    python -m benchmarks.docs_figures [--steps demo,eval,eval_recipe,prefilter,train] [--make-test] \
        [--json docs/measured_figures.json]
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "docs" / "measured_figures.json"
# The pages a user reads: the README, docs/ and the examples' README.
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "examples" / "README.md"]
MARKER_RE = re.compile(r"<!-- figure (?P<key>[\w.@]+) (?P<low>-?[0-9.]+)\.\.(?P<high>-?[0-9.]+) -->")
EVAL = ("referee eval --model runs/demo/model --data examples/sums.jsonl --prompt-column question --chat-template always "
        "--reward gsm8k_accuracy -k 16 --max-tokens 8 --backend transformers --device cpu --out runs/eval-sums")
# docs/cli.md's command, with its own --out: an eval folder holds one run's settings.
EVAL_RECIPE = ("referee eval --recipe examples/cpu_recipe.yaml --data examples/sums.jsonl -k 16 --backend transformers "
               "--out runs/eval-sums-recipe")
# How each figure is written in the pages: the marked line must hold the measured value in this form.
FORMATS: dict[str, str] = {
    "demo.before": "{:.1%}", "demo.after": "{:.1%}", "demo.gain": "{:+.1f} points", "demo.seconds": "{:.0f} s",
    "demo.cpu_seconds": "{:.0f} s", "demo.reward_first": "{:.3f}", "demo.reward_last": "{:.3f}",
    "eval.pass@1": "{:.3f}", "eval.pass@16": "{:.3f}", "eval.maj@16": "{:.3f}", "eval.seconds": "{:.0f} s",
    "eval.cpu_seconds": "{:.0f} s",
    "prefilter.kept": "{:d} of the 32", "prefilter.mean_pass_rate": "{:.2f}", "prefilter.degenerate_before": "{:.1%}",
    "prefilter.degenerate_after": "{:.1%}", "prefilter.seconds": "{:.0f} s", "prefilter.cpu_seconds": "{:.0f} s",
    "train.seconds": "{:.0f} s", "train.cpu_seconds": "{:.0f} s", "train.reward_first": "{:.2f}",
    "train.reward_last": "{:.2f}", "train.accuracy_first": "{:.2f}", "train.accuracy_last": "{:.2f}",
    "make_test.fresh_clone_minutes": "{:.0f} minutes", "make_test.not_slow_minutes": "{:.1f} minutes",
}


@dataclass(frozen=True)
class Ran:
    """One command as it ran: its exit status, the seconds it took (wall clock, and the CPU time of its
    processes: on a busy machine the first runs long, the second does not), and what it printed
    (stdout and stderr as a terminal shows them: a progress bar's last state only)."""

    returncode: int
    seconds: float
    cpu_seconds: float
    output: str


def shown(raw: str) -> str:
    """``raw`` output as a terminal leaves it: of a line rewritten with carriage returns, its last state.

    Example:
        >>> shown("start\\n 10%|#  | 1/10\\r100%|###| 10/10\\r\\ndone\\n")
        'start\\n100%|###| 10/10\\ndone'
    """
    lines = []
    for line in raw.split("\n"):
        states = [state.rstrip() for state in line.split("\r") if state.strip()]
        if states:
            lines.append(states[-1])
    return "\n".join(lines)


def run_command(command: str, cwd: Path) -> Ran:
    """Run ``command`` with bash in ``cwd`` as a shell with this interpreter's venv activated would.

    Example:
        >>> ran = run_command("echo one; echo two >&2", Path("."))
        >>> ran.returncode, ran.output
        (0, 'one\\ntwo')
    """
    env = {**os.environ, "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])}
    started, used = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
    # Bytes, not text=True: universal newlines would turn a progress bar's carriage returns into lines.
    done = subprocess.run(["bash", "-c", command], cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    now = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = now.ru_utime + now.ru_stime - used.ru_utime - used.ru_stime
    return Ran(done.returncode, time.perf_counter() - started, cpu, shown(done.stdout.decode("utf-8", "replace")))


def _run_step(command: str, cwd: Path) -> Ran:
    """``run_command``, raising with the end of its output when it fails: a step's figures need its files."""
    ran = run_command(command, cwd)
    if ran.returncode != 0:
        raise RuntimeError(f"{command} exited {ran.returncode}:\n{ran.output[-3000:]}")
    return ran


def _demo_figures(cwd: Path, ran: Ran) -> dict[str, Any]:
    """The figures of ``referee demo`` from the ``metrics.json`` it wrote in ``cwd`` and what it printed."""
    metrics = json.loads((cwd / "runs/demo/metrics.json").read_text())
    before, after = metrics["greedy_accuracy_before"], metrics["greedy_accuracy_after"]  # shares, printed as the demo does
    return {"demo.before": before, "demo.after": after, "demo.gain": 100 * (after - before),
            "demo.reward_first": metrics["sampled_reward_first_tenth"],
            "demo.reward_last": metrics["sampled_reward_last_tenth"], "demo.seconds": metrics["seconds"],
            "demo.cpu_seconds": ran.cpu_seconds, "demo.output": ran.output.splitlines()}


def _eval_figures(prefix: str, command: str) -> Callable[[Path, Ran], dict[str, Any]]:
    """The reader of an eval command's ``report.json`` (under its ``--out``), its figures named ``prefix.*``."""
    out = command.split("--out ")[1].split()[0]

    def figures(cwd: Path, ran: Ran) -> dict[str, Any]:
        metrics = json.loads((cwd / out / "report.json").read_text())["metrics"]
        return {f"{prefix}.pass@1": metrics["pass@1"], f"{prefix}.pass@16": metrics["pass@16"],
                f"{prefix}.maj@16": metrics["maj@16"], f"{prefix}.seconds": ran.seconds,
                f"{prefix}.cpu_seconds": ran.cpu_seconds, f"{prefix}.output": ran.output.splitlines()}

    return figures


def _prefilter_figures(cwd: Path, ran: Ran) -> dict[str, Any]:
    """The figures of ``sh examples/prefilter.sh`` from its ``report.json``."""
    report = json.loads((cwd / "runs/prefilter-sums/report.json").read_text())
    return {"prefilter.kept": report["kept"], "prefilter.mean_pass_rate": report["mean_pass_rate"]["before"],
            "prefilter.degenerate_before": report["degenerate_groups"]["before"],
            "prefilter.degenerate_after": report["degenerate_groups"]["after"], "prefilter.seconds": ran.seconds,
            "prefilter.cpu_seconds": ran.cpu_seconds}


def _train_figures(cwd: Path, ran: Ran) -> dict[str, Any]:
    """The figures of ``referee train examples/cpu_recipe.yaml`` from its ``trainer_state.json``."""
    from referee.recipes.demo.reward_curve import RewardChange, logged_series

    history = json.loads((cwd / "runs/cpu_recipe/trainer_state.json").read_text())["log_history"]
    reward = RewardChange.of(logged_series(history, "reward")[1])
    accuracy = RewardChange.of(logged_series(history, "rewards/gsm8k_accuracy/mean")[1])
    if reward is None or accuracy is None:
        raise RuntimeError("referee train examples/cpu_recipe.yaml logged no reward")
    return {"train.seconds": ran.seconds, "train.cpu_seconds": ran.cpu_seconds, "train.reward_first": reward.first,
            "train.reward_last": reward.last, "train.accuracy_first": accuracy.first, "train.accuracy_last": accuracy.last}


# Each step: the command as the pages write it (demo first: the others use its model), and its figures.
STEPS: dict[str, tuple[str, Callable[[Path, Ran], dict[str, Any]]]] = {
    "demo": ("referee demo", _demo_figures),
    "eval": (EVAL, _eval_figures("eval", EVAL)),
    "eval_recipe": (EVAL_RECIPE, _eval_figures("eval_recipe", EVAL_RECIPE)),
    "prefilter": ("sh examples/prefilter.sh", _prefilter_figures),
    "train": ("referee train examples/cpu_recipe.yaml", _train_figures),
}


def _make_test() -> dict[str, Any]:
    """``make install`` then ``make test`` on a fresh clone of this checkout's HEAD: the tests not marked
    slow, then the slow ones; the minutes of all three, and of the tests not marked slow alone."""
    minutes = {}
    with tempfile.TemporaryDirectory(prefix="referee-clone-") as clone:
        subprocess.run(["git", "clone", "-q", str(ROOT), clone], check=True)
        for name, target in (("install", ["make", "install"]), ("not slow", ["make", "test", "PYTEST_ARGS=-m 'not slow'"]),
                             ("slow", ["make", "test", "PYTEST_ARGS=-m slow"])):
            started = time.perf_counter()
            done = subprocess.run(target, cwd=clone, capture_output=True, text=True)
            if done.returncode != 0:
                raise RuntimeError(f"{' '.join(target)} failed on a fresh clone:\n{done.stdout[-6000:]}")
            minutes[name] = (time.perf_counter() - started) / 60
    return {"make_test.fresh_clone_minutes": sum(minutes.values()), "make_test.not_slow_minutes": minutes["not slow"]}


def machine() -> str:
    """The processor, its cores, the instruction set torch runs on and Python: a result can differ between CPUs.

    Example:
        >>> "cores" in machine() and "Python" in machine()
        True
    """
    model = platform.processor() or platform.machine()
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.is_file():
        model = next((line.split(":", 1)[1].strip() for line in cpuinfo.read_text().splitlines()
                      if line.startswith("model name")), model)
    import torch

    return (f"{model}, {os.cpu_count()} cores, torch {torch.__version__} on {torch.backends.cpu.get_cpu_capability()}, "
            f"Python {platform.python_version()}")


def load_average() -> float:
    """The one-minute load average (what else the machine was running; 0.0 where the system has none).

    Example:
        >>> load_average() >= 0.0
        True
    """
    return round(os.getloadavg()[0], 2) if hasattr(os, "getloadavg") else 0.0


def _measure(steps: list[str], workdir: Path) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """Run ``steps`` in order in ``workdir``: their figures, and for each step its date, machine and load."""
    (workdir / "examples").exists() or (workdir / "examples").symlink_to(ROOT / "examples", target_is_directory=True)
    figures: dict[str, Any] = {}
    conditions: dict[str, dict[str, Any]] = {}
    for step in steps:
        load_before = load_average()
        if step == "make_test":
            measured = _make_test()
        else:
            command, read = STEPS[step]
            measured = read(workdir, _run_step(command, workdir))
        conditions[step] = {"date": datetime.date.today().isoformat(), "machine": machine(),
                            "load_average": [load_before, load_average()]}
        figures.update(measured)
        print(f"{step}: " + ", ".join(f"{key} {value:.4g}" for key, value in measured.items()
                                      if isinstance(value, (int, float))), flush=True)
    return figures, conditions


def marked_figures(paths: list[Path]) -> list[tuple[Path, int, str, float, float, str]]:
    """Every ``<!-- figure KEY LO..HI -->`` of ``paths``: (page, line number, key, low, high, the line).

    Example:
        >>> import tempfile
        >>> page = Path(tempfile.mkdtemp()) / "page.md"
        >>> _ = page.write_text("It took 104 s <!-- figure demo.seconds 40..400 -->.\\n")
        >>> [(line, key, low, high) for _, line, key, low, high, _ in marked_figures([page])]
        [(1, 'demo.seconds', 40.0, 400.0)]
    """
    found = []
    for path in paths:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for marker in MARKER_RE.finditer(line):
                found.append((path, number, marker["key"], float(marker["low"]), float(marker["high"]), line))
    return found


def shown_block(page: Path, first: str) -> list[str]:
    """The lines of the fenced block of ``page`` whose first line starts with ``first`` (the output a page shows).

    Example:
        >>> shown_block(ROOT / "docs" / "training.md", "$ make demo")[2].startswith("referee demo: sums a+b")
        True
    """
    lines = page.read_text(encoding="utf-8").splitlines()
    start = next(number for number, line in enumerate(lines)
                 if line.startswith(first) and number and lines[number - 1].startswith("```"))
    return lines[start:lines.index("```", start)]


def written(key: str, value: float) -> str:
    """``value`` as the pages write figure ``key``.

    Example:
        >>> written("demo.after", 0.6375), written("eval.pass@1", 0.49), written("prefilter.kept", 28)
        ('63.7%', '0.490', '28 of the 32')
    """
    text = FORMATS[key]
    return text.format(int(value)) if ":d}" in text else text.format(value)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", default=",".join(STEPS), help="comma-separated steps (demo first; default %(default)s)")
    parser.add_argument("--make-test", action="store_true",
                        help="also time make install and make test on a fresh clone of HEAD (about 20 min on 2 cores)")
    parser.add_argument("--workdir", help="where the commands run (default: a new temporary folder)")
    parser.add_argument("--json", default=str(RESULTS), help="where to write the figures (default %(default)s)")
    args = parser.parse_args(argv)
    steps = [step for step in args.steps.split(",") if step] + (["make_test"] if args.make_test else [])
    unknown = sorted(set(steps) - {*STEPS, "make_test"})
    if unknown:
        parser.error(f"unknown steps {', '.join(unknown)}; choose from {', '.join([*STEPS, 'make_test'])}")
    workdir = Path(args.workdir or tempfile.mkdtemp(prefix="referee-docs-"))
    workdir.mkdir(parents=True, exist_ok=True)
    for step in steps:  # recorded step by step: a failing step keeps what the steps before it measured
        figures, conditions = _measure([step], workdir)
        recorded = json.loads(Path(args.json).read_text()) if Path(args.json).is_file() else {}
        recorded = {"measured": {**recorded.get("measured", {}), **conditions},
                    "figures": {**recorded.get("figures", {}), **figures}}
        Path(args.json).write_text(json.dumps(recorded, indent=1, ensure_ascii=False) + "\n")
    print(f"wrote {args.json}")
    if args.workdir is None:
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
