"""Java with the JDK's javac and java: the class the program declares public (``Main`` by default)
is compiled and run; the JVM's heap is the program's memory limit, its own needs come on top."""

from __future__ import annotations

import os
import re

from .base import Language, Toolchain, find_plain, outside_system

_PUBLIC_CLASS = re.compile(r"^\s*public\s+(?:final\s+)?class\s+([A-Za-z_$][\w$]*)", re.MULTILINE)
# Small and single-threaded where it can be: a JVM reserves far more address space than it uses.
_JVM = ("-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-XX:ReservedCodeCacheSize=32m",
        "-XX:CompressedClassSpaceSize=32m", "-XX:MaxMetaspaceSize=128m", "-XX:-UsePerfData")


def _files(language: Language, code: str) -> dict[str, str]:
    """``{source, main}``: javac wants the public class in a file of its name.

    Example:
        >>> _files(LANGUAGE, "import java.util.*;\\npublic class Solution {}")
        {'source': 'Solution.java', 'main': 'Solution'}
        >>> _files(LANGUAGE, "class Main {}")
        {'source': 'Main.java', 'main': 'Main'}
    """
    found = _PUBLIC_CLASS.search(code)
    main = found.group(1) if found else "Main"
    return {"source": f"{main}.java", "main": main}


def _find(language: Language) -> Toolchain | None:
    """javac and java, and the configuration folder the JDK links to from its ``lib`` (Debian keeps it in /etc)."""
    found = find_plain(language)
    if found is None:
        return None
    home = os.path.dirname(os.path.dirname(found.tools["java"]))
    linked = [os.path.realpath(os.path.join(home, "lib", "jvm.cfg")), os.path.realpath(os.path.join(home, "conf"))]
    folders = outside_system([path for path in linked if os.path.exists(path) and not path.startswith(home)])
    return Toolchain(found.language, found.tools, found.version, tuple(dict.fromkeys(found.folders + folders)))


LANGUAGE = Language(
    name="java", title="Java", tags=("java",), source="Main.java", tools=("javac", "java"),
    compile=("{javac}", *(f"-J{flag}" for flag in _JVM), "-J-Xmx512m", "-encoding", "UTF-8", "-nowarn", "-d", ".",
             "{source}"),
    run=("{java}", *_JVM, "-Xmx{memory_mb}m", "-cp", ".", "{main}"),
    artifacts=("*.class",), processes=64, extra_memory_mb=1024,
    memory_markers=("java.lang.OutOfMemoryError",), version_args=("-version",),
    find=_find, files=_files,
)
