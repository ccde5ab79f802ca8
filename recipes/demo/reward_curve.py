"""The reward curve of a run as a PNG, from the trainer's ``log_history``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any


def logged_series(log_history: Sequence[Mapping[str, Any]], key: str) -> tuple[list[int], list[float]]:
    """(steps, values) of every log entry that has ``key``.

    Example:
        >>> logged_series([{"step": 1, "reward": 0.2}, {"step": 2, "loss": 1.0}, {"step": 3, "reward": 0.5}], "reward")
        ([1, 3], [0.2, 0.5])
    """
    entries = [entry for entry in log_history if key in entry]
    return [int(entry["step"]) for entry in entries], [float(entry[key]) for entry in entries]


@dataclass(frozen=True)
class RewardChange:
    """The mean reward of the first and the last part of a run's logged steps, and which parts:
    tenths from 10 logged steps, halves below that (``steps`` each), one value alone for one step.

    Example:
        >>> RewardChange.of([0.25] * 10 + [0.5] * 80 + [0.75] * 10).describe()
        'first tenth of the 100 logged steps 0.250, last tenth 0.750'
        >>> RewardChange.of([0.2, 0.3, 0.5, 0.6]).describe()
        'first half of the 4 logged steps 0.250, last half 0.550'
        >>> RewardChange.of([0.41]).describe(), RewardChange.of([]) is None
        ('one logged step, 0.410: nothing to compare (log more often: logging_steps)', True)
    """

    first: float
    last: float
    part: str  # "tenth", "half" or "step"
    logged: int

    @classmethod
    def of(cls, values: Sequence[float]) -> RewardChange | None:
        """The change over ``values`` (one logged reward per step); ``None`` when there are none."""
        if not values:
            return None
        part, span = ("tenth", len(values) // 10) if len(values) >= 10 else ("half", max(1, len(values) // 2))
        part = part if len(values) > 1 else "step"
        return cls(sum(values[:span]) / span, sum(values[-span:]) / span, part, len(values))

    def describe(self) -> str:
        """One phrase for a summary line."""
        if self.part == "step":
            return f"one logged step, {self.first:.3f}: nothing to compare (log more often: logging_steps)"
        return (f"first {self.part} of the {self.logged} logged steps {self.first:.3f}, "
                f"last {self.part} {self.last:.3f}")


def moving_average(values: Sequence[float], window: int) -> list[float]:
    """The mean of each value and the ``window - 1`` before it (fewer at the start).

    Example:
        >>> moving_average([1.0, 2.0, 3.0, 4.0], 2)
        [1.0, 1.5, 2.5, 3.5]
    """
    if window < 1:
        raise ValueError(f"window={window} must be at least 1.")
    averages, total = [], 0.0
    for index, value in enumerate(values):
        total += value
        if index >= window:
            total -= values[index - window]
        averages.append(total / min(index + 1, window))
    return averages


def plot_reward_curve(
    log_history: Sequence[Mapping[str, Any]],
    path: str | Path,
    *,
    keys: Sequence[str] = ("reward",),
    window: int = 20,
    title: str = "GRPO reward",
) -> Path:
    """Write a PNG of each logged ``keys`` series (faint) and its moving average (solid).

    Example:
        >>> import tempfile, os
        >>> history = [{"step": s, "reward": s / 10} for s in range(1, 11)]
        >>> png = plot_reward_curve(history, os.path.join(tempfile.mkdtemp(), "curve.png"), window=3)
        >>> png.read_bytes()[:4] == b"\\x89PNG"
        True
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    figure, axes = plt.subplots(figsize=(7, 4), dpi=100)
    for key in keys:
        steps, values = logged_series(log_history, key)
        if not steps:
            raise ValueError(f"No {key!r} in the log history; log it (logging_steps) or plot another key.")
        few = len(steps) < 20  # a line through a handful of points hides them: each gets a marker
        line = axes.plot(steps, values, alpha=0.3, linewidth=1, marker="o" if few else None)[0]
        axes.plot(steps, moving_average(values, window), color=line.get_color(), linewidth=2,
                  marker="o" if few else None, label=f"{key} ({window}-step mean)")
        if len(steps) == 1:
            axes.set_xlim(steps[0] - 1, steps[0] + 1)
            axes.text(0.5, 0.9, f"one logged step ({values[0]:.3f}): log more often to see a curve",
                      transform=axes.transAxes, ha="center", va="top")
    axes.xaxis.set_major_locator(MaxNLocator(integer=True))  # steps are whole: no 9.6 between 9 and 10
    axes.set_xlabel("optimizer step")
    axes.set_ylabel("mean reward of the sampled completions")
    axes.set_title(title)
    axes.grid(alpha=0.3)
    axes.legend(loc="lower right")
    figure.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path)
    plt.close(figure)
    return path
