"""Go (HumanEval-X's ``Go/*`` rows): three files of package ``main``, built together.

``main.go`` is the program (a ``main`` of its own is renamed). ``tests.go`` is the test code with
the imports of the row's ``test_setup`` but for ``testing`` and testify, and those of the packages
HumanEval-X's evaluation adds when the test uses them: its ``*testing.T`` is the
harness's type and ``assert.New(t).Equal`` the harness's check, which compares as testify does
(``reflect.DeepEqual``, bytes for ``[]byte``) and ends the process with ``os.Exit(1)`` on the first
mismatch. ``referee.go`` holds those and ``main``, which runs every ``Test*`` function in order and
then prints the key. Go has no operator overloading or monkeypatching, separate files keep a
comment or string the program leaves open from reaching the test, and a program that names a
symbol of another package with ``//go:linkname`` or brings in C with cgo is refused. Imports the
program never uses (a whole function that keeps the prompt's import block) are dropped, as
HumanEval-X's harness drops them, and the verdict's details name them (``dropped_imports``).
"""

from __future__ import annotations

import re

from ..formats import HumanEvalTests, TestsError
from .base import Assembly, ProgramRefused, declaration_of, last_name, with_declaration

_ENTRY = re.compile(r"^func\s+(?P<name>[A-Za-z_]\w*)\s*\(", re.MULTILINE)
_PACKAGE = re.compile(r"^\s*package\s+\w+", re.MULTILINE)
_IMPORT = re.compile(r"^\s*import\s*(?:\([^)]*\)|(?:\w+\s+)?\"[^\"]*\")", re.MULTILINE)
_TEST_FUNCTION = re.compile(r"^func\s+(Test\w*)\s*\(\s*\w+\s+\*testing\.T\s*\)", re.MULTILINE)
_REFUSED = re.compile(r"//go:linkname|^\s*import\s+(?:\(\s*)?\"C\"", re.MULTILINE)
_TESTING_IMPORTS = ("testing", "github.com/stretchr/testify/assert")
# The packages HumanEval-X's evaluation imports for code that uses them (codegeex/benchmark/utils.py).
IMPORT_HELPER = ("math", "strings", "fmt", "strconv", "time", "bytes", "regexp", "sort", "math/rand", "crypto/md5")
_HARNESS = """package main

import (
	refereeBytes "bytes"
	refereeOS "os"
	refereeReflect "reflect"
)

type refereeT struct{}

func (*refereeT) Errorf(string, ...interface{}) { refereeOS.Exit(1) }
func (*refereeT) Error(...interface{})          { refereeOS.Exit(1) }
func (*refereeT) Fatalf(string, ...interface{}) { refereeOS.Exit(1) }
func (*refereeT) Fatal(...interface{})          { refereeOS.Exit(1) }
func (*refereeT) FailNow()                      { refereeOS.Exit(1) }
func (*refereeT) Fail()                         { refereeOS.Exit(1) }

type refereeAssertions struct{}

var assert refereeAssertions

func (refereeAssertions) New(*refereeT) refereeAssertions { return refereeAssertions{} }

func (refereeAssertions) Equal(expected, actual interface{}, _ ...interface{}) bool {
	if !refereeEqual(expected, actual) {
		refereeOS.Exit(1)
	}
	return true
}

func (refereeAssertions) True(value bool, _ ...interface{}) bool {
	if !value {
		refereeOS.Exit(1)
	}
	return true
}

func (refereeAssertions) False(value bool, _ ...interface{}) bool {
	if value {
		refereeOS.Exit(1)
	}
	return true
}

func refereeEqual(expected, actual interface{}) bool {
	if expected == nil || actual == nil {
		return expected == actual
	}
	wanted, isBytes := expected.([]byte)
	if !isBytes {
		return refereeReflect.DeepEqual(expected, actual)
	}
	got, isBytes := actual.([]byte)
	return isBytes && refereeBytes.Equal(wanted, got)
}

func main() {
	t := &refereeT{}
CALLS
	key := make([]byte, 128)
	n, _ := refereeOS.Stdin.Read(key)
	refereeOS.Stdout.Write(append([]byte("\\n"), key[:n]...))
}
"""


def used_packages(code: str, packages: tuple[str, ...] = IMPORT_HELPER) -> list[str]:
    """The ``packages`` that ``code`` names (``strings.Split``), as HumanEval-X's evaluation adds them.

    Example:
        >>> used_packages("x := strings.Split(s, \" \"); rand.Intn(3)")
        ['strings', 'math/rand']
    """
    return [name for name in packages if re.search(rf"(?<![\w.]){re.escape(name.rsplit('/', 1)[-1])}\.[A-Z]", code)]


def drop_unused_imports(code: str) -> tuple[str, list[str]]:
    """``code`` without the imports it never uses (a whole function that keeps the prompt's import
    block), as HumanEval-X's harness drops them (Go refuses to build an unused import), and the
    paths dropped. An import counts as used when its name is followed by a ``.`` anywhere outside
    the import declarations (so a doubtful one stays, and the compiler decides); blank (``_``) and
    dot imports stay.

    Example:
        >>> code, dropped = drop_unused_imports('import (\\n    "math"\\n    "strings"\\n)\\nfunc F() string { return strings.ToUpper("a") }')
        >>> dropped, '"strings"' in code, '"math"' in code
        (['math'], True, False)
    """
    declarations = list(_IMPORT.finditer(code))
    rest = _IMPORT.sub("", code)
    kept, dropped = [], []
    for declaration in declarations:
        for alias, path in re.findall(r'(?:^|[\s(])([\w.]+\s+)?"([^"]+)"', declaration.group(0)):
            name = alias.strip() or path.rsplit("/", 1)[-1]
            used = name in ("_", ".") or re.search(rf"(?<![\w.]){re.escape(name)}\s*\.", rest)
            (kept if used else dropped).append(f"{alias.strip()} \"{path}\"".strip())
    if not dropped:
        return code, []
    block = "import (\n" + "".join(f"\t{spec}\n" for spec in kept) + ")\n" if kept else ""
    return block + rest, [spec.rsplit(" ", 1)[-1].strip('"') for spec in dropped]


def import_block(packages: list[str]) -> str:
    """An import declaration of ``packages`` (nothing for none).

    Example:
        >>> print(import_block(["fmt"]), end="")
        import (
        	"fmt"
        )
    """
    return "import (\n" + "".join(f'\t"{name}"\n' for name in packages) + ")\n" if packages else ""


def assemble(program: str, spec: HumanEvalTests) -> Assembly:
    """``main.go``, ``tests.go`` and ``referee.go``.

    Example:
        >>> spec = HumanEvalTests("func TestAdd(t *testing.T) {\\n    assert := assert.New(t)\\n"
        ...                       "    assert.Equal(3, Add(1, 2))\\n}\\n", "", declaration="\\nfunc Add(a int, b int) int {\\n")
        >>> built = assemble("func Add(a int, b int) int { return a + b }", spec)
        >>> built.sources["main.go"].splitlines()[0], "TestAdd(t)" in built.sources["referee.go"]
        ('package main', True)
    """
    declaration = declaration_of(spec)
    entry = spec.entry_point or last_name(_ENTRY, declaration, "Go")
    if _REFUSED.search(program):
        raise ProgramRefused("the program uses //go:linkname or cgo, which could replace what the test code calls")
    prompt = _IMPORT.sub("", spec.prompt or declaration)
    code = with_declaration(program, prompt, re.compile(rf"\bfunc\s+{re.escape(entry)}\s*\("))
    code = re.sub(r"^func\s+main\s*\(\s*\)", "func refereeProgramMain()", code, flags=re.MULTILINE)
    code = _PACKAGE.sub("", code, count=1)
    code, dropped = drop_unused_imports(code)
    imported = set(re.findall(r'"([^"]+)"', " ".join(_IMPORT.findall(code))))
    missing = [name for name in used_packages(code) if name not in imported]
    main_go = f"package main\n\n{import_block(missing)}{code}"
    tests = _TEST_FUNCTION.findall(spec.test)
    if not tests:
        raise TestsError("tests['test'] has no func TestXxx(t *testing.T) for the Go harness to run.")
    setup = [name for name in re.findall(r'"([^"]+)"', spec.setup) if name not in _TESTING_IMPORTS]
    test = re.sub(r"\*\s*testing\s*\.\s*T\b", "*refereeT", spec.test)
    tests_go = f"package main\n\n{import_block(used_packages(test, tuple(dict.fromkeys(setup + list(IMPORT_HELPER)))))}\n{test}\n"
    harness = _HARNESS.replace("CALLS", "".join(f"\t{name}(t)\n" for name in tests))
    return Assembly({"main.go": main_go, "tests.go": tests_go, "referee.go": harness}, "main.go",
                    ("{go}", "build", "-o", "main", "main.go", "tests.go", "referee.go"), ("./main",), ("main",),
                    details={"dropped_imports": dropped} if dropped else {})
