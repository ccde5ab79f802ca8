"""referee.verifiers: pure answer checking. Every check returns a :class:`Verdict`.

One package per answer domain (``math``, ``code``, ``gsm8k``), each with the face
``verify(completion, gold, **options)`` and ``verify_batch(completions, golds, **options)``,
on the shared plain-text floor ``text``; :func:`get_verifier` finds one by name. The runners
(``deadline_pool``, ``ray_host``) stand beside or above them (see ``docs/architecture.md``).
"""

from .moved_modules import install_moved_modules
from .registry import VERIFIER_NAMES, get_verifier
from .verdict import STATUSES, UnusableGold, Verdict

__all__ = ["STATUSES", "VERIFIER_NAMES", "UnusableGold", "Verdict", "get_verifier"]

# Modules that moved when the maths verifier became the package ``math`` on the floor ``text``:
# old name -> new name (a tuple: the old module was split, its public names are re-exported).
MOVED_MODULES = {
    "latex": "text.latex", "numeric": "text.numbers",
    "math_forms": "math.forms", "math_values": "math.values", "math_sympy": "math.sympy_worker",
    "math_extract": ("math.extract", "text.prose", "text.latex"),
    "math_answers": ("math.exact", "math.gold", "math.options", "math.extract", "text.latex"),
}

install_moved_modules(__name__, MOVED_MODULES)
