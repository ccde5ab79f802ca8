"""Old module paths that keep importing after a package split: one finder, shared by every referee package.

A package lists its moves as ``old name -> new name`` (both relative to the package). A move to
one module imports the old name as the very module object of the new one, so code, docs and
pickles that name the old path keep working. A move to several modules (an old module whose
contents were split) imports the old name as a module that re-exports their public names,
the first module listed winning a name several define.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Mapping
from importlib import import_module
from types import ModuleType
from typing import Any

Moves = Mapping[str, "str | tuple[str, ...]"]


class MovedModules:
    """Imports a moved module of ``package`` under its old name (see the module docstring).

    A meta path finder and loader by protocol (``find_spec``, ``create_module``, ``exec_module``),
    not by subclassing ``importlib.abc``, whose import costs every process about 10 ms.

    Example:
        >>> import referee.recipes.loss, referee.recipes.train.loss
        >>> referee.recipes.loss is referee.recipes.train.loss, referee.recipes.loss.__name__
        (True, 'referee.recipes.train.loss')
        >>> import referee.verifiers.math_answers as old, referee.verifiers.math.gold as new
        >>> old.gold_answer is new.gold_answer, old.__name__
        (True, 'referee.verifiers.math_answers')
    """

    def __init__(self, package: str, moves: Moves) -> None:
        self.package = package
        self.moves = moves

    def _old_name(self, fullname: str) -> str | None:
        old = fullname[len(self.package) + 1:] if fullname.startswith(self.package + ".") else None
        return old if old in self.moves else None

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        return importlib.util.spec_from_loader(fullname, self) if self._old_name(fullname) else None

    def _targets(self, spec: Any) -> list[ModuleType]:
        new = self.moves[self._old_name(spec.name)]
        return [import_module(f"{self.package}.{name}") for name in ((new,) if isinstance(new, str) else new)]

    def create_module(self, spec: Any) -> Any:
        targets = self._targets(spec)
        if len(targets) > 1:
            return None  # a fresh module, filled by exec_module
        spec.loader_state = targets[0].__spec__  # the import system replaces __spec__: put it back
        return targets[0]

    def exec_module(self, module: Any) -> None:
        if getattr(module.__spec__, "loader_state", None) is not None:
            module.__spec__ = module.__spec__.loader_state
            return
        targets = self._targets(module.__spec__)
        module.__doc__ = f"Moved: the names of {', '.join(t.__name__ for t in targets)}, for one release."
        for target in reversed(targets):
            module.__dict__.update({name: value for name, value in vars(target).items() if not name.startswith("_")})


def install_moved_modules(package: str, moves: Moves) -> None:
    """Let ``package``'s old module names import (once per package, however often it is called).

    Example:
        >>> install_moved_modules("referee.verifiers", {})  # the package already installed its own
    """
    if not any(isinstance(finder, MovedModules) and finder.package == package for finder in sys.meta_path):
        sys.meta_path.insert(0, MovedModules(package, moves))
