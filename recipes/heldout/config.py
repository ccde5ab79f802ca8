"""Everything one ``referee eval`` run is asked to do: a pre-filter run that keeps every row and its samples."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from ..common.config_flags import flag
from ..prefilter.bounds import KeepBounds
from ..prefilter.config import PrefilterConfig


def parse_ks(text: str) -> tuple[int, ...]:
    """The ``--ks`` value: k values separated by commas.

    Example:
        >>> parse_ks("1, 4,16")
        (1, 4, 16)
        >>> parse_ks("0,2")
        Traceback (most recent call last):
        ...
        ValueError: --ks '0,2' must list whole numbers >= 1 separated by commas, e.g. 1,4,16.
    """
    try:
        ks = tuple(int(part) for part in text.split(","))
    except ValueError:
        ks = ()
    if not ks or min(ks) < 1:
        raise ValueError(f"--ks {text!r} must list whole numbers >= 1 separated by commas, e.g. 1,4,16.")
    return ks


@dataclass(frozen=True)
class EvalConfig(PrefilterConfig):
    """One evaluation run: sample ``num_generations`` (``-k``) completions per prompt of ``data``
    with ``model``, score them with ``rewards`` (use strict correctness rewards, no shaping), and
    report pass@k, maj@k and more over the prompts.

    Every option of :class:`~referee.recipes.prefilter.PrefilterConfig` applies (backend, chat
    template, shards, resume, data-parallel workers), with the same per-prompt result rows, saved
    with their samples; there is no keep band. ``ks`` are the k values reported (default: the
    powers of two up to ``num_generations``, and ``num_generations``).

    Example:
        >>> config = EvalConfig(model="m", data="d.jsonl", rewards=("math_accuracy",), out="o", num_generations=4)
        >>> config.save_samples, config.keep, type(config.prefilter_config()).__name__
        (True, KeepBounds(low=0.0, high=1.0), 'PrefilterConfig')
    """

    num_generations: int = flag(16, group="what to run", flags=("-k", "--num-samples"), metavar="N",
                                help="samples per prompt, the n of pass@k (default %(default)s)")
    ks: tuple[int, ...] | None = flag(None, group="what to run", type=parse_ks, metavar="K,K,...",
                                      help="k values to report pass@k and maj@k for (default: 1, 2, 4, ... and N)")
    keep: KeepBounds = field(default=KeepBounds(0.0, 1.0))
    save_samples: bool = True
    group_size: int | None = None
    output_format: str = "jsonl"

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.ks is not None:
            object.__setattr__(self, "ks", tuple(self.ks))
            if not self.ks or min(self.ks) < 1:
                raise ValueError(f"ks {self.ks} must hold whole numbers >= 1.")

    def prefilter_config(self) -> PrefilterConfig:
        """The pre-filter run that generates and scores this evaluation's samples.

        Example:
            >>> EvalConfig(model="m", data="d.jsonl", rewards=("gsm8k_accuracy",), out="o").prefilter_config().save_samples
            True
        """
        names = {item.name for item in dataclasses.fields(PrefilterConfig)}
        return PrefilterConfig(**{name: getattr(self, name) for name in names})
