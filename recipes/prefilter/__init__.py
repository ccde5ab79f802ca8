"""Pass-rate pre-filter: sample G completions per prompt, score them with the trainer's rewards,
keep the prompts whose pass rate lies in an inclusive band.

Example:
    >>> from referee.recipes.prefilter import KeepBounds
    >>> KeepBounds.parse("0.125:0.875").contains(0.875)
    True
"""

from ..common.generation import EngineOptions, GenerationBackend, Sample, SamplingOptions
from .bounds import KeepBounds
from .config import PrefilterConfig
from .merge import merge_runs
from .pipeline import run_prefilter
from .report import degenerate_share
from .scoring import Scorer

__all__ = [
    "EngineOptions",
    "GenerationBackend",
    "KeepBounds",
    "PrefilterConfig",
    "Sample",
    "SamplingOptions",
    "Scorer",
    "degenerate_share",
    "merge_runs",
    "run_prefilter",
]
