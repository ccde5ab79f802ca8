"""Which verifier a trainer's sample needs, and the gold it is judged against.

Trainers other than TRL hand referee one sample at a time with their own fields: verl a
``data_source`` name, a ``ground_truth`` and an ``extra_info`` dict; OpenRLHF and slime a
label (and slime a ``metadata`` dict). :func:`route` reads them, in this order:

1. an explicit ``verifier`` in ``extra_info`` (or slime's metadata), or in a dict label;
2. the ``data_source`` name: the adapter's ``data_sources`` option first (``{"my/set": "math"}``),
   then :data:`DATA_SOURCES` (exact names first, then the longest matching prefix in
   :data:`DATA_SOURCE_PREFIXES`), then the option's ``"*"`` entry (every source referee does not know);
3. the adapter's ``default_verifier`` option, for samples that name no ``data_source``.

A ``data_source`` that is named but unknown (a typo such as ``openai/gms8k``) is refused even
where a ``default_verifier`` is set: it never silently goes to the default.

Code samples need the code verifier's tests dict (see :mod:`referee.verifiers.code.formats`),
found in ``ground_truth`` or ``extra_info["tests"]``; verl's stored shapes are read as well:
``{"inputs", "outputs"}`` is ``stdio``, with a ``fn_name`` it is ``call`` (also as a JSON string,
as verl's parquet files keep them), with their ``language`` and limits; a ``language`` in
``extra_info`` (or a dict label) names the language of tests that name none (CodeContests and
Codeforces rows in C++, Java, ...). A sample that matches nothing raises
:class:`UnknownDataSource`, naming the key to set.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from referee.verifiers import VERIFIER_NAMES


class RefereeStop(BaseException):
    """A problem that must stop the training run, not be scored: raised past ``except Exception``.

    Trainers wrap reward calls in ``except Exception`` and carry on (OpenRLHF leaves the reward
    out, verl's ``prime`` manager and the ``verifiers`` Rubric score 0), which would train on
    wrong rewards; like math-verify's ``TimeoutException`` this derives from ``BaseException``
    so that it reaches the trainer's top level. Catch it by name.

    Example:
        >>> issubclass(UnknownDataSource, RefereeStop), issubclass(RefereeStop, Exception)
        (True, False)
    """


def referee_stop(exc: BaseException | None) -> RefereeStop | None:
    """The :class:`RefereeStop` behind ``exc``, or ``None``: ``exc`` itself, or what it carries.

    Ray re-raises a remote task's exception as a ``RayTaskError``, an ``Exception`` (so
    ``except Exception`` catches it) holding the original as ``cause`` and named for it
    (``RayTaskError(ErrorRateExceeded)``). This follows ``cause``, ``__cause__`` and
    ``__context__``, and where the stop itself did not travel, recognises it by that type name
    (returning a plain stop with the same text): no ray import needed. A stop found this way is
    re-raised by referee as a stop, never scored.

    Example:
        >>> class RayTaskError(Exception):  # what Ray raises in the caller (no ray needed here)
        ...     def __init__(self, cause): super().__init__(str(cause)); self.cause = cause
        >>> stop = UnknownDataSource("referee has no verifier for data_source 'x'")
        >>> referee_stop(RayTaskError(stop)) is stop, referee_stop(ValueError("x")) is None
        (True, True)
        >>> renamed = type("RayTaskError(UnknownDataSource)", (Exception,), {})("no verifier for 'x'")
        >>> type(referee_stop(renamed)).__name__, str(referee_stop(renamed))
        ('RefereeStop', "no verifier for 'x'")
    """
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        cause = getattr(exc, "cause", None)
        if isinstance(cause, BaseException):
            exc = cause
            continue
        if isinstance(exc, RefereeStop):
            return exc if not isinstance(exc, Exception) else RefereeStop(str(exc))
        named = re.search(r"\((\w+)\)$", type(exc).__name__)
        if named and named.group(1) in _stop_names():
            return RefereeStop(str(exc))
        exc = exc.__cause__ or exc.__context__
    return None


def _stop_names() -> set[str]:
    """The names of :class:`RefereeStop` and every subclass defined so far."""
    names, pending = set(), [RefereeStop]
    while pending:
        cls = pending.pop()
        names.add(cls.__name__)
        pending.extend(cls.__subclasses__())
    return names


class ConfigurationError(RefereeStop):
    """A mistake in the adapter's options or the dataset's routing fields, reported at the first sample.

    Example:
        >>> str(ConfigurationError("fallback='x' must be a number"))
        "fallback='x' must be a number"
    """


class UnknownDataSource(ConfigurationError):
    """No verifier is known for a sample: its ``data_source`` is not in the table and nothing else names one.

    Example:
        >>> issubclass(UnknownDataSource, ConfigurationError)
        True
    """


# verl's data_source names (and common variants) -> the verifier that judges them.
DATA_SOURCES: Mapping[str, str] = {
    "openai/gsm8k": "gsm8k",
    "gsm8k": "gsm8k",
    "lighteval/MATH": "math",
    "DigitalLearningGmbH/MATH-lighteval": "math",
    "HuggingFaceH4/MATH-500": "math",
    "math_dapo": "math",
    "math_dapo_reasoning": "math",
    "math": "math",
    "math500": "math",
    "dapo_math": "math",
    "codecontests": "code",
    "deepmind/code_contests": "code",
    "apps": "code",
    "codeparrot/apps": "code",
    "taco": "code",
    "BAAI/TACO": "code",
    "codeforces": "code",
    "livecodebench": "code",
    "humaneval": "code",
    "openai/openai_humaneval": "code",
    "mbpp": "code",
}

# Families named by prefix (verl scores "aime2024", "aime_2025", "numina_olympiads", ... as maths).
DATA_SOURCE_PREFIXES: tuple[tuple[str, str], ...] = (
    ("aime", "math"),
    ("amc", "math"),
    ("numina_", "math"),
    ("math_", "math"),
    ("openai/gsm8k", "gsm8k"),
    ("livecodebench", "code"),
)

# What a stored {"inputs", "outputs"} row may carry besides them, kept in the tests dict it becomes.
CODE_TEST_KEYS = ("language", "time_limit", "memory_limit", "memory_limit_bytes", "checker", "checker_language",
                  "checker_files", "subtasks", "abs_tol", "rel_tol")
# Where referee looks for a code sample's language besides its tests (verl's extra_info, a dict label).
LANGUAGE_KEY = "language"
# Where referee looks for an explicit verifier name.
VERIFIER_KEY = "verifier"
# Where referee looks for a code sample's tests besides ``ground_truth``.
TESTS_KEY = "tests"


@dataclass(frozen=True)
class FieldNames:
    """What a trainer calls a sample's gold and its per-sample dict: messages speak its words.

    Example:
        >>> VERL_FIELDS.gold, SLIME_FIELDS.info
        ('ground_truth', 'metadata')
    """

    gold: str = "ground_truth"
    info: str = "extra_info"


VERL_FIELDS = FieldNames()
SLIME_FIELDS = FieldNames("label", "metadata")
OPENRLHF_FIELDS = FieldNames("label", "label")
VERIFIERS_FIELDS = FieldNames("answer", "info")


@dataclass(frozen=True)
class Route:
    """The verifier a sample goes to, the gold it is judged against, and why that verifier.

    Attributes:
        verifier: a name in :data:`referee.verifiers.VERIFIER_NAMES`.
        gold: the gold to hand the verifier (a tests dict for ``code``); ``None`` when missing.
        decided_by: one readable phrase saying where the verifier came from.
        problem: why the gold is unusable (the sample then scores as an ``error``), else ``None``.

    Example:
        >>> route("openai/gsm8k", "#### 18")
        Route(verifier='gsm8k', gold='#### 18', decided_by="data_source 'openai/gsm8k'", problem=None)
    """

    verifier: str
    gold: Any
    decided_by: str
    problem: str | None = None


def verifier_for_source(data_source: Any) -> str | None:
    """The verifier :data:`DATA_SOURCES` (then the longest prefix) gives ``data_source``, or ``None``.

    Example:
        >>> verifier_for_source("lighteval/MATH"), verifier_for_source("aime2024"), verifier_for_source("x")
        ('math', 'math', None)
    """
    if not isinstance(data_source, str):
        return None
    found = DATA_SOURCES.get(data_source)
    if found is not None:
        return found
    matches = [(len(prefix), verifier) for prefix, verifier in DATA_SOURCE_PREFIXES if data_source.startswith(prefix)]
    return max(matches)[1] if matches else None


def code_tests(value: Any) -> dict[str, Any] | None:
    """The code verifier's tests dict from the shapes datasets store, or ``None`` if ``value`` is none.

    A dict with a ``format`` is taken as it is; verl's ``{"inputs", "outputs"}`` becomes
    ``stdio`` (or ``call`` with a ``fn_name``), keeping the keys of :data:`CODE_TEST_KEYS` it has
    (``language``, Codeforces' and CodeContests' limits, a checker); a JSON string of either is read first.

    Example:
        >>> code_tests('{"inputs": ["1 2\\\\n"], "outputs": ["3\\\\n"]}')
        {'format': 'stdio', 'inputs': ['1 2\\n'], 'outputs': ['3\\n']}
        >>> code_tests({"inputs": ["1\\n"], "outputs": ["1\\n"], "language": "cpp", "time_limit": 2})["language"]
        'cpp'
        >>> code_tests({"fn_name": "add", "inputs": [[1, 2]], "outputs": [3]})["format"]
        'call'
        >>> code_tests("#### 18") is None
        True
    """
    if isinstance(value, (str, bytes)):
        text = value.strip()
        if not text.startswith("{"):
            return None
        try:
            value = json.loads(text)
        except ValueError:
            return None
    if not isinstance(value, Mapping):
        return None
    tests = dict(value)
    if "format" in tests:
        return tests
    if "inputs" in tests and "outputs" in tests:
        kept = {key: tests[key] for key in CODE_TEST_KEYS if tests.get(key) is not None}
        if tests.get("fn_name"):
            return {"format": "call", "fn_name": tests["fn_name"], "inputs": tests["inputs"], "outputs": tests["outputs"],
                    **kept}
        return {"format": "stdio", "inputs": [_stdin_text(item) for item in _listed(tests["inputs"])],
                "outputs": [_stdin_text(item) for item in _listed(tests["outputs"])], **kept}
    return None


def _listed(value: Any) -> list[Any]:
    return list(value) if isinstance(value, (list, tuple)) else [value]


def _stdin_text(value: Any) -> Any:
    """APPS-style stdio cases stored as lists of lines are one text."""
    if isinstance(value, (list, tuple)) and all(isinstance(line, str) for line in value):
        return "\n".join(value)
    return value


def with_language(tests: dict[str, Any], *places: Any) -> dict[str, Any]:
    """``tests`` with the ``language`` the first of ``places`` (verl's ``extra_info``, a dict label)
    names, when the tests name none.

    Example:
        >>> with_language({"format": "stdio", "inputs": ["1"], "outputs": ["1"]}, {"language": "cpp"})["language"]
        'cpp'
        >>> with_language({"format": "stdio", "language": "java"}, {"language": "cpp"})["language"]
        'java'
    """
    if tests.get(LANGUAGE_KEY) is not None:
        return tests
    for place in places:
        if isinstance(place, Mapping) and isinstance(place.get(LANGUAGE_KEY), str):
            return {**tests, LANGUAGE_KEY: place[LANGUAGE_KEY]}
    return tests


def _explicit_verifier(*places: tuple[str, Any]) -> tuple[str, str] | None:
    for where, place in places:
        if isinstance(place, Mapping) and place.get(VERIFIER_KEY) is not None:
            name = place[VERIFIER_KEY]
            if name not in VERIFIER_NAMES:
                raise UnknownDataSource(f"{where}[{VERIFIER_KEY!r}] is {name!r}; use one of {', '.join(VERIFIER_NAMES)}.")
            return name, f"{where}[{VERIFIER_KEY!r}]"
    return None


def _gold(verifier: str, ground_truth: Any, extra_info: Any, fields: FieldNames) -> tuple[Any, str | None]:
    if verifier == "code":
        label_tests = ground_truth.get(TESTS_KEY) if isinstance(ground_truth, Mapping) else None
        info_tests = extra_info.get(TESTS_KEY) if isinstance(extra_info, Mapping) else None
        for value in (ground_truth, label_tests, info_tests):
            tests = code_tests(value)
            if tests is not None:
                return with_language(tests, ground_truth, extra_info), None
        return None, (f"no code tests for this sample: put the code verifier's tests dict (or verl's "
                      f"{{'inputs', 'outputs'}}) in {fields.gold} or {fields.info}[{TESTS_KEY!r}]")
    if isinstance(ground_truth, Mapping):  # a label dict: {"verifier": ..., "answer": ...}
        for key in ("answer", "ground_truth", "solution"):
            if ground_truth.get(key) is not None:
                return ground_truth[key], None
        return None, "the label is a dict without 'answer', 'ground_truth' or 'solution'"
    if ground_truth is None:
        return None, f"no gold answer for this sample ({fields.gold} is None)"
    return ground_truth, None


def route(
    data_source: Any,
    ground_truth: Any,
    extra_info: Mapping[str, Any] | None = None,
    *,
    default_verifier: str | None = None,
    data_sources: Mapping[str, str] | None = None,
    fields: FieldNames = VERL_FIELDS,
) -> Route:
    """Where a sample goes: its verifier (explicit, by ``data_source``, or the default) and gold.

    ``data_sources`` maps more names to verifiers (``"*"``: every name referee does not know);
    ``default_verifier`` judges only samples without a ``data_source``. Raises
    :class:`UnknownDataSource` when no verifier fits (a named but unknown ``data_source``
    included); an unusable gold is not raised but returned as ``problem`` (that sample scores as
    an ``error``, not the completion's fault). ``fields`` words the messages as the trainer names its fields.

    Example:
        >>> route("aime2024", "204").verifier
        'math'
        >>> route("my/dataset", "18", {"verifier": "gsm8k"}).decided_by
        "extra_info['verifier']"
        >>> route("codecontests", '{"inputs": ["1\\\\n"], "outputs": ["1\\\\n"]}').gold["format"]
        'stdio'
        >>> route("apps", "").problem
        "no code tests for this sample: put the code verifier's tests dict (or verl's {'inputs', 'outputs'}) in ground_truth or extra_info['tests']"
        >>> route("my/dataset", "18", data_sources={"my/dataset": "gsm8k"}).decided_by
        "the data_sources option ('my/dataset')"
        >>> route(None, "18", default_verifier="gsm8k").decided_by
        'the default_verifier option'
        >>> route("openai/gms8k", "18", default_verifier="math")
        Traceback (most recent call last):
        ...
        referee.rewards.trainers.routing.UnknownDataSource: referee has no verifier for data_source 'openai/gms8k' (did you mean 'openai/gsm8k'?); the default_verifier option judges only samples without a data_source: set extra_info['verifier'] (gsm8k, math or code) in the dataset, or name it in the data_sources option ({'openai/gms8k': 'math'}, or {'*': 'math'} for every source referee does not know).
    """
    sources = dict(data_sources or {})
    for name, value in (("default_verifier", default_verifier), *(
            (f"data_sources[{key!r}]", target) for key, target in sources.items())):
        if value is not None and value not in VERIFIER_NAMES:
            raise UnknownDataSource(f"{name}={value!r}; use one of {', '.join(VERIFIER_NAMES)}.")
    explicit = _explicit_verifier((fields.info, extra_info), ("the label", ground_truth))
    named = _named_source(data_source)
    if explicit is not None:
        verifier, decided_by = explicit
    elif isinstance(data_source, str) and data_source in sources:
        verifier, decided_by = sources[data_source], f"the data_sources option ({data_source!r})"
    elif (verifier := verifier_for_source(data_source)) is not None:
        decided_by = f"data_source {data_source!r}"
    elif named and "*" in sources:
        verifier, decided_by = sources["*"], "the data_sources option ('*')"
    elif not named and default_verifier is not None:
        verifier, decided_by = default_verifier, "the default_verifier option"
    else:
        raise UnknownDataSource(_unknown_source(data_source, default_verifier, fields))
    gold, problem = _gold(verifier, ground_truth, extra_info, fields)
    return Route(verifier, gold, decided_by, problem)


def _named_source(data_source: Any) -> bool:
    """Whether a sample names a data_source (``None`` and ``""`` name none)."""
    return data_source is not None and data_source != ""


def _unknown_source(data_source: Any, default_verifier: str | None, fields: FieldNames) -> str:
    """The sentence for a sample no verifier fits: what to set, and a known name it may be a typo of."""
    verifiers = ", ".join(VERIFIER_NAMES[:-1]) + f" or {VERIFIER_NAMES[-1]}"
    if not _named_source(data_source):
        return (f"referee has no verifier for a sample without a data_source; set {fields.info}[{VERIFIER_KEY!r}] "
                f"({verifiers}) in the dataset, or the default_verifier option.")
    close = difflib.get_close_matches(str(data_source), list(DATA_SOURCES), n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    example = default_verifier or "math"
    default = " the default_verifier option judges only samples without a data_source:" if default_verifier else ""
    return (f"referee has no verifier for data_source {data_source!r}{hint};{default} set "
            f"{fields.info}[{VERIFIER_KEY!r}] ({verifiers}) in the dataset, or name it in the data_sources option "
            f"({{{str(data_source)!r}: {example!r}}}, or {{'*': {example!r}}} for every source referee does not know).")
