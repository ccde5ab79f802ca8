"""The end of a ``referee train`` run: the reward curve beside the outputs and a summary of the run.

The curve is the demo's (:mod:`referee.recipes.demo.reward_curve`): the logged ``reward`` of each
step, faint, and its moving average. The summary says how many steps ran, the mean sampled reward
of the first and the last tenth of the logged steps (halves below 10 logged steps, the one value
of a single one), how long it took and where the outputs are.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..demo.reward_curve import RewardChange, logged_series, plot_reward_curve


def write_reward_curve(log_history: Sequence[Mapping[str, Any]], output_dir: str | Path) -> Path | None:
    """Write ``reward_curve.png`` in ``output_dir``; ``None`` when no step logged a reward.

    Example:
        >>> import tempfile
        >>> write_reward_curve([{"step": s, "reward": s / 10} for s in range(1, 11)], tempfile.mkdtemp()).name
        'reward_curve.png'
        >>> write_reward_curve([{"step": 1, "loss": 0.5}], tempfile.mkdtemp()) is None
        True
    """
    steps, _ = logged_series(log_history, "reward")
    if not steps:
        return None
    return plot_reward_curve(log_history, Path(output_dir) / "reward_curve.png", window=max(1, len(steps) // 10),
                             title=f"GRPO reward, {Path(output_dir).name}")


def run_summary(log_history: Sequence[Mapping[str, Any]], steps: int, seconds: float, output_dir: str | Path,
                curve: Path | None) -> str:
    """The lines ``referee train`` ends with.

    Example:
        >>> history = [{"step": s, "reward": 0.2 if s <= 10 else 0.6} for s in range(1, 101)]
        >>> print(run_summary(history, 100, 17.2, "runs/cpu_recipe", Path("runs/cpu_recipe/reward_curve.png")))
        trained 100 steps in 17 s
        reward (mean of the sampled completions): first tenth of the 100 logged steps 0.200, last tenth 0.600
        outputs in runs/cpu_recipe: the model, its tokenizer, trainer_state.json (every logged metric), reward_curve.png
    """
    change = RewardChange.of(logged_series(log_history, "reward")[1])
    reward = (f"reward (mean of the sampled completions): {change.describe()}" if change else
              "reward: none logged (set logging_steps at most max_steps to see it)")
    files = "the model, its tokenizer, trainer_state.json (every logged metric)" + (f", {curve.name}" if curve else "")
    return f"trained {steps} steps in {seconds:.0f} s\n{reward}\noutputs in {output_dir}: {files}"
