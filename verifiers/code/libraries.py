"""Libraries that dataset programs expect beside a language's toolchain, given to the judge offline
from local, pinned sources (HumanEval-X's: the Rust crates ``rand``, ``regex`` and ``md5``, the npm
package ``js-md5``, Boost and OpenSSL for C++). Nothing is fetched while judging.

* Rust crates: built once, with the judge's own rustc, from Debian's packaged sources
  (``librust-rand-dev``, ``librust-regex-dev``, ``librust-md5-dev`` put them in
  ``/usr/share/cargo/registry``) into ``<home>/rust-<rustc version>/``; rustc gets ``--extern``
  for each crate built there.
* npm packages: the ``node_modules`` folder of ``<home>`` (``npm install`` of the pinned versions),
  searched by the harness's ``require``.
* C and C++ system libraries: their headers where the compiler looks (Debian's ``libboost-dev``,
  ``libssl-dev``) and the link flags each one needs, added when a program includes them.

``<home>`` is ``$REFEREE_LIBRARIES``, else ``~/.cache/referee/libraries``; its folders are mounted
read-only into the sandbox with the toolchains. ``python -m referee.verifiers.code.install_libraries``
(:mod:`.install_libraries`, which ``make install`` runs, never failing the build) builds the crates
and installs the npm packages that it can. A problem that needs a library the judge was not given is judged ``error``
(not the program's fault) with one sentence naming the library and how to install it.
"""

from __future__ import annotations

import os
import pwd
import re
from dataclasses import dataclass
from pathlib import Path

from .formats import TestsError

RUST_CRATES: dict[str, str] = {"rand": "librust-rand-dev", "regex": "librust-regex-dev", "md5": "librust-md5-dev"}
NPM_PACKAGES: dict[str, str] = {"js-md5": "0.8.3"}
_INCLUDE_FOLDERS = ("/usr/include", "/usr/local/include", "/usr/include/x86_64-linux-gnu", "/usr/include/aarch64-linux-gnu")


class LibraryMissing(TestsError):
    """A problem needs a library the judge was not given: ``error``, not the program's fault.

    Example:
        >>> str(LibraryMissing("the Rust crate md5 is missing"))
        'the Rust crate md5 is missing'
    """


@dataclass(frozen=True)
class SystemLibrary:
    """A C or C++ library known by its headers' folder: its name, the Debian package that installs
    it, and the link flags a program that includes it needs.

    Example:
        >>> SYSTEM_LIBRARIES["openssl/"].link
        ('-lssl', '-lcrypto')
    """

    name: str
    package: str
    link: tuple[str, ...] = ()


SYSTEM_LIBRARIES: dict[str, SystemLibrary] = {
    "boost/": SystemLibrary("Boost", "libboost-dev"),
    "openssl/": SystemLibrary("OpenSSL", "libssl-dev", ("-lssl", "-lcrypto")),
}


def libraries_home() -> Path:
    """Where the judge looks for the libraries it is given: ``$REFEREE_LIBRARIES``, else
    ``~/.cache/referee/libraries`` of the user we run as (found through the password database, so
    that a sandbox worker with a cleared environment finds the same).

    Example:
        >>> os.environ["REFEREE_LIBRARIES"] = "/opt/libs"
        >>> str(libraries_home())
        '/opt/libs'
        >>> del os.environ["REFEREE_LIBRARIES"]
    """
    given = os.environ.get("REFEREE_LIBRARIES")
    if given:
        return Path(given)
    try:
        home = pwd.getpwuid(os.getuid()).pw_dir
    except KeyError:
        home = os.path.expanduser("~")
    return Path(home, ".cache", "referee", "libraries")


def crates_folder(rustc_version: str) -> Path:
    """The folder of the crates built with the rustc whose version line is ``rustc_version``.

    Example:
        >>> crates_folder("rustc 1.95.0 (59807616e 2026-04-14)").name
        'rust-1.95.0-59807616e'
    """
    words = re.findall(r"[\w.]+", rustc_version)[1:3]
    return libraries_home() / ("rust-" + "-".join(words))


def built_crates(folder: Path) -> dict[str, Path]:
    """The crates of :data:`RUST_CRATES` built in ``folder``: name -> its ``.rlib``.

    Example:
        >>> built_crates(Path("/no/such/folder"))
        {}
    """
    found = {}
    for name in RUST_CRATES:
        rlibs = sorted(folder.glob(f"lib{name}-*.rlib"))
        if rlibs:
            found[name] = rlibs[-1]
    return found


def rust_extern_args(folder: Path) -> tuple[str, ...]:
    """rustc's arguments that give a program the crates built in ``folder``.

    Example:
        >>> rust_extern_args(Path("/no/such/folder"))
        ()
    """
    crates = built_crates(folder)
    if not crates:
        return ()
    return ("-L", f"dependency={folder}", *(part for name, rlib in crates.items() for part in ("--extern", f"{name}={rlib}")))


def not_given(kind: str, name: str) -> str:
    """The sentence of a verdict whose program needs the library ``name`` of ``kind`` (``Rust crate``,
    ``npm package``) that the judge was not given, and how to give it.

    Example:
        >>> not_given("Rust crate", "md5")
        'the program needs the Rust crate md5, which the judge was not given: install librust-md5-dev and run python -m referee.verifiers.code.install_libraries (make install does both)'
        >>> not_given("npm package", "js-md5")
        'the program needs the npm package js-md5, which the judge was not given: run python -m referee.verifiers.code.install_libraries (make install does), or put it in node_modules under $REFEREE_LIBRARIES'
    """
    command = "python -m referee.verifiers.code.install_libraries"
    how = (f"install {RUST_CRATES[name]} and run {command} (make install does both)" if kind == "Rust crate"
           else f"run {command} (make install does), or put it in node_modules under $REFEREE_LIBRARIES")
    return f"the program needs the {kind} {name}, which the judge was not given: {how}"


def node_modules() -> Path | None:
    """The ``node_modules`` folder the judge is given, or ``None``.

    Example:
        >>> os.environ["REFEREE_LIBRARIES"] = "/no/such/folder"
        >>> node_modules() is None
        True
        >>> del os.environ["REFEREE_LIBRARIES"]
    """
    folder = libraries_home() / "node_modules"
    return folder if folder.is_dir() else None


def required_npm_packages(program: str) -> list[str]:
    """The packages of :data:`NPM_PACKAGES` that ``program`` requires, each once.

    Example:
        >>> required_npm_packages("var md5 = require('js-md5')\\nrequire('fs')\\nrequire('js-md5')")
        ['js-md5']
    """
    wanted = re.findall(r"""\brequire\s*\(\s*['"]([\w@/.-]+)['"]\s*\)""", program)
    return [name for name in dict.fromkeys(wanted) if name in NPM_PACKAGES]


def missing_npm_packages(program: str) -> list[str]:
    """The packages of :data:`NPM_PACKAGES` that ``program`` requires and the judge was not given.

    Example:
        >>> os.environ["REFEREE_LIBRARIES"] = "/no/such/folder"
        >>> missing_npm_packages("var md5 = require('js-md5')\\nrequire('fs')")
        ['js-md5']
        >>> del os.environ["REFEREE_LIBRARIES"]
    """
    folder = node_modules()
    return [name for name in required_npm_packages(program)
            if folder is None or not (folder / name / "package.json").is_file()]


def system_library(header: str) -> SystemLibrary | None:
    """The library of :data:`SYSTEM_LIBRARIES` that ``header`` (``openssl/md5.h``) belongs to.

    Example:
        >>> system_library("boost/any.hpp").name, system_library("vector")
        ('Boost', None)
    """
    return next((library for prefix, library in SYSTEM_LIBRARIES.items() if header.startswith(prefix)), None)


def header_installed(header: str) -> bool:
    """Whether ``header`` is where the C and C++ compilers look for it.

    Example:
        >>> header_installed("stdio.h"), header_installed("no/such/header.h")
        (True, False)
    """
    return any(os.path.isfile(os.path.join(folder, header)) for folder in _INCLUDE_FOLDERS)


def included(code: str) -> list[str]:
    """The headers ``code`` includes, in order.

    Example:
        >>> included("#include<boost/any.hpp>\\n# include \\"x.h\\"\\nint x;")
        ['boost/any.hpp', 'x.h']
    """
    return re.findall(r"""^\s*#\s*include\s*[<"]([^>"]+)[>"]""", code, flags=re.MULTILINE)


def link_flags(trusted: str, program: str) -> tuple[str, ...]:
    """The link flags of the system libraries that ``trusted`` (the dataset's declaration) or
    ``program`` include; raises :class:`LibraryMissing` for one the declaration includes and this
    machine lacks (a header the program alone includes is the program's to get right).

    Example:
        >>> link_flags("#include<openssl/md5.h>\\nstring f(string t){", "return t;}") if header_installed("openssl/md5.h") \\
        ...     else ('-lssl', '-lcrypto')
        ('-lssl', '-lcrypto')
        >>> link_flags("#include<vector>\\n", "int f() { return 1; }")
        ()
    """
    for header in included(trusted):
        library = system_library(header)
        if library is not None and not header_installed(header):
            raise LibraryMissing(f"the problem needs {library.name} ({header}), which is not installed on this "
                                 f"machine: install Debian's {library.package} (make install does, as root with apt)")
    flags: list[str] = []
    for header in included(trusted) + included(program):
        library = system_library(header)
        flags += [flag for flag in library.link if flag not in flags] if library is not None else []
    return tuple(flags)
