"""Maths answers for throughput benchmarks: a gold, an equivalent rewrite and a near miss.

Shared by the benchmarks that time a path around the verifier (the Ray host, ``referee
serve``) rather than the verifier's accuracy: every answer needs a real equivalence check.
"""

from __future__ import annotations

import random


def maths_answer(rng: random.Random) -> tuple[str, str, str]:
    """``(gold, right, wrong)``: a fraction, a root or a decimal, an equal rewrite and a near miss.

    Example:
        >>> gold, right, wrong = maths_answer(random.Random(0))
        >>> from referee.verifiers import math as maths
        >>> maths.verify(f"\\\\boxed{{{right}}}", gold).correct, maths.verify(f"\\\\boxed{{{wrong}}}", gold).correct
        (True, False)
    """
    p, q = rng.randint(1, 999), rng.randint(2, 999)
    kind = rng.randrange(3)
    if kind == 0:
        return f"\\frac{{{p}}}{{{q}}}", f"\\dfrac{{{p}}}{{{q}}}", f"\\frac{{{p + 1}}}{{{q}}}"
    if kind == 1:
        return f"{p}\\sqrt{{{q}}}", f"\\sqrt{{{p * p * q}}}", f"{p}\\sqrt{{{q + 1}}}"
    return f"{p / q:.6f}", f"\\frac{{{p * 1000}}}{{{q * 1000}}}", f"{p / q + 1:.6f}"
