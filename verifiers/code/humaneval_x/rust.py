"""Rust (HumanEval-X's ``Rust/*`` rows): one crate, the test code in a module of the harness's.

``main.rs`` is the program (a ``main`` of its own renamed; the declaration kept before a body that
completes it and goes on to define other functions), then ``mod referee_tests`` with the test code.
The crates HumanEval-X's declarations import (``rand``, ``regex``, ``md5``) come from the judge's
libraries (:mod:`..libraries`); where one was not given, its imports are dropped, and a program
that still uses it is ``error``, saying which. The test module does not glob-import the program
(``use super::*``): it imports only the functions the test calls, and where the declaration gives a function's signature it calls it
through a wrapper of that signature, so the program cannot return a type of its own; every macro
the test invokes is ``::std::``'s (a ``macro_rules! assert_eq`` of the program's never applies).
``main`` runs each ``#[test]`` function in order, then prints the key; a failed assertion panics,
which ends the run. A program is refused when it implements ``PartialEq``/``PartialOrd`` by hand
(an always-equal value), exports or renames symbols (``no_mangle``, ``export_name``,
``link_section``, ``link_name``, ``#[link]``, ``#[used]``: a ``memcmp`` of its own would answer
every comparison) or writes assembly (``asm!``, ``global_asm!``), in its code (:mod:`.rust_text`:
not in its comments and strings).
"""

from __future__ import annotations

import re

from ..formats import HumanEvalTests, TestsError
from ..languages import LANGUAGES, find_toolchain
from ..libraries import RUST_CRATES, LibraryMissing, built_crates, crates_folder, not_given, rust_extern_args
from .base import Assembly, ProgramRefused, declaration_of, split_parameters
from .rust_text import closes_before_opening, code_only

_USE = re.compile(r"^\s*use\s+[^;]+;[ \t]*$", re.MULTILINE)
_SIGNATURE = re.compile(r"\bfn\s+(?P<name>\w+)\s*(?P<generics><[^(]*>)?\s*\((?P<params>[^{]*)\)\s*"
                        r"(?:->\s*(?P<ret>[^{]+?))?\s*\{", re.DOTALL)
_REFUSED = {
    r"\bimpl\b[^{;]*\bPartial(?:Eq|Ord)\b": "implements PartialEq or PartialOrd by hand, which the test's "
                                            "assertions would call to compare",
    r"\b(?:no_mangle|export_name|link_section|link_name|used)\b|#!?\[\s*link\b": "exports or renames symbols, "
                                                                                 "which could replace what the test calls",
    r"\b(?:global_asm|asm)\s*!": "writes assembly",
}
_STD_MACROS = ("assert", "assert_eq", "assert_ne", "debug_assert", "debug_assert_eq", "debug_assert_ne", "vec",
               "format", "panic", "println", "print", "eprintln", "eprint", "matches", "write", "writeln", "unreachable",
               "todo", "unimplemented")
_KEYWORDS = frozenset({"if", "for", "while", "match", "return", "fn", "in", "let", "loop", "as", "mut", "ref", "move",
                       "Some", "Ok", "Err", "None", "cfg", "Box", "String", "Vec", "usize"})
_HARNESS = """
fn main() {
    referee_tests::referee_run();
    let mut key = ::std::string::String::new();
    let _ = ::std::io::Read::read_to_string(&mut ::std::io::stdin(), &mut key);
    ::std::print!("\\n{}\\n", key.trim());
}
"""


def wrapper(declaration: str, name: str) -> str | None:
    """A function of the declared signature of ``name`` that calls the program's, or ``None`` when
    the declaration does not give it (or its parameters are patterns).

    Example:
        >>> print(wrapper("fn add(a: i32, mut b: i32) -> i32{", "add"))
        fn add(a: i32, mut b: i32) -> i32 { super::add(a, b) }
    """
    found = [match for match in _SIGNATURE.finditer(declaration) if match.group("name") == name]
    if not found:
        return None
    signature = found[-1]
    arguments = []
    for param in split_parameters(signature.group("params")):
        argument = re.match(r"^(?:mut\s+)?([a-z_]\w*)\s*:", param)
        if argument is None:
            return None
        arguments.append(argument.group(1))
    returns = f" -> {signature.group('ret').strip()}" if signature.group("ret") else ""
    head = f"fn {name}{signature.group('generics') or ''}({signature.group('params').strip()}){returns}"
    return f"{head} {{ super::{name}({', '.join(arguments)}) }}"


def assemble(program: str, spec: HumanEvalTests) -> Assembly:
    """``main.rs``: the program, the trusted test module, the harness's ``main``.

    Example:
        >>> spec = HumanEvalTests("#[cfg(test)]\\nmod tests {\\n    use super::*;\\n    #[test]\\n    fn test_add() {\\n"
        ...                       "        assert_eq!(add(1, 2), 3);\\n    }\\n}\\n", "", declaration="fn add(a: i32, b: i32) -> i32{\\n")
        >>> main = assemble("fn add(a: i32, b: i32) -> i32 { a + b }", spec).main_text
        >>> "::std::assert_eq!(add(1, 2), 3)" in main, "fn add(a: i32, b: i32) -> i32 { super::add(a, b) }" in main
        (True, True)
        >>> assemble("use std::cmp::PartialEq;\\nstruct X;\\nimpl PartialEq<i32> for X { fn eq(&self, _: &i32) -> bool { true } }", spec)
        Traceback (most recent call last):
        ...
        referee.verifiers.code.humaneval_x.base.ProgramRefused: the program implements PartialEq or PartialOrd by hand, which the test's assertions would call to compare
    """
    declaration = declaration_of(spec)
    program_code = code_only(program)  # the checks read code, not comments and strings
    for pattern, why in _REFUSED.items():
        if re.search(pattern, program_code):
            raise ProgramRefused(f"the program {why}")
    defined_in_test = set(re.findall(r"\bfn\s+(\w+)", spec.test))
    called = [name for name in dict.fromkeys(re.findall(r"(?<![\w.:])([a-z_]\w*)\s*\(", spec.test))
              if name not in defined_in_test and name not in _KEYWORDS]
    whole = any(re.search(rf"\bfn\s+{re.escape(name)}\b", program_code) for name in called)
    # A body that completes the declared function and goes on to define others keeps the declaration.
    code = program if whole and not closes_before_opening(program) else declaration + program
    entries = [spec.entry_point] if spec.entry_point else [
        name for name in called if re.search(rf"\bfn\s+{re.escape(name)}\b", code)]
    if not entries:
        raise TestsError("tests['test'] calls no function of the program that I can find; give tests['entry_point'].")
    toolchain = find_toolchain("rust")
    crates = crates_folder(toolchain.version) if toolchain is not None else None
    given = set(built_crates(crates)) if crates is not None else set()
    code = without_missing_crates(code, given)
    declaration = without_missing_crates(declaration, given)
    code = re.sub(r"\bfn\s+main\s*\(\s*\)", "fn referee_program_main()", code)
    bindings = []
    for name in entries:
        pinned = wrapper(declaration, name)
        bindings.append(pinned if pinned is not None else f"use super::{name};")
    named = "\n".join(bindings) + spec.test
    types = [name for name in dict.fromkeys(re.findall(r"\b(?:struct|enum|type|trait)\s+(\w+)", code))
             if re.search(rf"\b{name}\b", named)]  # the program's own types the signatures or the test name
    bindings += [f"use super::{name};" for name in types]
    if not re.search(r"\bmod\s+tests\s*\{", re.sub(r"/\*.*?\*/|//[^\n]*", "", spec.test, flags=re.DOTALL)):
        raise TestsError("tests['test'] has no `mod tests { ... }` for the Rust harness to run (outside comments).")
    test = spec.test.replace("#[cfg(test)]", "")
    test = re.sub(r"\bmod\s+tests\s*\{", "mod referee_tests {\n" + "\n".join(
        [*(line.strip() for line in _USE.findall(declaration)), *bindings]), test, count=1)
    test = re.sub(r"^\s*use\s+super\s*::\s*\*\s*;", "", test, flags=re.MULTILINE)
    runs = re.findall(r"#\[test\]\s*fn\s+(\w+)", test)
    test = re.sub(r"#\[test\]", "", test)
    test = re.sub(rf"(?<![\w:])({'|'.join(_STD_MACROS)})\s*!", r"::std::\1!", test)
    end = test.rindex("}")
    test = test[:end] + "pub fn referee_run() {\n" + "".join(f"    {name}();\n" for name in runs) + "}\n" + test[end:]
    main = f"#![allow(unused, deprecated, non_snake_case)]\n{code}\n{test}\n{_HARNESS}"
    language = LANGUAGES["rust"]
    externs = rust_extern_args(crates) if crates is not None and given else ()
    return Assembly({"main.rs": main}, "main.rs", (*language.compile, *externs), language.run, language.artifacts)


def without_missing_crates(code: str, given: set[str]) -> str:
    """``code`` without its ``use`` lines of the crates of :data:`RUST_CRATES` not in ``given``
    (HumanEval-X's declarations import ``rand``, ``regex`` and ``md5`` for every problem); raises
    :class:`LibraryMissing` when its code still uses one of them (``md5::compute``, ``Regex::new``).

    Example:
        >>> declaration = "use rand::Rng;\\nuse regex::Regex;\\nuse md5;\\nfn f(s: &str) -> usize {\\n"
        >>> without_missing_crates(declaration + "    s.len()\\n}", set())
        'fn f(s: &str) -> usize {\\n    s.len()\\n}'
        >>> without_missing_crates(declaration + "    Regex::new(s).is_ok() as usize\\n}", {"rand"})
        Traceback (most recent call last):
        ...
        referee.verifiers.code.libraries.LibraryMissing: the program needs the Rust crate regex, which the judge was not given: install librust-regex-dev and run python -m referee.verifiers.code.install_libraries (make install does both)
    """
    for name in RUST_CRATES:
        if name in given:
            continue
        uses = re.compile(rf"^[ \t]*(?:pub\s+)?use\s+(?:::)?{name}\b[^;]*;[ \t]*\n?", re.MULTILINE)
        imported = {word for line in uses.findall(code) for word in re.findall(r"\b[A-Za-z_]\w*\b", line)} - {
            "use", "pub", "as", "self", "super", "crate", name}
        code = uses.sub("", code)
        text = code_only(code)
        own = set(re.findall(r"\b(?:struct|enum|trait|type|fn|mod)\s+(\w+)", text))
        if re.search(rf"(?<![\w:]){name}\s*::", text) or any(
                re.search(rf"\b{word}\b", text) for word in imported - own):
            raise LibraryMissing(not_given("Rust crate", name))
    return code
