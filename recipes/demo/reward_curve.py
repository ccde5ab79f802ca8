"""The reward curve of a run as a PNG, from the trainer's ``log_history``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
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


def first_and_last_tenth(values: Sequence[float]) -> tuple[float, float] | None:
    """The means of the first and the last tenth of ``values`` (at least one value each);
    ``None`` when there are none.

    Example:
        >>> first_and_last_tenth([0.25] * 10 + [0.5] * 80 + [0.75] * 10)
        (0.25, 0.75)
        >>> first_and_last_tenth([0.2, 0.4]), first_and_last_tenth([])
        ((0.2, 0.4), None)
    """
    if not values:
        return None
    span = max(1, len(values) // 10)
    return sum(values[:span]) / span, sum(values[-span:]) / span


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

    figure, axes = plt.subplots(figsize=(7, 4), dpi=100)
    for key in keys:
        steps, values = logged_series(log_history, key)
        if not steps:
            raise ValueError(f"No {key!r} in the log history; log it (logging_steps) or plot another key.")
        line = axes.plot(steps, values, alpha=0.3, linewidth=1)[0]
        axes.plot(steps, moving_average(values, window), color=line.get_color(), linewidth=2,
                  label=f"{key} ({window}-step mean)")
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
