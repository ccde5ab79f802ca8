"""Find a verifier by its short name, and the backend that runs its batches (used by the CLI, the rewards and the runners).

Verifiers and runners are found here by name (their modules are imported on first use), so no
verifier imports a runner and no runner keeps its own list of verifiers.
"""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Sequence
from types import ModuleType
from typing import Any, Protocol

from .verdict import Verdict

# name -> (module path, the dataset column that usually holds its gold, a (completion, gold) a
# verifier host judges once when it starts so the verifier's worker pools are warm, or None).
_VERIFIERS: dict[str, tuple[str, str, tuple[str, str] | None]] = {
    "gsm8k": ("referee.verifiers.gsm8k", "answer", None),
    "math": ("referee.verifiers.math", "answer", ("\\boxed{1}", "1")),
    "code": ("referee.verifiers.code", "tests", None),  # its sandbox starts with the host's own check
}

VERIFIER_NAMES: tuple[str, ...] = tuple(_VERIFIERS)

# backend -> the runner module whose run_batch(name, completions, golds, options, batch_timeout=)
# judges a batch there; "local" is the verifier's own verify_batch in this process.
_RUNNERS: dict[str, str] = {"ray": "referee.verifiers.ray_host"}

BACKENDS: tuple[str, ...] = ("local", *_RUNNERS)

_NOT_OPTIONS = frozenset({"completions", "golds", "tests_list", "backend", "batch_timeout"})


class Verifier(Protocol):
    """The face of an answer domain (a module): what :func:`get_verifier` returns.

    Example:
        >>> get_verifier("math").verify_batch(["\\\\boxed{2}"], ["2"])[0].status
        'correct'
    """

    def verify(self, completion: Any, gold: Any, **options: Any) -> Verdict: ...

    def verify_batch(self, completions: Sequence[Any], golds: Sequence[Any], **options: Any) -> list[Verdict]: ...


def get_verifier(name: str) -> Any:
    """The verifier module called ``name`` (a :class:`Verifier`).

    Example:
        >>> get_verifier("gsm8k").verify("#### 18", 18).status
        'correct'
    """
    try:
        return importlib.import_module(_VERIFIERS[name][0])
    except KeyError:
        raise ValueError(f"Unknown verifier {name!r}; choose one of {', '.join(_VERIFIERS)}.") from None


def default_gold_field(name: str) -> str:
    """The dataset column that usually holds ``name``'s gold.

    Example:
        >>> default_gold_field("gsm8k")
        'answer'
    """
    return _VERIFIERS[name][1]


def warm_up_case(name: str) -> tuple[str, str] | None:
    """A (completion, gold) that starts ``name``'s worker pools when judged once, or ``None``.

    Example:
        >>> warm_up_case("math"), warm_up_case("gsm8k")
        (('\\\\boxed{1}', '1'), None)
    """
    return _VERIFIERS[name][2]


def backend_problem(backend: Any) -> str | None:
    """What is wrong with a ``backend=`` value (one line), or ``None``.

    Example:
        >>> backend_problem("ray") is None, backend_problem("local") is None
        (True, True)
        >>> backend_problem("dask")
        "backend='dask' is not one of local, ray"
    """
    return None if backend in BACKENDS else f"backend={backend!r} is not one of {', '.join(BACKENDS)}"


def runner(backend: str) -> ModuleType:
    """The runner module of ``backend`` (not ``"local"``), imported on first use.

    Example:
        >>> runner("ray").__name__
        'referee.verifiers.ray_host'
    """
    return importlib.import_module(_RUNNERS[backend])


def verify_batch_on(backend: str, name: str, completions: Sequence[Any], golds: Sequence[Any],
                    options: dict[str, Any], *, batch_timeout: float | None = None) -> list[Verdict]:
    """Verifier ``name``'s ``verify_batch`` on ``backend``: in this process (``"local"``) or on its runner.

    The one place ``backend=`` is dispatched, above the verifiers. ``options`` are the
    verifier's own; an unknown backend makes every item ``error``.

    Example:
        >>> verify_batch_on("local", "gsm8k", ["#### 3"], [3], {"mode": "strict"})[0].status
        'correct'
        >>> [v.reason for v in verify_batch_on("dask", "gsm8k", ["#### 3"], [3], {})]
        ["backend='dask' is not one of local, ray"]
    """
    problem = backend_problem(backend)
    if problem:
        return [Verdict("error", reason=problem)] * len(completions)
    if backend == "local":
        timeout = {} if batch_timeout is None else {"batch_timeout": batch_timeout}
        return get_verifier(name).verify_batch(completions, golds, **options, **timeout)
    return runner(backend).run_batch(name, completions, golds, options, batch_timeout=batch_timeout)


def moved_backend_keyword(name: str, backend: Any, completions: Sequence[Any], golds: Sequence[Any],
                          params: dict[str, Any]) -> list[Verdict]:
    """``verify_batch(..., backend=...)`` of a verifier, kept for one release: warns, then dispatches here.

    ``params`` are that ``verify_batch``'s arguments (its ``locals()``).

    Example:
        >>> import warnings
        >>> with warnings.catch_warnings(record=True) as caught:
        ...     warnings.simplefilter("always")
        ...     [v.reason for v in moved_backend_keyword("gsm8k", "dask", ["#### 3"], [3], {"mode": "strict"})]
        ["backend='dask' is not one of local, ray"]
        >>> caught[0].category.__name__
        'DeprecationWarning'
    """
    warnings.warn(f"verify_batch(..., backend={backend!r}) of the {name} verifier is deprecated and goes in the "
                  f"next release; use referee.verifiers.registry.verify_batch_on({backend!r}, {name!r}, ...) "
                  "or a reward's backend= option", DeprecationWarning, stacklevel=3)
    options = {k: v for k, v in params.items() if k not in _NOT_OPTIONS}
    return verify_batch_on(backend, name, completions, golds, options, batch_timeout=params.get("batch_timeout"))
