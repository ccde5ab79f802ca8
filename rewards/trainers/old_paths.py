"""The trainer adapters' old module paths (``referee.rewards.verl``, ...), kept for one release.

Each old file is a shim that calls :func:`forward`: imported as a module, the old name is the new
module itself; loaded as a file (OpenRLHF's ``spec_from_file_location`` on a path), it re-exports
the new module's names. Either way it warns once with a ``DeprecationWarning`` naming the new path.
"""

from __future__ import annotations

import sys
import warnings
from importlib import import_module
from typing import Any

# Old name in referee.rewards -> new name in referee.rewards.trainers.
MOVED = ("adapters", "routing", "verl", "openrlhf", "slime", "prime_verifiers", "sandbox_fusion")


def forward(shim: dict[str, Any], old: str) -> None:
    """Make the shim module whose globals are ``shim`` stand for ``referee.rewards.trainers.<old>``.

    Example:
        >>> import warnings
        >>> shim = {"__name__": "reward_func"}  # a file loaded under a name of its own
        >>> with warnings.catch_warnings(record=True) as caught:
        ...     warnings.simplefilter("always")
        ...     forward(shim, "verl")
        >>> shim["compute_score"].__module__, caught[0].category.__name__
        ('referee.rewards.trainers.verl', 'DeprecationWarning')
        >>> str(caught[0].message)
        'referee.rewards.verl has moved to referee.rewards.trainers.verl; import it from there (the old path goes after this release)'
    """
    new = import_module(f"referee.rewards.trainers.{old}")
    warnings.warn(f"referee.rewards.{old} has moved to {new.__name__}; import it from there "
                  "(the old path goes after this release)", DeprecationWarning, stacklevel=3)
    shim.update({name: value for name, value in vars(new).items() if not name.startswith("__")})
    if shim["__name__"] == f"referee.rewards.{old}":
        sys.modules[shim["__name__"]] = new  # the import system hands this out: old is new
