"""HumanEval-X row shapes the judge once failed or refused right programs on (issue 38), each with a
right program that must pass and a wrong one that must not: a C++ prototype that names the
declaration's typedef, OpenSSL, a Go whole function that keeps the prompt's unused import block,
js-md5, a Rust doc comment that says "used", a Rust body that completes the declared function and
defines the one the test calls, the Rust crates, and compile errors whose reason starts at the cause."""

from pathlib import Path

import pytest

from referee.verifiers import code
from referee.verifiers.code import install_libraries, libraries
from referee.verifiers.code.formats import parse_tests
from referee.verifiers.code.humaneval_x import javascript, rust
from referee.verifiers.code.languages import find_toolchain
from referee.verifiers.code.libraries import LibraryMissing

OPTIONS = {"timeout": 10.0, "workers": 2}


def available(language):
    if find_toolchain(language) is None:
        pytest.skip(f"no {language} toolchain here")


def judge(language, programs, tests):
    verdicts = code.verify_batch([f"```{language}\n{program}\n```" for program in programs],
                                 [{"format": "humaneval", "language": language, **tests}] * len(programs), **OPTIONS)
    return [(v.status, v.reason[:300]) for v in verdicts], verdicts


CPP_TEST = "#undef NDEBUG\n#include<assert.h>\nint main(){\n    assert (total({1, 2, 3}) == 6);\n    assert (total({}) == 0);\n}\n"
CPP_TYPEDEF = "#include<stdio.h>\n#include<list>\ntypedef std::list<int> list_int;\nusing namespace std;\nint total(list_int values){\n"


def test_cpp_a_signature_that_names_the_declarations_typedef_compiles():
    available("cpp")
    body = "    int sum = 0;\n    for (int v : values) sum += v;\n    return sum;\n}\n"
    got, _ = judge("cpp", [CPP_TYPEDEF + body, CPP_TYPEDEF + "    return 6;\n}\n", body],
                   {"declaration": CPP_TYPEDEF, "prompt": CPP_TYPEDEF, "test": CPP_TEST})
    assert [status for status, _ in got] == ["correct", "wrong", "correct"], got


MD5_DECLARATION = "#include<stdio.h>\n#include<string>\n#include<openssl/md5.h>\nusing namespace std;\nstring string_to_md5(string text){\n"
MD5_TEST = ("#undef NDEBUG\n#include<assert.h>\nint main(){\n"
            "    assert (string_to_md5(\"Hello world\") == \"3e25960a79dbc69b674cd4ec67a72c62\");\n}\n")
MD5_BODY = ("    unsigned char md[16];\n    MD5((const unsigned char*)text.c_str(), text.size(), md);\n    char out[33];\n"
            "    for (int i = 0; i < 16; i++) sprintf(out + 2 * i, \"%02x\", md[i]);\n    return string(out);\n}\n")


def test_cpp_openssl_is_linked_for_a_declaration_that_includes_it():
    available("cpp")
    if not libraries.header_installed("openssl/md5.h"):
        pytest.skip("OpenSSL's headers are not installed here (libssl-dev)")
    got, _ = judge("cpp", [MD5_DECLARATION + MD5_BODY, MD5_DECLARATION + "    return text;\n}\n"],
                   {"declaration": MD5_DECLARATION, "prompt": MD5_DECLARATION, "test": MD5_TEST})
    assert [status for status, _ in got] == ["correct", "wrong"], got


def test_a_library_the_declaration_needs_and_this_machine_lacks_is_an_error_naming_it(monkeypatch):
    monkeypatch.setitem(libraries.SYSTEM_LIBRARIES, "nosuchlib/", libraries.SystemLibrary("NoSuchLib", "libnosuchlib-dev"))
    with pytest.raises(LibraryMissing, match=r"needs NoSuchLib \(nosuchlib/x\.h\), which is not installed.*libnosuchlib-dev"):
        libraries.link_flags("#include<nosuchlib/x.h>\nint f(){\n", "")
    assert libraries.link_flags("", "#include<nosuchlib/x.h>\n") == ()  # the program's own include: its compile error


def test_a_link_error_keeps_its_cause_in_the_reason():
    available("cpp")
    declaration = "#include<stdio.h>\nint twice(int x){\n"
    test = "#undef NDEBUG\n#include<assert.h>\nint main(){\n    assert (twice(2) == 4);\n}\n"
    got, _ = judge("cpp", ["int helper(int);\n" + declaration + "    return helper(x);\n}\n"],
                   {"declaration": declaration, "prompt": declaration, "test": test})
    [(status, reason)] = got
    assert status == "wrong" and "undefined reference" in reason.splitlines()[0], reason


GO_PROMPT = "import (\n    \"math\"\n    \"strings\"\n)\n\n// Upper returns s in capitals.\nfunc Upper(s string) string {\n"
GO_TEST = "func TestUpper(t *testing.T) {\n    assert := assert.New(t)\n    assert.Equal(\"AB\", Upper(\"ab\"))\n}\n"
GO_SETUP = "package main\n\nimport (\n    \"testing\"\n    \"github.com/stretchr/testify/assert\"\n)\n"


def test_go_imports_the_program_never_uses_are_dropped_and_said():
    available("go")
    tests = {"prompt": GO_PROMPT, "declaration": "\nfunc Upper(s string) string {\n", "test": GO_TEST, "test_setup": GO_SETUP}
    got, verdicts = judge("go", [GO_PROMPT + "    return strings.ToUpper(s)\n}\n", GO_PROMPT + "    return s\n}\n",
                                 "    return strings.ToUpper(s)\n}\n"], tests)
    assert [status for status, _ in got] == ["correct", "wrong", "correct"], got
    assert verdicts[0].details["dropped_imports"] == ["math"]
    assert "dropped_imports" not in verdicts[2].details  # the body alone: the prompt's imports were never its own


JS_DECLARATION = "\nconst stringToMd5 = (text) => {\n"
JS_TEST = "const t = () => {\n  console.assert(stringToMd5('Hello world') === '3e25960a79dbc69b674cd4ec67a72c62')\n}\nt()\n"
JS_RIGHT = JS_DECLARATION + "  var md5 = require('js-md5')\n  return md5(text)\n}\n"


def test_javascript_js_md5_is_given_when_the_judge_has_it():
    available("javascript")
    if libraries.missing_npm_packages(JS_RIGHT):
        pytest.skip("js-md5 was not given to the judge here (python -m referee.verifiers.code.install_libraries)")
    got, _ = judge("javascript", [JS_RIGHT, JS_DECLARATION + "  return require('js-md5')(text + ' ')\n}\n"],
                   {"declaration": JS_DECLARATION, "prompt": JS_DECLARATION, "test": JS_TEST})
    assert [status for status, _ in got] == ["correct", "wrong"], got


def test_javascript_a_missing_npm_package_is_an_error_naming_it(monkeypatch, tmp_path):
    monkeypatch.setenv("REFEREE_LIBRARIES", str(tmp_path))
    spec = parse_tests({"format": "humaneval", "language": "javascript", "declaration": JS_DECLARATION, "test": JS_TEST})
    with pytest.raises(LibraryMissing, match="needs the npm package js-md5, which the judge was not given"):
        javascript.assemble(JS_RIGHT, spec)
    javascript.assemble(JS_DECLARATION + "  return text\n}\n", spec)  # a program that needs none is assembled


RUST_DECLARATION = ("\nuse std::{slice::Iter, cmp::{max, self}, collections::{HashSet, HashMap}};\nuse rand::Rng;\n"
                    "use regex::Regex;\nuse md5;\n\nfn is_palindrome_10(s: &str) -> bool {\n")
RUST_TEST = ("\n#[cfg(test)]\nmod tests {\n    use super::*;\n\n    #[test]\n    fn test_make_palindrome() {\n"
             "        assert_eq!(make_palindrome(\"\"), \"\");\n        assert_eq!(make_palindrome(\"cat\"), \"catac\");\n"
             "        assert_eq!(make_palindrome(\"jerry\"), \"jerryrrej\");\n    }\n}\n")
RUST_BODY = ("    let r: String = s.chars().rev().collect();\n    r == s\n}\n\n"
             "/// The shortest palindrome that begins with s: the helper above is used on each suffix.\n"
             "fn make_palindrome(s: &str) -> String {\n    for i in 0..s.len() {\n"
             "        if is_palindrome_10(&s[i..]) {\n            let head: String = s[..i].chars().rev().collect();\n"
             "            return format!(\"{}{}\", s, head);\n        }\n    }\n    s.to_string()\n}\n")


def test_rust_a_body_that_completes_the_declaration_and_defines_more_keeps_it_and_comments_are_not_code():
    available("rust")
    tests = {"declaration": RUST_DECLARATION, "prompt": RUST_DECLARATION, "test": RUST_TEST}
    wrong = RUST_BODY.replace("format!(\"{}{}\", s, head)", "s.to_string()")
    string_says_it = RUST_BODY.replace("s.to_string()\n}\n", "let _note = \"#[no_mangle] is used elsewhere\";\n    s.to_string()\n}\n")
    used_in_code = RUST_BODY + "#[used]\nstatic KEEP: u8 = 0;\n"
    got, _ = judge("rust", [RUST_BODY, RUST_DECLARATION + RUST_BODY, wrong, string_says_it, used_in_code], tests)
    assert [status for status, _ in got] == ["correct", "correct", "wrong", "correct", "wrong"], got
    assert "exports or renames symbols" in got[4][1], got[4]


def test_rust_crates_are_given_or_their_absence_is_an_error_naming_the_crate(monkeypatch):
    available("rust")
    declaration = RUST_DECLARATION.replace("fn is_palindrome_10(s: &str) -> bool {\n", "fn count_words(s: &str) -> usize {\n")
    test = ("\n#[cfg(test)]\nmod tests {\n    use super::*;\n\n    #[test]\n    fn test_count_words() {\n"
            "        assert_eq!(count_words(\"a b  c\"), 3);\n    }\n}\n")
    body = "    Regex::new(r\"\\s+\").unwrap().split(s.trim()).count()\n}\n"
    tests = {"declaration": declaration, "prompt": declaration, "test": test}
    toolchain = find_toolchain("rust")
    if "regex" in libraries.built_crates(libraries.crates_folder(toolchain.version)):
        got, _ = judge("rust", [body, "    1\n}\n"], tests)
        assert [status for status, _ in got] == ["correct", "wrong"], got
    monkeypatch.setattr(rust, "built_crates", lambda folder: {})  # a judge given no crates
    spec = parse_tests({"format": "humaneval", "language": "rust", **tests})
    with pytest.raises(LibraryMissing, match="needs the Rust crate regex, which the judge was not given"):
        rust.assemble(body, spec)
    assert "use regex" not in rust.assemble("    s.split_whitespace().count()\n}\n", spec).main_text


def test_the_libraries_command_builds_nothing_without_sources(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("REFEREE_LIBRARIES", str(tmp_path))
    (tmp_path / "node_modules" / "js-md5").mkdir(parents=True)
    (tmp_path / "node_modules" / "js-md5" / "package.json").write_text("{}")
    assert install_libraries.main(registry=str(tmp_path / "no-registry")) == 0
    out = capsys.readouterr().out
    assert "js-md5 already in" in out and ("none of rand, regex, md5" in out or "no rustc" in out), out
    assert not any(Path(tmp_path).glob("rust-*"))


def test_a_javascript_crash_reason_names_the_error_not_nodes_version_line():
    available("javascript")
    got, _ = judge("javascript", [JS_DECLARATION + "  throw new TypeError('boom')\n}\n"],
                   {"declaration": JS_DECLARATION, "prompt": JS_DECLARATION, "test": JS_TEST})
    [(status, reason)] = got
    assert status == "wrong" and "TypeError: boom" in reason and "Node.js v" not in reason, reason


def test_cpp_the_tests_calls_reach_the_program_not_a_library_function_of_the_same_name():
    """CPP/23 tests `int strlen(string)` with `strlen("")`: C's strlen(const char*) matches better, so
    without the harness's forwarding function every program, however wrong, passed."""
    available("cpp")
    declaration = "#include<stdio.h>\n#include<string>\nusing namespace std;\nint strlen(string str){\n"
    test = ("#undef NDEBUG\n#include<assert.h>\nint main(){\n    assert (strlen(\"\") == 0);\n"
            "    assert (strlen(\"x\") == 1);\n    assert (strlen(\"asdasnakj\") == 9);\n}\n")
    got, _ = judge("cpp", [declaration + "    return str.length();\n}\n", declaration + "    return 0;\n}\n",
                           declaration + "    return 9;\n}\n"],
                   {"declaration": declaration, "prompt": declaration, "test": test})
    assert [status for status, _ in got] == ["correct", "wrong", "wrong"], got


JAVA_DECLARATION = "import java.util.*;\nimport java.lang.*;\n\nclass Solution {\n    public int oddSquares(List<Integer> lst) {\n"
JAVA_TEST = ("public class Main {\n    public static void main(String[] args) {\n        Solution s = new Solution();\n"
             "        if (s.oddSquares(Arrays.asList(5, 4)) != 25) {\n            throw new AssertionError();\n        }\n"
             "        assert s.oddSquares(Arrays.asList(1, 2, 3)) == 10;\n    }\n}\n")


def test_java_the_tests_assert_statements_are_checked():
    """Java/151 ends with `assert s.doubleTheDifference(lst) == odd_sum;`, the only check a program that skips
    1 fails: plain `java` runs with assertions off, so that wrong program passed."""
    available("java")
    body = "        return lst.stream().filter(p -> p > {low} && p % 2 != 0).map(p -> p * p).reduce(0, Integer::sum);\n    }}\n}}\n"
    program_asserts = body.format(low=0).replace("        return", "        assert lst.size() > 5;\n        return", 1)
    got, _ = judge("java", [body.format(low=0), body.format(low=1), program_asserts],
                   {"declaration": JAVA_DECLARATION, "prompt": JAVA_DECLARATION, "test": JAVA_TEST})
    assert [status for status, _ in got] == ["correct", "wrong", "correct"], got
