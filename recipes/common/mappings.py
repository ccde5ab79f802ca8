"""A settings dataclass from a recipe's YAML mapping, each unknown key refused with a suggestion."""

from __future__ import annotations

import dataclasses
import difflib
from typing import Any, TypeVar

T = TypeVar("T")


def from_mapping(cls: type[T], values: Any, block: str, *, needs: dict[str, str] | None = None) -> T:
    """``cls(**values)`` for the recipe block ``block``, refusing a value that is not a mapping, any
    key that is not a field (``ValueError``, one line naming the key and the closest field) and a
    missing field without a default (``needs`` may say what it holds).

    Example:
        >>> from dataclasses import dataclass
        >>> @dataclass(frozen=True)
        ... class Eval:
        ...     every_steps: int = 50
        >>> from_mapping(Eval, {"every_steps": 10}, "eval")
        Eval(every_steps=10)
        >>> from_mapping(Eval, {"every_step": 10}, "eval")
        Traceback (most recent call last):
        ...
        ValueError: eval has no key 'every_step'; did you mean 'every_steps'? Its keys: every_steps.
    """
    refuse_unknown_keys(values, [item.name for item in dataclasses.fields(cls)], block)  # type: ignore[arg-type]
    for item in dataclasses.fields(cls):  # type: ignore[arg-type]
        required = item.default is dataclasses.MISSING and item.default_factory is dataclasses.MISSING
        if required and item.name not in values:
            what = (needs or {}).get(item.name)
            raise ValueError(f"{block} needs {item.name}" + (f": {what}." if what else "."))
    return cls(**values)


def refuse_unknown_keys(values: Any, keys: list[str], block: str) -> None:
    """Refuse a recipe block ``values`` that is not a mapping, or that has a key not in ``keys``
    (``ValueError``, one line naming the key and the closest one).

    Example:
        >>> refuse_unknown_keys({"timout": 2}, ["timeout", "max_calls"], "python_tool")
        Traceback (most recent call last):
        ...
        ValueError: python_tool has no key 'timout'; did you mean 'timeout'? Its keys: timeout, max_calls.
    """
    if not isinstance(values, dict):
        raise ValueError(f"{block} must be a mapping of settings ({', '.join(keys)}), not {values!r}.")
    for key in values:
        if key not in keys:
            close = difflib.get_close_matches(str(key), keys, n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            raise ValueError(f"{block} has no key {key!r}; {hint}Its keys: {', '.join(keys)}.")
