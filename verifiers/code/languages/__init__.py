"""The languages the code sandbox runs: one module per language in this package, each defining
``LANGUAGE`` (a :class:`~.base.Language`); this registry finds them all.

Example:
    >>> sorted(LANGUAGES)
    ['c', 'cpp', 'go', 'java', 'javascript', 'python', 'rust']
    >>> language_of_tag("C++"), language_of_tag("markdown")
    ('cpp', None)
"""

from __future__ import annotations

import functools
import importlib
import pkgutil

from .base import Language, Toolchain

_NOT_LANGUAGES = frozenset({"base"})


def _load() -> dict[str, Language]:
    found: dict[str, Language] = {}
    for module in pkgutil.iter_modules(__path__):
        if module.name in _NOT_LANGUAGES:
            continue
        language = importlib.import_module(f"{__name__}.{module.name}").LANGUAGE
        found[language.name] = language
    return dict(sorted(found.items()))


LANGUAGES: dict[str, Language] = _load()
_TAGS = {tag: language.name for language in LANGUAGES.values() for tag in (language.name, *language.tags)}


def language_of_tag(tag: str) -> str | None:
    """The language a fenced block's tag (or a tests dict's ``language``) names, or ``None``.

    Example:
        >>> language_of_tag("py3"), language_of_tag("Java"), language_of_tag("golang")
        ('python', 'java', 'go')
    """
    return _TAGS.get(tag.strip().lower())


@functools.lru_cache(maxsize=None)
def find_toolchain(name: str) -> Toolchain | None:
    """The toolchain of language ``name`` on this machine (looked for once per process), or ``None``.

    Example:
        >>> find_toolchain("python").tools["python"].startswith("/")
        True
    """
    language = LANGUAGES[name]
    try:
        return language.find(language)
    except OSError:
        return None


def toolchain_folders() -> list[str]:
    """Folders outside the system's that the toolchains found need, for the sandbox to mount read-only.

    Example:
        >>> all(not folder.startswith("/usr/") for folder in toolchain_folders())
        True
    """
    folders: list[str] = []
    for name in LANGUAGES:
        toolchain = find_toolchain(name)
        for folder in toolchain.folders if toolchain else ():
            if folder not in folders:
                folders.append(folder)
    return folders


def missing_toolchain(name: str) -> str:
    """The sentence an ``error`` verdict gives when language ``name`` has no toolchain here.

    Example:
        >>> missing_toolchain("go")
        'the Go toolchain (go) is not installed on this machine; install it (make install does, as root with apt) or judge other languages'
    """
    language = LANGUAGES[name]
    return (f"the {language.title} toolchain ({', '.join(language.tools)}) is not installed on this machine; "
            "install it (make install does, as root with apt) or judge other languages")


__all__ = ["LANGUAGES", "Language", "Toolchain", "find_toolchain", "language_of_tag", "missing_toolchain",
           "toolchain_folders"]
