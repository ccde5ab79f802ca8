"""What a language is to the sandbox: how to compile a program, how to run it, which toolchain it needs.

A :class:`Language` is plain data plus two small hooks (finding the toolchain, naming the
files of one program); one module per language in this package defines one, and the registry
(:mod:`referee.verifiers.code.languages`) finds them all, so adding a language touches nothing else.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field

# Where a toolchain counts as part of the system: the sandbox's minimal root binds these read-only already.
SYSTEM_FOLDERS = ("/usr/", "/bin/", "/sbin/", "/lib/", "/lib64/", "/lib32/")
_VERSION_SECONDS = 20.0


@dataclass(frozen=True)
class Toolchain:
    """A toolchain found on this machine: the real path of each tool, its version line, and the
    folders outside the system's that the sandbox must mount read-only for it to work.

    Example:
        >>> Toolchain("cpp", {"g++": "/usr/bin/g++-12"}, "g++ (Debian 12.2.0) 12.2.0").folders
        ()
    """

    language: str
    tools: dict[str, str]
    version: str
    folders: tuple[str, ...] = ()


def search_path() -> list[str]:
    """Folders searched for tools: ``PATH``, then where per-user installers put them (rustup's
    ``~/.cargo/bin`` of the user we run as, found through the password database so that a
    sandbox worker with a cleared environment finds the same), then Go's usual homes.

    Example:
        >>> "/usr/bin" in search_path()
        True
    """
    folders = [folder for folder in os.environ.get("PATH", "").split(os.pathsep) if folder]
    try:
        home = pwd.getpwuid(os.getuid()).pw_dir
    except KeyError:
        home = os.path.expanduser("~")
    for folder in (os.path.join(home, ".cargo", "bin"), "/usr/local/go/bin", "/usr/lib/go/bin",
                   "/usr/local/bin", "/usr/bin", "/bin"):
        if folder not in folders:
            folders.append(folder)
    return folders


def which(tool: str) -> str | None:
    """The real path (symlinks resolved: ``/etc/alternatives`` is not inside the sandbox) of ``tool``.

    Example:
        >>> which("sh").startswith("/"), which("no-such-tool-here")
        (True, None)
    """
    found = shutil.which(tool, path=os.pathsep.join(search_path()))
    return os.path.realpath(found) if found else None


def outside_system(paths: list[str]) -> tuple[str, ...]:
    """The folders of ``paths`` that the sandbox's minimal root does not bind already, each once.

    Example:
        >>> outside_system(["/usr/bin/g++-12", "/opt/rust/bin/rustc", "/opt/rust/bin/cargo"])
        ('/opt/rust/bin',)
    """
    folders = []
    for path in paths:
        folder = path if os.path.isdir(path) else os.path.dirname(path)
        if not folder.startswith(SYSTEM_FOLDERS) and folder not in folders:
            folders.append(folder)
    return tuple(folders)


def version_line(argv: list[str], env: dict[str, str] | None = None) -> str:
    """The first line a tool prints for its version (on stdout or stderr); ``""`` when it cannot run.

    Example:
        >>> version_line(["sh", "-c", "echo 'tool 1.2'; echo more"])
        'tool 1.2'
    """
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=_VERSION_SECONDS,
                              stdin=subprocess.DEVNULL, env=env)
    except (OSError, subprocess.SubprocessError):
        return ""
    lines = (done.stdout or done.stderr).strip().splitlines()
    return lines[0].strip() if done.returncode == 0 and lines else ""


def find_plain(language: Language) -> Toolchain | None:
    """The usual way to find a toolchain: every tool on :func:`search_path`, the first one's
    ``--version`` line; ``None`` when a tool is missing or does not run.

    Example:
        >>> from referee.verifiers.code.languages import LANGUAGES
        >>> find_plain(LANGUAGES["go"]) is None or find_plain(LANGUAGES["go"]).tools["go"].endswith("go")
        True
    """
    tools = {}
    for tool in language.tools:
        path = which(tool)
        if path is None:
            return None
        tools[tool] = path
    version = version_line([tools[language.tools[0]], *language.version_args])
    if not version:
        return None
    return Toolchain(language.name, tools, version, outside_system(list(tools.values())))


def single_source(language: Language, code: str) -> dict[str, str]:
    """The names of one program's files: its source file, as the language calls it.

    Example:
        >>> from referee.verifiers.code.languages import LANGUAGES
        >>> single_source(LANGUAGES["cpp"], "int main() {}")
        {'source': 'main.cpp'}
    """
    return {"source": language.source}


@dataclass(frozen=True)
class Language:
    """How the sandbox builds and runs programs in one language.

    ``compile`` and ``run`` are argument templates: ``{tool}`` names a tool's real path (``{g++}``),
    ``{source}`` and the other names :attr:`files` gives, ``{memory_mb}`` the program's memory
    limit. ``compile`` is ``None`` for a language with nothing to build. ``artifacts`` are the
    file patterns the compile step leaves that the runs need (the source is kept when it is one).

    Example:
        >>> from referee.verifiers.code.languages import LANGUAGES
        >>> cpp = LANGUAGES["cpp"]
        >>> cpp.fill(cpp.compile, {"g++": "/usr/bin/g++-12"}, {"source": "main.cpp"}, 256)[:3]
        ['/usr/bin/g++-12', '-std=c++17', '-O2']
    """

    name: str
    title: str
    tags: tuple[str, ...]
    source: str
    tools: tuple[str, ...]
    compile: tuple[str, ...] | None
    run: tuple[str, ...]
    artifacts: tuple[str, ...] = ("main",)
    processes: int = 16  # threads and processes a run may have (a JVM or node starts a dozen)
    extra_memory_mb: int = 0  # address space a run needs beyond the program's own memory (a JVM's)
    memory_markers: tuple[str, ...] = ()  # what a run prints on stderr when it ran out of memory
    version_args: tuple[str, ...] = ("--version",)
    find: Callable[[Language], Toolchain | None] = field(default=find_plain, compare=False)
    files: Callable[[Language, str], dict[str, str]] = field(default=single_source, compare=False)

    def fill(self, template: tuple[str, ...], tools: dict[str, str], names: dict[str, str],
             memory_mb: int) -> list[str]:
        """``template`` with its ``{...}`` names filled in."""
        values = {**tools, **names, "memory_mb": str(memory_mb)}
        return [part.format_map(values) for part in template]
