"""Java (HumanEval-X's ``Java/*`` rows): one file, ``Main.java``, whose public class is the harness's.

The program comes first (its ``package`` line dropped, its top-level types made package-private, the
declaration's imports before it), then the test code with its ``public class Main`` renamed, then
the harness's ``Main``, which runs the test's ``main`` and prints the key when it returns. The test
throws ``AssertionError`` on a failure, which ends the run; its ``assert`` statements are checked too
(``-ea`` for the test's class only, so the program's own asserts stay as plain ``java`` runs them). Before anything is compiled, a program
is refused when it declares a type whose name the test code uses (a class ``Arrays`` of its own
would shadow ``java.util.Arrays`` for the test), overrides ``equals`` or ``hashCode``
(the test compares the values the program returns with their own ``equals``: an always-equal list),
or makes proxies or reflects (``java.lang.reflect``). Unicode escapes are read as javac reads them.
"""

from __future__ import annotations

import re

from ..formats import HumanEvalTests
from ..languages import LANGUAGES
from .base import Assembly, ProgramRefused, declaration_of, last_name, with_declaration

_ENTRY = re.compile(r"\b(?P<name>[A-Za-z_$][\w$]*)\s*\([^;{}()]*\)\s*(?:throws[^{;]*)?\{\s*$", re.MULTILINE)
_UNICODE_ESCAPE = re.compile(r"\\u+([0-9a-fA-F]{4})")
_TYPE = re.compile(r"\b(?:class|interface|enum|record)\s+([A-Za-z_$][\w$]*)")
_OVERRIDES = re.compile(r"\b(?:equals|hashCode)\s*\(\s*(?:final\s+)?(?:@\w+\s+)*[\w.$<>?,\s]*\)\s*"
                        r"(?:throws[^{;]*)?\{")
_REFLECTION = re.compile(r"\bjava\s*\.\s*lang\s*\.\s*reflect\b|\bProxy\b|\bInvocationHandler\b|\bsetAccessible\b|"
                         r"\bMethodHandles?\b|\bUnsafe\b")
_IMPORT = re.compile(r"^\s*import\s+[\w.*\s]+;\s*$", re.MULTILINE)
_PUBLIC_TYPE = re.compile(r"^public\s+((?:(?:final|abstract|sealed|non-sealed|strictfp)\s+)*(?:class|interface|enum|record)\b)",
                          re.MULTILINE)
_HARNESS = """
public class Main {
    public static void main(String[] args) throws Throwable {
        RefereeTests.main(args);
        byte[] key = System.in.readAllBytes();
        System.out.print("\\n" + new String(key, java.nio.charset.StandardCharsets.US_ASCII));
        System.out.flush();
    }
}
"""


def refusal(program: str, test: str, allowed: set[str]) -> str | None:
    """Why ``program`` cannot share a file with ``test``, or ``None``.

    Example:
        >>> refusal("class Arrays { }\\nclass Solution { }", "Arrays.asList(1)", {"Solution"})
        'the program declares a type named Arrays, a name the test code uses for its own'
        >>> refusal("class Solution { public boolean equals(Object o) { return true; } }", "", {"Solution"})
        'the program overrides equals or hashCode, which the test code would call to compare'
    """
    text = _UNICODE_ESCAPE.sub(lambda found: chr(int(found.group(1), 16)), program)
    used = set(re.findall(r"[A-Za-z_$][\w$]*", test))
    for name in _TYPE.findall(text):
        if name in used and name not in allowed:
            return f"the program declares a type named {name}, a name the test code uses for its own"
    if _OVERRIDES.search(text):
        return "the program overrides equals or hashCode, which the test code would call to compare"
    if _REFLECTION.search(text):
        return "the program uses reflection or proxies, which could change what the test code compares"
    return None


def assemble(program: str, spec: HumanEvalTests) -> Assembly:
    """``Main.java``: the program, the renamed test class, the harness's ``Main``.

    Example:
        >>> spec = HumanEvalTests("public class Main {\\n    public static void main(String[] args) {\\n"
        ...                       "        if (new Solution().add(1, 2) != 3) throw new AssertionError();\\n    }\\n}\\n", "",
        ...                       declaration="import java.util.*;\\n\\nclass Solution {\\n    public int add(int a, int b) {\\n")
        >>> main = assemble("public class Solution { public int add(int a, int b) { return a + b; } }", spec).main_text
        >>> "class RefereeTests" in main, "\\nclass Solution" in main
        (True, True)
    """
    declaration = declaration_of(spec)
    entry = spec.entry_point or last_name(_ENTRY, declaration, "Java")
    code = with_declaration(program, spec.prompt or declaration, re.compile(rf"\b{re.escape(entry)}\s*\([^;{{}}()]*\)\s*(?:throws[^{{;]*)?\{{"))
    allowed = set(_TYPE.findall(declaration))
    why = refusal(code, spec.test, allowed)
    if why is not None:
        raise ProgramRefused(why)
    code = re.sub(r"^\s*package\s+[\w.]+\s*;", "", code, count=1, flags=re.MULTILINE)
    code = _PUBLIC_TYPE.sub(r"\1", code)
    imports = "\n".join(line.strip() for line in _IMPORT.findall(declaration))
    test = re.sub(r"\bpublic\s+class\s+Main\b", "class RefereeTests", spec.test, count=1)
    language = LANGUAGES["java"]
    run = (language.run[0], "-ea:RefereeTests", *language.run[1:])
    return Assembly({"Main.java": f"{imports}\n{code}\n{test}\n{_HARNESS}"}, "Main.java", language.compile, run,
                    language.artifacts, names=(("main", "Main"),))
