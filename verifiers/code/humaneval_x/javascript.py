"""JavaScript (HumanEval-X's ``JavaScript/*`` rows) on node: one file, the program kept apart.

``main.js`` is trusted. It first freezes JavaScript's built-ins (``Object``, ``Array``, ``JSON``,
``Math``, ... and their prototypes) and makes their global names read-only, then compiles the
program's text (embedded as a string, so no text of it can close the harness's code) as a function
of its own with :func:`vm.compileFunction`: the program's top-level names are local to it, and only
the entry point comes back. The declaration's helpers and the test code run in the harness's scope,
where the program declared nothing; the test's ``console.assert`` (which only prints in node) is
the harness's own check, and the key is printed only when no check failed. The program can still
return objects of its own making (a ``toJSON`` or ``valueOf`` that lies); it cannot know the
expected values the test compares them with without reading the test (the residual the package
documents). The npm packages the judge is given (:mod:`..libraries`: ``js-md5``) are found by the
program's ``require``; a program that requires one the judge was not given is ``error``, saying which.
"""

from __future__ import annotations

import json
import re

from ..formats import HumanEvalTests
from ..languages import LANGUAGES
from ..libraries import LibraryMissing, missing_npm_packages, node_modules, not_given, required_npm_packages
from .base import Assembly, cut_entry, declaration_of, last_name, with_declaration

_ENTRY = re.compile(r"^\s*(?:const|let|var|function)\s+(?P<name>[A-Za-z_$][\w$]*)", re.MULTILINE)
_BUILT_INS = ("Object", "Function", "Array", "Number", "parseFloat", "parseInt", "isFinite", "isNaN", "Boolean",
              "String", "Symbol", "Date", "Promise", "RegExp", "Error", "AggregateError", "EvalError", "RangeError",
              "ReferenceError", "SyntaxError", "TypeError", "URIError", "JSON", "Math", "ArrayBuffer", "Uint8Array",
              "Int8Array", "Uint16Array", "Int16Array", "Uint32Array", "Int32Array", "Float32Array", "Float64Array",
              "Uint8ClampedArray", "BigUint64Array", "BigInt64Array", "DataView", "Map", "BigInt", "Set", "WeakMap",
              "WeakSet", "Proxy", "Reflect", "encodeURIComponent", "decodeURIComponent", "encodeURI", "decodeURI")
_PROLOGUE = """\
const refereeFs = require('fs');
const refereeRead = refereeFs.readFileSync, refereeWrite = refereeFs.writeSync;
const refereeVm = require('vm');
const refereeCompile = refereeVm.compileFunction;
const { refereeAssert, refereeFinish } = (() => {
  let failed = false;
  return Object.freeze({
    refereeAssert(condition) { if (!condition) failed = true; },
    refereeFinish() {
      if (failed) { process.exitCode = 1; return; }
      const key = refereeRead(0, 'utf8');
      refereeWrite(1, '\\n' + key.trim() + '\\n');
    },
  });
})();
(() => {
  const seen = new Set();
  const freeze = (value) => {
    if ((typeof value !== 'object' && typeof value !== 'function') || value === null || seen.has(value)) return;
    seen.add(value);
    Object.freeze(value);
    for (const key of Reflect.ownKeys(value)) {
      const described = Reflect.getOwnPropertyDescriptor(value, key);
      if ('value' in described) freeze(described.value); else { freeze(described.get); freeze(described.set); }
    }
    freeze(Reflect.getPrototypeOf(value));
  };
  for (const name of NAMES) {
    if (!(name in globalThis)) continue;
    freeze(globalThis[name]);
    Reflect.defineProperty(globalThis, name, { writable: false, configurable: false });
  }
})();
"""


def assemble(program: str, spec: HumanEvalTests) -> Assembly:
    """``main.js``: the frozen built-ins, the program compiled apart, the helpers, the test, the key.

    Example:
        >>> spec = HumanEvalTests("const t = () => { console.assert(add(1, 2) === 3) }\\nt()\\n", "",
        ...                       declaration="\\nconst add = (a, b) => {\\n")
        >>> main = assemble("const add = (a, b) => a + b;", spec).sources["main.js"]
        >>> "refereeAssert(add(1, 2) === 3)" in main, 'const add = refereeCompile(' in main
        (True, True)
    """
    declaration = declaration_of(spec)
    missing = missing_npm_packages(program)
    if missing:
        raise LibraryMissing(not_given("npm package", missing[0]))
    entry = spec.entry_point or last_name(_ENTRY, declaration, "JavaScript")
    helpers, _ = cut_entry(declaration, re.compile(rf"^\s*(?:const|let|var|function)\s+{re.escape(entry)}\b",
                                                   re.MULTILINE))
    defines = re.compile(rf"(?:\b(?:const|let|var)\s+{re.escape(entry)}\s*=|\bfunction\s+{re.escape(entry)}\s*\()")
    code = with_declaration(program, spec.prompt or declaration, defines)
    body = f"{code}\n;return typeof {entry} === 'undefined' ? module.exports : {entry};"
    load = (f"const {entry} = refereeCompile({json.dumps(body)}, ['require', 'module', 'exports'], "
            "{ filename: 'solution.js' })(require, { exports: {} }, {});\n")
    test = re.sub(r"\bconsole\s*\.\s*assert\s*\(", "refereeAssert(", spec.test)
    folder = node_modules()
    # The packages are loaded before the built-ins are frozen (js-md5 sets its own toString, which a
    # frozen Object.prototype forbids); the program's require then finds them loaded.
    packages = "" if folder is None else f"module.paths.unshift({json.dumps(str(folder))});\n" + "".join(
        f"require({json.dumps(name)});\n" for name in required_npm_packages(program))
    main = (packages + _PROLOGUE.replace("NAMES", json.dumps(list(_BUILT_INS))) + load + helpers + "\n" + test
            + "\nrefereeFinish();\n")
    language = LANGUAGES["javascript"]
    return Assembly({"main.js": main}, "main.js", language.compile, language.run, ("main.js",))
