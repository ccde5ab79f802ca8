"""Check every key and value of a recipe before anything loads: one line per mistake.

The known keys and their types are read from the config dataclasses the recipe parser is built
from (referee's ``RecipeArguments``, ``RefereeGRPOConfig`` = TRL's ``GRPOConfig`` plus
``loss_aggregation``, TRL's ``ModelConfig``), so a field added to any of them is known here at
once. For each key of the YAML file and each ``--key value`` override:

* a key no dataclass has is refused, with the closest known key as a suggestion (``difflib``);
* a value must fit the field's type: a whole number for ``int``, a number for ``float``,
  ``true``/``false`` for ``bool``, one of the choices of a ``Literal`` field, of a field's
  ``choices`` metadata, or of the values its help text lists ("Supported values are 'a',
  'b' and 'c'.", as TRL writes them, e.g. ``loss_type``);
* a number must not be negative (``-1`` stays allowed where it is the field's default, TRL's
  "not set", as for ``max_steps``).

Example:
    >>> from dataclasses import dataclass
    >>> @dataclass
    ... class Config:
    ...     learning_rate: float = 1e-6
    ...     max_steps: int = -1
    >>> recipe_problems({"learnig_rate": 1e-4, "max_steps": "10O"}, (Config,))
    ['learnig_rate is not a recipe key; did you mean learning_rate?', "max_steps='10O' is not a whole number; write it like max_steps: 10."]
"""

from __future__ import annotations

import dataclasses
import difflib
import enum
import re
import types
import typing
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..errors import RecipeError

# Keys TRL's parser reads from a recipe beside the dataclass fields (``env``: environment variables).
PARSER_KEYS: frozenset[str] = frozenset({"env"})

_TRUE, _FALSE = ("true", "yes", "t", "y", "1"), ("false", "no", "f", "n", "0")
# TRL's help texts list a plain string field's values like "Supported values are 'grpo', 'dapo' and
# 'bnpo'." or "Must be one of `'server'` or `'colocate'`.": only such a list ending the sentence counts.
_LISTED = re.compile(r"(?:Supported values are|Must be one of|Options:)\s*:?\s*"
                     r"((?:[`'\"]+[\w-]+[`'\"]+(?:,\s*(?:and\s+|or\s+)?|\s+(?:or|and)\s+)?)+)\.(?:\s|$)")
_QUOTED = re.compile(r"[`'\"]+([\w-]+)[`'\"]+")


@dataclasses.dataclass(frozen=True)
class KnownKey:
    """A recipe key: its dataclass field and type (``Optional`` removed)."""

    field: dataclasses.Field
    hint: Any


def known_keys(classes: Sequence[type]) -> dict[str, KnownKey]:
    """Every field of the dataclasses ``classes``, by name (the first class that has it wins).

    Example:
        >>> from trl import ModelConfig
        >>> keys = known_keys((ModelConfig,))
        >>> keys["lora_r"].hint, "learning_rate" in keys
        (<class 'int'>, False)
    """
    found: dict[str, KnownKey] = {}
    for cls in classes:
        hints = typing.get_type_hints(cls)
        for item in dataclasses.fields(cls):
            if item.init and item.name not in found:
                found[item.name] = KnownKey(item, _without_none(hints[item.name]))
    return found


def _without_none(hint: Any) -> Any:
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        present = [arg for arg in typing.get_args(hint) if arg is not type(None)]
        return present[0] if len(present) == 1 else typing.Union[tuple(present)]
    return hint


def _alternatives(hint: Any) -> tuple[Any, ...]:
    return typing.get_args(hint) if typing.get_origin(hint) in (typing.Union, types.UnionType) else (hint,)


def listed_choices(item: dataclasses.Field, hint: Any) -> tuple[str, ...]:
    """The values a field accepts, where it says: ``Literal`` values, ``choices`` metadata, or a
    list of quoted values closing a sentence of its help text; ``()`` when it says none.

    Example:
        >>> from referee.recipes.train.config import RefereeGRPOConfig
        >>> keys = known_keys((RefereeGRPOConfig,))
        >>> listed_choices(keys["loss_type"].field, keys["loss_type"].hint)
        ('grpo', 'dr_grpo', 'dapo', 'bnpo', 'cispo', 'sapo', 'luspo', 'vespo')
        >>> listed_choices(keys["vllm_mode"].field, keys["vllm_mode"].hint)
        ('server', 'colocate')
    """
    if typing.get_origin(hint) is typing.Literal:
        return tuple(str(value) for value in typing.get_args(hint))
    if "choices" in item.metadata:
        return tuple(str(value) for value in item.metadata["choices"])
    if hint is not str:  # enums and unions are checked by transformers' own __post_init__
        return ()
    match = _LISTED.search(" ".join(str(item.metadata.get("help", "")).split()))
    return tuple(_QUOTED.findall(match.group(1))) if match else ()


def _number(text: Any, kind: type) -> Any:
    if isinstance(text, bool):
        raise ValueError
    if isinstance(text, (int, float)) and (kind is float or float(text).is_integer()):
        return kind(text)
    return kind(str(text).strip())


def _default(item: dataclasses.Field) -> Any:
    if item.default is not dataclasses.MISSING:
        return item.default
    return None


def value_problem(name: str, value: Any, key: KnownKey) -> str | None:
    """What is wrong with ``value`` for the recipe key ``name`` (one line), or ``None``.

    Example:
        >>> from referee.recipes.train.config import RefereeGRPOConfig
        >>> keys = known_keys((RefereeGRPOConfig,))
        >>> value_problem("loss_type", "dapo2", keys["loss_type"])
        "loss_type='dapo2' is not one of grpo, dr_grpo, dapo, bnpo, cispo, sapo, luspo, vespo; did you mean dapo?"
        >>> value_problem("max_steps", -3, keys["max_steps"])
        'max_steps=-3 must not be negative (-1, the default, means: not set).'
        >>> value_problem("beta", "0.04", keys["beta"]) is None
        True
    """
    if value is None:
        return None
    options = _alternatives(key.hint)
    if isinstance(value, str) and any(option is str or _is_enum(option) for option in options):
        choices = listed_choices(key.field, key.hint)
        if choices and value not in choices:
            return _not_a_choice(name, value, choices)
        return None
    if isinstance(value, (list, tuple)) and any(typing.get_origin(o) in (list, tuple) for o in options):
        return None
    if isinstance(value, dict) and any(o is dict or typing.get_origin(o) is dict for o in options):
        return None
    if bool in options:
        if isinstance(value, bool) or str(value).lower() in _TRUE + _FALSE:
            return None
        return f"{name}={value!r} is not true or false; write it like {name}: true."
    if typing.get_origin(key.hint) is typing.Literal:
        return None if str(value) in listed_choices(key.field, key.hint) else _not_a_choice(
            name, value, listed_choices(key.field, key.hint))
    for kind, word, example in ((int, "a whole number", "10"), (float, "a number", "0.5")):
        if kind in options:
            try:
                number = _number(value, kind)
            except (TypeError, ValueError):
                return f"{name}={value!r} is not {word}; write it like {name}: {example}."
            if number < 0 and not (number == -1 and _default(key.field) == -1):
                sentinel = " (-1, the default, means: not set)" if _default(key.field) == -1 else ""
                return f"{name}={value!r} must not be negative{sentinel}."
            return None
    return None


def _is_enum(hint: Any) -> bool:
    return isinstance(hint, type) and issubclass(hint, enum.Enum)


def _not_a_choice(name: str, value: Any, choices: Sequence[str]) -> str:
    close = difflib.get_close_matches(str(value), choices, n=1)
    hint = f"; did you mean {close[0]}?" if close else "."
    return f"{name}={value!r} is not one of {', '.join(choices)}{hint}"


def recipe_problems(keys: dict[str, Any], classes: Sequence[type]) -> list[str]:
    """One line per mistake in the recipe ``keys`` (unknown keys, bad values), in key order.

    Example:
        >>> from referee.recipes.train.config import RefereeGRPOConfig
        >>> recipe_problems({"num_generations": 8, "loss_type": "dapo"}, (RefereeGRPOConfig,))
        []
    """
    known = known_keys(classes)
    problems = []
    for name, value in keys.items():
        if name in PARSER_KEYS:
            continue
        if name not in known:
            close = difflib.get_close_matches(name, list(known), n=1)
            problems.append(f"{name} is not a recipe key; did you mean {close[0]}?" if close else
                            f"{name} is not a recipe key (TRL's GRPOConfig and ModelConfig, or referee's); "
                            "check its spelling.")
            continue
        problem = value_problem(name, value, known[name])
        if problem:
            problems.append(problem)
    return problems


def override_keys(overrides: Sequence[str]) -> dict[str, Any]:
    """The ``--key value`` (or ``--key=value``) pairs of a command line, by key; a key followed by
    several values gets the list, a key followed by none gets ``"true"``.

    Example:
        >>> override_keys(["--max_steps", "10", "--reward_funcs", "a", "b", "--use_peft", "--beta=0.1"])
        {'max_steps': '10', 'reward_funcs': ['a', 'b'], 'use_peft': 'true', 'beta': '0.1'}
    """
    found: dict[str, Any] = {}
    current: str | None = None
    values: list[str] = []

    def close() -> None:
        if current is not None:
            found[current] = values[0] if len(values) == 1 else (values or "true")

    for item in overrides:
        if item.startswith("--"):
            close()
            name, equals, value = item[2:].partition("=")
            current, values = name.replace("-", "_"), [value] if equals else []
        elif current is not None:
            values.append(item)
        else:
            raise RecipeError(f"{item!r} is not a --key value override; write overrides like --max_steps 10.")
    close()
    return found


def check_recipe(config_path: str | Path, overrides: Sequence[str], classes: Sequence[type]) -> None:
    """Refuse the recipe at ``config_path`` with ``overrides`` on top when any key or value is
    wrong: a ``RecipeError`` with one line per mistake, each naming the recipe.

    Example:
        >>> import os, tempfile
        >>> from referee.recipes.train.config import RefereeGRPOConfig
        >>> path = os.path.join(tempfile.mkdtemp(), "r.yaml")
        >>> _ = open(path, "w").write("learnig_rate: 1.0e-4\\nmax_steps: 10\\n")
        >>> check_recipe(path, ["--max_steps", "-3"], (RefereeGRPOConfig,))  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        referee.recipes.errors.RecipeError: ...r.yaml: learnig_rate is not a recipe key; did you mean learning_rate?
        ...r.yaml: max_steps='-3' must not be negative (-1, the default, means: not set).
    """
    import yaml

    try:
        loaded = yaml.safe_load(Path(config_path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise RecipeError(f"Cannot read the recipe {config_path} ({exc.strerror}); check the path.") from None
    except yaml.YAMLError as exc:
        raise RecipeError(f"{config_path} is not valid YAML ({' '.join(str(exc).split())}).") from None
    if loaded is None:
        loaded = {}
    if not isinstance(loaded, dict):
        raise RecipeError(f"{config_path} holds a YAML {type(loaded).__name__}, not a mapping of keys; "
                          "write one key: value per line.")
    problems = recipe_problems({**loaded, **override_keys(overrides)}, classes)
    if problems:
        raise RecipeError("\n".join(f"{config_path}: {problem}" for problem in problems))


def reward_column_problems(rewards: Sequence[Any], row: dict[str, Any], dataset_format: str,
                           columns: dict[str, str] | None = None) -> list[str]:
    """One line per column a reward needs that the training rows will lack, naming the dataset
    column it could be mapped from with the recipe's ``columns:`` entry. ``row`` is a row of the
    dataset as it is stored (before the loader maps it).

    Example:
        >>> def json_answer(completions, target, **kwargs):
        ...     return [0.0 for _ in completions]
        >>> reward_column_problems([json_answer], {"question": "2 + 3?", "answer": "#### 5", "final": "5"}, "gsm8k")
        ["reward json_answer reads column 'target', which the training rows lack (they have: prompt, answer; the dataset has: question, answer, final); map it in the recipe: columns: {target: <one of question, final>}"]
        >>> reward_column_problems([json_answer], {"question": "2 + 3?", "answer": "#### 5", "final": "5"}, "gsm8k",
        ...                        {"target": "final"})
        []
    """
    from referee.rewards.columns import reward_columns

    from .datasets import map_columns, to_training_row

    wanted = [name for reward in rewards for name in reward_columns(reward).names]
    training = to_training_row(map_columns(row, columns or {}), dataset_format, "", keep=wanted)
    problems = []
    for reward in rewards:
        for missing in reward_columns(reward).missing(training):
            name = missing.split(" or ")[0]
            unused = [column for column in row if column not in training]
            close = difflib.get_close_matches(name, unused, n=1) or (unused if len(unused) == 1 else [])
            source = close[0] if close else f"<one of {', '.join(unused)}>" if unused else "<a column you add>"
            problems.append(f"reward {getattr(reward, '__name__', repr(reward))} reads column {missing!r}, which the "
                            f"training rows lack (they have: {', '.join(training)}; the dataset has: {', '.join(row)}); "
                            f"map it in the recipe: columns: {{{name}: {source}}}")
    return problems
