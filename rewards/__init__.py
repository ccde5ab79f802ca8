"""referee.rewards: TRL-compatible reward functions built from referee's verifiers."""

from .completions import completion_text

__all__ = ["completion_text"]
