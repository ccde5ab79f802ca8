"""Rust source read as rustc reads it: what is code, and what is a comment, a string or a character.

The harness's checks of a Rust program (symbols it may not export, crates it uses, where its text
continues the declaration) read only its code: a doc comment that says "used" is not
``#[used]``. Comments (line, and block comments, which nest), strings (with escapes; raw strings
``r#"..."#`` end only at their own number of ``#``; byte and C strings) and character literals
are blanked, their line breaks kept; lifetimes (``'a``) stay code. Where the text is not valid
Rust the reading errs towards code, so nothing rustc compiles can hide from a check.
"""

from __future__ import annotations

import re

_START = re.compile(r"//|/\*|(?<![\w])[bc]?r#*\"|\"|(?<![\w])b?'(?:\\(?:x[0-9a-fA-F]{2}|u\{[0-9a-fA-F_]{1,8}\}|.)|[^'\\\n])'")
_STRING_END = re.compile(r"\\.|\"", re.DOTALL)
_BLOCK = re.compile(r"/\*|\*/")


def _blank(text: str) -> str:
    return re.sub(r"[^\n]", " ", text)


def code_only(source: str) -> str:
    """``source`` with its comments, strings and character literals blanked (same length, same lines).

    Example:
        >>> code_only('/// Values used twice\\nfn f() -> &\\'static str { "#[used]" }').split()
        ['fn', 'f()', '->', "&'static", 'str', '{', '}']
        >>> code_only('let s = r#"a " b"#; #[no_mangle] fn x() {} /* /* */ */ let c = \\'"\\';').split()
        ['let', 's', '=', ';', '#[no_mangle]', 'fn', 'x()', '{}', 'let', 'c', '=', ';']
    """
    out, at = [], 0
    while True:
        found = _START.search(source, at)
        if found is None:
            out.append(source[at:])
            return "".join(out)
        out.append(source[at:found.start()])
        token = found.group(0)
        if token == "//":
            end = source.find("\n", found.start())
            end = len(source) if end < 0 else end
        elif token == "/*":
            depth, end = 0, found.start()
            for mark in _BLOCK.finditer(source, found.start()):
                depth += 1 if mark.group(0) == "/*" else -1
                end = mark.end()
                if depth == 0:
                    break
            else:
                end = len(source)
        elif token.endswith('"') and "r" in token:  # a raw string: ends at a quote and as many #
            closing = '"' + "#" * token.count("#")
            close = source.find(closing, found.end())
            end = len(source) if close < 0 else close + len(closing)
        elif token.endswith('"'):
            end = len(source)
            for mark in _STRING_END.finditer(source, found.end()):
                if mark.group(0) == '"':
                    end = mark.end()
                    break
        else:  # a character literal
            end = found.end()
        out.append(_blank(source[found.start():end]))
        at = end


def closes_before_opening(source: str) -> bool:
    """Whether ``source``'s code closes a brace it never opened: it continues a function whose head
    it does not have (the body after a declaration, then perhaps functions of its own).

    Example:
        >>> closes_before_opening("    x + 1\\n}\\n\\nfn g() -> i32 { 2 }")
        True
        >>> closes_before_opening('fn f(x: i32) -> i32 { let s = "}"; x + 1 }')
        False
    """
    depth = 0
    for char in code_only(source):
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth < 0:
                return True
    return False
