"""referee.verifiers: pure answer checking. Every check returns a :class:`Verdict`.

Each verifier module (``gsm8k``, ...) exposes ``verify(completion, gold, **options)`` and
``verify_batch(completions, golds, **options)``; :func:`get_verifier` finds one by name.
"""

from .registry import VERIFIER_NAMES, get_verifier
from .verdict import STATUSES, Verdict

__all__ = ["STATUSES", "VERIFIER_NAMES", "Verdict", "get_verifier"]
