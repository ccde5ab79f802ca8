"""A pytest helper: one test per golden case, with messages that say what went wrong.

In your own test suite::

    import pytest
    from referee.rewards.testing import assert_golden, golden_params

    @pytest.mark.parametrize("case", golden_params("tests/golden/gsm8k.jsonl"))
    def test_my_reward(case):
        assert_golden("gsm8k_accuracy + 0.2*gsm8k_format", case)

``reward`` may be a function, a built-in name, a ``module:attr`` path or a weighted sum.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from .compose import parse_reward_sum
from .golden import GoldenCase, check_columns, check_golden, excerpt, load_golden


def golden_params(path: str | Path) -> list[Any]:
    """The cases of a golden file as ``pytest.param`` objects, each with a readable id.

    Example:
        >>> import tempfile, os
        >>> path = os.path.join(tempfile.mkdtemp(), "golden.jsonl")
        >>> _ = open(path, "w").write('{"completion": "#### 18", "answer": "18", "expected": 1}\\n')
        >>> golden_params(path)[0].id
        'golden.jsonl:1 #### 18'
    """
    import pytest

    return [pytest.param(case, id=case.label) for case in load_golden(path)]


def assert_golden(reward: str | Callable[..., Any], case: GoldenCase, *, tolerance: float = 1e-6) -> None:
    """Fail with a readable message unless ``reward`` scores ``case`` as expected.

    Example:
        >>> assert_golden("gsm8k_accuracy", GoldenCase("#### 18", 1.0, {"answer": "18"}))
        >>> assert_golden("gsm8k_accuracy", GoldenCase("#### 17", 1.0, {"answer": "18"}, source="g.jsonl", line=4))
        Traceback (most recent call last):
        ...
        AssertionError: g.jsonl line 4: gsm8k_accuracy gave 0.0, expected 1.0
          completion: #### 17
          reason:     17 (####) differs from the gold 18
    """
    __tracebackhide__ = True  # pytest shows the failing case, not this function's source
    function = parse_reward_sum(reward) if isinstance(reward, str) else reward
    try:
        check_columns(function, [case], case.source)
    except ValueError as exc:
        raise AssertionError(str(exc)) from None
    result = check_golden(function, [case])[0]
    if result.ok(tolerance):
        return
    name = getattr(function, "__name__", repr(function))
    raise AssertionError(
        f"{case.source} line {case.line}: {name} gave {result.got}, expected {case.expected}\n"
        f"  completion: {excerpt(case.completion, 200)}\n"
        f"  reason:     {result.reason or '(the reward gives no reason)'}"
    )
