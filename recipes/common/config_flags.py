"""A command line derived from a config dataclass: each option's name, default and help live on its field.

A field declares its flag with :func:`flag` (help, argument group, flag names, metavar, ...);
:func:`add_flags` adds one ``argparse`` argument per such field (fields of a nested config
dataclass included) with the field's own default, and :func:`from_flags` builds the config back
from the parsed namespace. Nothing about an option is written a second time in the command.

* The flag is ``--field-name`` unless ``flags`` says otherwise; its ``dest`` is the field name.
* ``int`` and ``float`` fields (``Optional`` or not) parse as such; a ``bool`` field is a switch
  (``store_true`` when its default is false, ``store_false`` when true, e.g. ``--no-progress``);
  a ``Literal`` field offers its values as choices.
* A ``type`` given to :func:`flag` may raise ``ValueError``: its message is shown as the error.

Example:
    >>> import argparse
    >>> from dataclasses import dataclass
    >>> @dataclass(frozen=True)
    ... class Run:
    ...     model: str = flag(help="model folder or hub name")
    ...     steps: int = flag(10, help="optimizer steps (default %(default)s)", metavar="N")
    ...     progress: bool = flag(True, flags=("--no-progress",), help="hide the progress bar")
    >>> parser = argparse.ArgumentParser(prog="run")
    >>> _ = add_flags(parser, Run)
    >>> args = parser.parse_args(["--model", "m", "--no-progress"])
    >>> from_flags(Run, args)
    Run(model='m', steps=10, progress=False)
    >>> missing_flags(Run, parser.parse_args([]))
    ['--model']
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import types
import typing
from collections.abc import Callable
from dataclasses import MISSING, dataclass
from typing import Any

_KEY = "flag"
_FIELD_DEFAULT: Any = type("FieldDefault", (), {"__repr__": lambda self: "<the field's default>"})()


@dataclass(frozen=True)
class Flag:
    """How a config field appears on the command line (kept in the field's metadata).

    Attributes:
        help: the flag's help text (``%(default)s`` shows the default).
        group: the title of the argument group it is listed under (a nested config's fields
            inherit its field's group).
        flags: the option strings (default: ``--field-name``).
        metavar: the value's name in the help.
        type: turns the text into the value (default: from the field's type).
        choices: the values allowed.
        cli_default: the flag's default when it is not the field's (``None``: "not given",
            the config then keeps its own default).
        append: the flag may be repeated; its values are collected in a list.
        required: ``argparse`` refuses a command line without it.
        needed: :func:`missing_flags` names it when not given, though the field has a default
            (a choice the command line asks the user to make).
    """

    help: str | None = None
    group: str | None = None
    flags: tuple[str, ...] = ()
    metavar: str | None = None
    type: Callable[[str], Any] | None = None
    choices: tuple[Any, ...] | None = None
    cli_default: Any = _FIELD_DEFAULT
    append: bool = False
    required: bool = False
    needed: bool = False


def flag(default: Any = MISSING, *, default_factory: Any = MISSING, **options: Any) -> Any:
    """A dataclass field (``default`` or ``default_factory`` as in :func:`dataclasses.field`) with
    its command-line :class:`Flag` built from ``options``.

    Example:
        >>> from dataclasses import dataclass, fields
        >>> @dataclass
        ... class Sampling:
        ...     temperature: float = flag(1.0, help="0 means greedy")
        >>> fields(Sampling)[0].metadata["flag"].help
        '0 means greedy'
    """
    return dataclasses.field(default=default, default_factory=default_factory, metadata={_KEY: Flag(**options)})


def json_object(text: str) -> dict[str, Any]:
    """A flag type: the text as a JSON object.

    Example:
        >>> json_object('{"enable_thinking": false}')
        {'enable_thinking': False}
        >>> json_object("[1]")
        Traceback (most recent call last):
        ...
        ValueError: '[1]' is not a JSON object; write it like '{"enable_thinking": false}'
    """
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        value = None
    if not isinstance(value, dict):
        raise ValueError(f"{text!r} is not a JSON object; write it like '{{\"enable_thinking\": false}}'")
    return value


def whole_number(minimum: int) -> Callable[[str], int]:
    """A flag type: a whole number of at least ``minimum`` (a count of steps, threads, ...).

    Example:
        >>> whole_number(1)("600")
        600
        >>> whole_number(1)("-3")
        Traceback (most recent call last):
        ...
        argparse.ArgumentTypeError: -3 must be a whole number of at least 1
    """
    def read(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = None
        if value is None or value < minimum:
            raise argparse.ArgumentTypeError(f"{text} must be a whole number of at least {minimum}")
        return value

    read.__name__ = "whole_number"
    return read


def _read_with(convert: Callable[[str], Any]) -> Callable[[str], Any]:
    """``convert`` for argparse: the message of a ``ValueError`` it raises becomes the error shown."""
    def read(text: str) -> Any:
        try:
            return convert(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    read.__name__ = getattr(convert, "__name__", "value")
    return read


def _flagged(cls: type) -> list[tuple[dataclasses.Field, Flag, Any]]:
    """(field, flag, type without ``Optional``) of every field of ``cls`` that has a flag."""
    hints = typing.get_type_hints(cls)
    found = []
    for item in dataclasses.fields(cls):
        spec = item.metadata.get(_KEY)
        if spec is not None:
            hint = hints[item.name]
            if typing.get_origin(hint) in (typing.Union, types.UnionType):
                present = [arg for arg in typing.get_args(hint) if arg is not type(None)]
                hint = present[0] if len(present) == 1 else hint
            found.append((item, spec, hint))
    return found


def _nested(spec: Flag, hint: Any) -> bool:
    """Whether a field is a config of its own, whose fields bring their own flags (a dataclass
    field with a ``type`` is one flag, read by that type)."""
    return spec.type is None and dataclasses.is_dataclass(hint)


def _field_default(item: dataclasses.Field) -> Any:
    if item.default is not MISSING:
        return item.default
    if item.default_factory is not MISSING:
        return item.default_factory()
    return MISSING


def add_flags(parser: argparse.ArgumentParser, cls: type, *, group: str | None = None,
              groups: dict[str, Any] | None = None) -> dict[str, Any]:
    """Add a flag for every field of ``cls`` that declares one; returns the argument groups by title
    (so a command can add flags of its own to them).

    Example:
        >>> import argparse
        >>> from referee.recipes.common.generation import SamplingOptions
        >>> parser = argparse.ArgumentParser()
        >>> sorted(add_flags(parser, SamplingOptions, group="sampling"))
        ['sampling']
        >>> parser.parse_args(["--top-k", "50"]).top_k
        50
    """
    groups = {} if groups is None else groups
    for item, spec, hint in _flagged(cls):
        title = spec.group or group
        if _nested(spec, hint):
            add_flags(parser, hint, group=title, groups=groups)
            continue
        if title is None:
            target = parser
        elif title in groups:
            target = groups[title]
        else:
            target = groups[title] = parser.add_argument_group(title)
        default = _field_default(item) if spec.cli_default is _FIELD_DEFAULT else spec.cli_default
        options: dict[str, Any] = {"dest": item.name, "help": spec.help}
        if hint is bool:
            options["action"] = "store_false" if default else "store_true"
        else:
            options["metavar"] = spec.metavar
            options["required"] = spec.required
            if spec.type is not None:
                options["type"] = _read_with(spec.type)
            elif hint in (int, float):
                options["type"] = hint
            choices = spec.choices or (typing.get_args(hint) if typing.get_origin(hint) is typing.Literal else None)
            if choices:
                options["choices"] = choices
            if spec.append:
                options["action"] = "append"
                default = [] if spec.cli_default is _FIELD_DEFAULT else default
        options["default"] = None if default is MISSING else default
        target.add_argument(*(spec.flags or (f"--{item.name.replace('_', '-')}",)), **options)
    return groups


def missing_flags(cls: type, args: argparse.Namespace) -> list[str]:
    """The flags ``args`` lacks to build ``cls``: fields without a default, and ``needed`` flags.

    Example:
        >>> import argparse
        >>> from referee.recipes.prefilter import PrefilterConfig
        >>> missing_flags(PrefilterConfig, argparse.Namespace(model="m", data=None, rewards=[], out="o", keep=None))
        ['--data', '--reward', '--keep']
    """
    missing = []
    for item, spec, hint in _flagged(cls):
        if _nested(spec, hint):
            missing += missing_flags(hint, args)
        elif (spec.needed or _field_default(item) is MISSING) and getattr(args, item.name, None) in (None, []):
            missing.append((spec.flags or (f"--{item.name.replace('_', '-')}",))[-1])
    return missing


def from_flags(cls: type, args: argparse.Namespace, **values: Any) -> Any:
    """``cls`` built from the parsed ``args``: a flag left at ``None`` keeps the field's default,
    ``values`` win over the flags, a nested config is built from its own flags.

    Example:
        >>> import argparse
        >>> from referee.recipes.common.generation import EngineOptions
        >>> from_flags(EngineOptions, argparse.Namespace(backend="vllm", batch_size=None, enable_prefix_caching=False),
        ...            device="cpu")
        EngineOptions(backend='vllm', device='cpu', dtype='auto', batch_size=8, tensor_parallel_size=1, data_parallel_size=1, gpu_memory_utilization=0.9, max_model_len=None, enable_prefix_caching=False)
    """
    built = dict(values)
    for item, spec, hint in _flagged(cls):
        if item.name in built:
            continue
        if _nested(spec, hint):
            built[item.name] = from_flags(hint, args)
        elif getattr(args, item.name, None) is not None:
            built[item.name] = getattr(args, item.name)
    return cls(**built)
