"""The figures the README and docs state, measured by running their commands as a new user does.

Each step runs one documented command in a work folder (with ``examples/`` linked in, so the
commands run exactly as written from the repository root) and reads its figures from the files
it writes:

* ``demo``: ``referee demo`` (what ``make demo`` runs): held-out greedy accuracy before and after
  GRPO, its gain, and the seconds it reports;
* ``eval``: the README's ``referee eval`` on the demo's model (pass@1, pass@16, maj@16), and
  ``eval_recipe``: the same run through ``--recipe examples/cpu_recipe.yaml``;
* ``prefilter``: ``sh examples/prefilter.sh`` (rows kept, mean pass rate, predicted degenerate groups);
* ``train``: ``referee train examples/cpu_recipe.yaml`` (steps, seconds, sampled reward and
  ``gsm8k_accuracy`` over the first and last tenth of the logged steps);
* ``make_test`` (only with ``--make-test``): ``make test`` on a fresh clone of this checkout's HEAD,
  minutes with and without the slow tests.

A figure a page states carries a marker on the same line, ``<!-- figure KEY LO..HI -->``: the
range a run on another machine may land in. ``tests/test_docs_figures.py`` checks that each
marked line states the value this script last wrote to ``docs/measured_figures.json``
and, in a test marked slow, that a new run lands every figure inside its range.

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
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "docs" / "measured_figures.json"
MARKER_RE = re.compile(r"<!-- figure (?P<key>[\w.@]+) (?P<low>-?[0-9.]+)\.\.(?P<high>-?[0-9.]+) -->")
EVAL = ["eval", "--model", "runs/demo/model", "--data", "examples/sums.jsonl", "--prompt-column", "question",
        "--chat-template", "always", "--reward", "gsm8k_accuracy", "-k", "16", "--max-tokens", "8",
        "--backend", "transformers", "--device", "cpu", "--out", "runs/eval-sums"]
EVAL_RECIPE = ["eval", "--recipe", "examples/cpu_recipe.yaml", "--data", "examples/sums.jsonl", "-k", "16",
               "--backend", "transformers", "--out", "runs/eval-sums-recipe"]
# How each figure is written in the pages: the marked line must hold the measured value in this form.
FORMATS: dict[str, str] = {
    "demo.before": "{:.1%}", "demo.after": "{:.1%}", "demo.gain": "{:+.1f} points", "demo.seconds": "{:.0f} s",
    "eval.pass@1": "{:.3f}", "eval.pass@16": "{:.3f}", "eval.maj@16": "{:.3f}", "eval.seconds": "{:.0f} s",
    "prefilter.kept": "{:d} of the 32", "prefilter.mean_pass_rate": "{:.2f}", "prefilter.degenerate_before": "{:.1%}",
    "prefilter.degenerate_after": "{:.1%}", "prefilter.seconds": "{:.0f} s",
    "train.seconds": "{:.0f} s", "train.reward_first": "{:.2f}", "train.reward_last": "{:.2f}",
    "train.accuracy_first": "{:.2f}", "train.accuracy_last": "{:.2f}",
    "make_test.minutes": "{:.1f} minutes", "make_test.not_slow_minutes": "{:.1f} minutes",
}


def written(key: str, value: float) -> str:
    """``value`` as the pages write figure ``key``.

    Example:
        >>> written("demo.after", 0.6375), written("eval.pass@1", 0.49), written("prefilter.kept", 28)
        ('63.7%', '0.490', '28 of the 32')
    """
    text = FORMATS[key]
    return text.format(int(value)) if ":d}" in text else text.format(value)


def referee(*args: str, cwd: Path) -> float:
    """Run ``referee args`` in ``cwd`` as the pages write it; the seconds it took. Raises on a non-zero exit."""
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "referee.recipes.cli", *args], cwd=cwd, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"referee {' '.join(args)} exited {done.returncode}: {done.stderr.strip()[-2000:]}")
    return time.perf_counter() - started


def demo(cwd: Path) -> dict[str, float]:
    referee("demo", cwd=cwd)
    metrics = json.loads((cwd / "runs/demo/metrics.json").read_text())
    before, after = metrics["greedy_accuracy_before"], metrics["greedy_accuracy_after"]  # shares, printed as the demo does
    return {"demo.before": before, "demo.after": after, "demo.gain": 100 * (after - before),
            "demo.seconds": metrics["seconds"]}


def _eval_figures(cwd: Path, args: list[str], prefix: str) -> dict[str, float]:
    seconds = referee(*args, cwd=cwd)
    metrics = json.loads((cwd / args[args.index("--out") + 1] / "report.json").read_text())["metrics"]
    return {f"{prefix}.pass@1": metrics["pass@1"], f"{prefix}.pass@16": metrics["pass@16"],
            f"{prefix}.maj@16": metrics["maj@16"], f"{prefix}.seconds": seconds}


def prefilter(cwd: Path) -> dict[str, float]:
    started = time.perf_counter()
    done = subprocess.run(["sh", "examples/prefilter.sh"], cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, "REFEREE": str(Path(sys.executable).parent / "referee")})
    if done.returncode != 0:
        raise RuntimeError(f"sh examples/prefilter.sh exited {done.returncode}: {done.stderr.strip()[-2000:]}")
    report = json.loads((cwd / "runs/prefilter-sums/report.json").read_text())
    return {"prefilter.kept": report["kept"], "prefilter.mean_pass_rate": report["mean_pass_rate"]["before"],
            "prefilter.degenerate_before": report["degenerate_groups"]["before"],
            "prefilter.degenerate_after": report["degenerate_groups"]["after"],
            "prefilter.seconds": time.perf_counter() - started}


def train(cwd: Path) -> dict[str, float]:
    from referee.recipes.demo.reward_curve import RewardChange, logged_series

    seconds = referee("train", "examples/cpu_recipe.yaml", cwd=cwd)
    history = json.loads((cwd / "runs/cpu_recipe/trainer_state.json").read_text())["log_history"]
    reward = RewardChange.of(logged_series(history, "reward")[1])
    accuracy = RewardChange.of(logged_series(history, "rewards/gsm8k_accuracy/mean")[1])
    if reward is None or accuracy is None:
        raise RuntimeError("referee train examples/cpu_recipe.yaml logged no reward")
    return {"train.seconds": seconds, "train.reward_first": reward.first, "train.reward_last": reward.last,
            "train.accuracy_first": accuracy.first, "train.accuracy_last": accuracy.last}


def make_test(_: Path) -> dict[str, float]:
    """``make test`` on a fresh clone of this checkout's HEAD: the tests not marked slow, then the slow
    ones; the whole suite's minutes are their sum (one install serves both)."""
    minutes = {}
    with tempfile.TemporaryDirectory(prefix="referee-clone-") as clone:
        subprocess.run(["git", "clone", "-q", str(ROOT), clone], check=True)
        subprocess.run(["make", "install"], cwd=clone, check=True, capture_output=True)
        for marks in ("not slow", "slow"):
            started = time.perf_counter()
            done = subprocess.run(["make", "test", f"PYTEST_ARGS=-m '{marks}'"], cwd=clone, capture_output=True, text=True)
            if done.returncode != 0:
                raise RuntimeError(f"make test -m '{marks}' failed on a fresh clone:\n{done.stdout[-6000:]}")
            minutes[marks] = (time.perf_counter() - started) / 60
    return {"make_test.minutes": minutes["not slow"] + minutes["slow"], "make_test.not_slow_minutes": minutes["not slow"]}


STEPS: dict[str, Callable[[Path], dict[str, float]]] = {
    "demo": demo, "eval": lambda cwd: _eval_figures(cwd, EVAL, "eval"),
    "eval_recipe": lambda cwd: _eval_figures(cwd, EVAL_RECIPE, "eval_recipe"), "prefilter": prefilter, "train": train,
    "make_test": make_test,
}


def measure(steps: list[str], workdir: Path) -> dict[str, float]:
    """Run ``steps`` in order in ``workdir`` (``demo`` first: the others use its model); their figures."""
    (workdir / "examples").exists() or (workdir / "examples").symlink_to(ROOT / "examples", target_is_directory=True)
    figures: dict[str, float] = {}
    for step in steps:
        measured = STEPS[step](workdir)
        figures.update(measured)
        print(f"{step}: " + ", ".join(f"{key} {value:.4g}" for key, value in measured.items()), flush=True)
    return figures


def machine() -> dict[str, Any]:
    """Where the figures were measured: CPUs, processor, Python, the date."""
    return {"cpus": os.cpu_count(), "processor": platform.processor() or platform.machine(),
            "python": platform.python_version(), "date": datetime.date.today().isoformat()}


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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", default="demo,eval,eval_recipe,prefilter,train",
                        help="comma-separated steps (demo first; default %(default)s)")
    parser.add_argument("--make-test", action="store_true", help="also time make test on a fresh clone of HEAD (about 15 min)")
    parser.add_argument("--workdir", help="where the commands run (default: a new temporary folder)")
    parser.add_argument("--json", default=str(RESULTS), help="where to write the figures (default %(default)s)")
    args = parser.parse_args(argv)
    steps = [step for step in args.steps.split(",") if step] + (["make_test"] if args.make_test else [])
    unknown = sorted(set(steps) - set(STEPS))
    if unknown:
        parser.error(f"unknown steps {', '.join(unknown)}; choose from {', '.join(STEPS)}")
    workdir = Path(args.workdir or tempfile.mkdtemp(prefix="referee-docs-"))
    workdir.mkdir(parents=True, exist_ok=True)
    figures = measure(steps, workdir)
    previous = json.loads(Path(args.json).read_text())["figures"] if Path(args.json).is_file() else {}
    Path(args.json).write_text(json.dumps({"machine": machine(), "figures": {**previous, **figures}}, indent=1) + "\n")
    print(f"wrote {args.json}")
    if args.workdir is None:
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
