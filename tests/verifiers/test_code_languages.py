"""Programs in the languages beyond Python: a right and a wrong solution per language (Codeforces-style
stdin problems, and MultiPL-E / HumanEval-X style function solutions read through a main), compile
errors, a missing toolchain, CPU-time and memory limits per problem, checkers, and the language
chosen by the tests dict or the completion's fence. At the level this machine gives (``auto``),
and the right solutions at every level it reaches."""

import os

import pytest
from hypothesis import given, strategies as st

from referee.rewards.policy import reward_of
from referee.verifiers import code
from referee.verifiers.code.choose_program import extract_program
from referee.verifiers.code import formats
from referee.verifiers.code.languages import LANGUAGES, find_toolchain, language_of_tag
from referee.verifiers.code.languages.base import Language, find_plain
from referee.verifiers.code.problem_limits import problem_limits

OPTIONS = {"timeout": 3.0, "workers": 1}

# Codeforces 1A "Theatre Square": n, m, a up to 1e9; the answer needs 64 bits, so the usual wrong
# solution (32-bit ints) passes the small test and overflows on the large one.
THEATRE = {"format": "stdio", "inputs": ["6 6 4\n", "1000000000 1000000000 1\n", "1 1 1\n"],
           "outputs": ["4\n", "1000000000000000000\n", "1\n"], "time_limit": 1.0, "memory_limit": 256}
THEATRE_RIGHT = {
    "cpp": "#include <bits/stdc++.h>\nusing namespace std;\nint main() {\n    long long n, m, a;\n    cin >> n >> m >> a;\n"
           "    cout << ((n + a - 1) / a) * ((m + a - 1) / a) << endl;\n}\n",
    "c": "#include <stdio.h>\nint main(void) {\n    long long n, m, a;\n    scanf(\"%lld %lld %lld\", &n, &m, &a);\n"
         "    printf(\"%lld\\n\", ((n + a - 1) / a) * ((m + a - 1) / a));\n    return 0;\n}\n",
    "java": "import java.util.*;\n\npublic class Main {\n    public static void main(String[] args) {\n"
            "        Scanner in = new Scanner(System.in);\n        long n = in.nextLong(), m = in.nextLong(), a = in.nextLong();\n"
            "        System.out.println(((n + a - 1) / a) * ((m + a - 1) / a));\n    }\n}\n",
    "javascript": "const [n, m, a] = require('fs').readFileSync(0, 'utf8').trim().split(/\\s+/).map(BigInt);\n"
                  "console.log(String(((n + a - 1n) / a) * ((m + a - 1n) / a)));\n",
    "rust": "use std::io::Read;\n\nfn main() {\n    let mut s = String::new();\n    std::io::stdin().read_to_string(&mut s).unwrap();\n"
            "    let v: Vec<u64> = s.split_whitespace().map(|x| x.parse().unwrap()).collect();\n"
            "    let (n, m, a) = (v[0], v[1], v[2]);\n    println!(\"{}\", ((n + a - 1) / a) * ((m + a - 1) / a));\n}\n",
    "go": "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tvar n, m, a int64\n\tfmt.Scan(&n, &m, &a)\n"
          "\tfmt.Println(((n + a - 1) / a) * ((m + a - 1) / a))\n}\n",
}
THEATRE_WRONG = {  # 32-bit arithmetic, as a first try often is (JavaScript: integer division by `| 0`)
    "cpp": "#include <iostream>\nint main() {\n    int n, m, a;\n    std::cin >> n >> m >> a;\n"
           "    std::cout << ((n + a - 1) / a) * ((m + a - 1) / a) << std::endl;\n}\n",
    "c": "#include <stdio.h>\nint main(void) {\n    int n, m, a;\n    scanf(\"%d %d %d\", &n, &m, &a);\n"
         "    printf(\"%d\\n\", ((n + a - 1) / a) * ((m + a - 1) / a));\n    return 0;\n}\n",
    "java": "import java.util.*;\n\npublic class Main {\n    public static void main(String[] args) {\n"
            "        Scanner in = new Scanner(System.in);\n        int n = in.nextInt(), m = in.nextInt(), a = in.nextInt();\n"
            "        System.out.println(((n + a - 1) / a) * ((m + a - 1) / a));\n    }\n}\n",
    "javascript": "const [n, m, a] = require('fs').readFileSync(0, 'utf8').trim().split(/\\s+/).map(Number);\n"
                  "console.log(((n + a - 1) / a | 0) * ((m + a - 1) / a | 0) | 0);\n",
    "rust": "use std::io::Read;\n\nfn main() {\n    let mut s = String::new();\n    std::io::stdin().read_to_string(&mut s).unwrap();\n"
            "    let v: Vec<i32> = s.split_whitespace().map(|x| x.parse().unwrap()).collect();\n"
            "    let (n, m, a) = (v[0], v[1], v[2]);\n    println!(\"{}\", ((n + a - 1) / a).wrapping_mul((m + a - 1) / a));\n}\n",
    "go": "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tvar n, m, a int32\n\tfmt.Scan(&n, &m, &a)\n"
          "\tfmt.Println(((n + a - 1) / a) * ((m + a - 1) / a))\n}\n",
}
# MultiPL-E / HumanEval-X shape: HumanEval/0 has_close_elements, the canonical solution's loop,
# read through a main from stdin (count, numbers, threshold).
CLOSE = {"format": "stdio", "inputs": ["6\n1.0 2.0 3.9 4.0 5.0 2.2\n0.3\n", "6\n1.0 2.0 3.9 4.0 5.0 2.2\n0.05\n",
                                       "5\n1.0 2.0 5.9 4.0 5.0\n0.95\n"], "outputs": ["true\n", "false\n", "true\n"]}
CLOSE_RIGHT = {
    "cpp": "#include <bits/stdc++.h>\nusing namespace std;\nbool has_close_elements(vector<float> numbers, float threshold){\n"
           "    int i,j;\n    for (i=0;i<numbers.size();i++)\n    for (j=i+1;j<numbers.size();j++)\n"
           "    if (abs(numbers[i]-numbers[j])<threshold)\n    return true;\n    return false;\n}\n"
           "int main() { int n; cin >> n; vector<float> v(n); for (auto &x : v) cin >> x; float t; cin >> t;\n"
           "    cout << (has_close_elements(v, t) ? \"true\" : \"false\") << endl; }\n",
    "javascript": "const hasCloseElements = (numbers, threshold) => {\n  for (let i = 0; i < numbers.length; i++) {\n"
                  "    for (let j = 0; j < numbers.length; j++) {\n      if (i != j) {\n"
                  "        let distance = Math.abs(numbers[i] - numbers[j]);\n        if (distance < threshold) {\n"
                  "          return true;\n        }\n      }\n    }\n  }\n  return false;\n}\n"
                  "const t = require('fs').readFileSync(0, 'utf8').trim().split(/\\s+/).map(Number);\n"
                  "console.log(String(hasCloseElements(t.slice(1, 1 + t[0]), t[1 + t[0]])));\n",
}
CLOSE_WRONG = {  # compares with <= on the absolute value of only neighbours: misses unsorted pairs
    "cpp": CLOSE_RIGHT["cpp"].replace("for (j=i+1;j<numbers.size();j++)", "for (j=i+1;j<i+2&&j<numbers.size();j++)"),
    "javascript": CLOSE_RIGHT["javascript"].replace("let j = 0; j < numbers.length; j++",
                                                    "let j = i + 1; j < numbers.length && j < i + 2; j++"),
}
AVAILABLE = [name for name in THEATRE_RIGHT if find_toolchain(name) is not None]


def fenced(language, program):
    return f"Here is my solution.\n```{language}\n{program}```\n"


@pytest.mark.parametrize("language", AVAILABLE)
def test_a_right_and_a_wrong_solution_per_language(language):
    right, wrong = code.verify_batch([fenced(language, THEATRE_RIGHT[language]), fenced(language, THEATRE_WRONG[language])],
                                     [THEATRE] * 2, **OPTIONS)
    assert right.status == "correct", right.reason
    assert [t["verdict"] for t in right.details["tests"]] == ["OK", "OK", "OK"]
    assert right.details["language"] == language and right.details["time_limit"] == 1.0
    assert wrong.status == "wrong" and 0 < wrong.score < 1, wrong.reason
    assert wrong.details["tests"][1]["verdict"] == "WA"


@pytest.mark.parametrize("language", sorted(CLOSE_RIGHT))
def test_function_solutions_of_a_multilingual_benchmark_read_through_a_main(language):
    tests = {**CLOSE, "language": language}
    right, wrong = code.verify_batch([CLOSE_RIGHT[language], CLOSE_WRONG[language]], [tests] * 2, **OPTIONS)
    assert right.status == "correct", right.reason
    assert wrong.status == "wrong" and wrong.details["tests"][2]["verdict"] == "WA", wrong.reason


@pytest.mark.parametrize("level", [level for level in code.LEVELS if level != "basic"])
def test_every_language_runs_at_every_level_this_machine_reaches(level):
    try:
        code.resolve_isolation(level)
    except ValueError:
        pytest.skip(f"{level} is not available here")
    verdicts = code.verify_batch([fenced(name, THEATRE_RIGHT[name]) for name in AVAILABLE], [THEATRE] * len(AVAILABLE),
                                 isolation=level, timeout=3.0, workers=1)
    if os.geteuid() == 0 and not code.resolve_isolation(level).own_uid:  # root's jobs: refused, never run
        assert all(v.status == "error" and "no process limit binds" in v.reason for v in verdicts)
        return
    assert [v.status for v in verdicts] == ["correct"] * len(AVAILABLE), [v.reason for v in verdicts]


COMPILE_ERRORS = {
    "cpp": ("int main() {\n    std::vector<int> v;\n}\n", "vector"),
    "c": ("int main(void) {\n    return undefined_name;\n}\n", "undefined_name"),
    "java": ("public class Main {\n    public static void main(String[] a) {\n        int x = \"s\";\n    }\n}\n",
             "incompatible types"),
    "javascript": ("function f( {\n", "SyntaxError"),
    "rust": ("fn main() {\n    let x: i32 = \"s\";\n}\n", "mismatched types"),
    "go": ("package main\n\nfunc main() {\n\tx := 1\n}\n", "not used"),  # Go 1.20 says 'declared and not used', 1.19 'declared but not used'
}


@pytest.mark.parametrize("language", [name for name in COMPILE_ERRORS if name in AVAILABLE])
def test_a_compile_error_scores_zero_with_the_compilers_first_lines(language):
    program, said = COMPILE_ERRORS[language]
    verdict = code.verify(fenced(language, program), THEATRE, **OPTIONS)
    assert verdict.status == "wrong" and verdict.score == 0.0
    assert {t["verdict"] for t in verdict.details["tests"]} == {"CE"}
    assert "compile error" in verdict.reason and said in verdict.reason, verdict.reason


def test_a_missing_toolchain_is_an_error_never_a_zero():
    go = find_toolchain("go")
    verdict = code.verify(fenced("go", THEATRE_RIGHT["go"]), THEATRE, **OPTIONS)
    if go is not None:
        assert verdict.status == "correct", verdict.reason
    else:
        assert verdict.status == "error" and "Go toolchain (go) is not installed" in verdict.reason
        assert reward_of(verdict) is None  # TRL leaves it out: never a silent 0


def test_a_language_whose_tool_is_missing_is_not_found():
    ghost = Language(name="ghost", title="Ghost", tags=(), source="main.g", tools=("no-such-compiler-here",),
                     compile=("{no-such-compiler-here}", "{source}"), run=("./main",))
    assert find_plain(ghost) is None


def test_cpu_time_decides_a_time_limit_and_a_wall_clock_guard_stops_a_sleeper():
    spin = "#include <cstdio>\nint main() { volatile unsigned long x = 0; for (;;) x++; }\n"
    sleep = "#include <unistd.h>\nint main() { sleep(100); return 0; }\n"
    busy_then_right = ("#include <cstdio>\nint main() { volatile double x = 0; for (long i = 0; i < 400000000L; i++) "
                       "x += i; long long n, m, a; scanf(\"%lld %lld %lld\", &n, &m, &a); "
                       "printf(\"%lld\\n\", ((n + a - 1) / a) * ((m + a - 1) / a)); }\n")
    tight = {**THEATRE, "inputs": THEATRE["inputs"][:1], "outputs": THEATRE["outputs"][:1], "time_limit": 0.5}
    loose = {**tight, "time_limit": 10.0}
    spun, slept, over, under = code.verify_batch([fenced("cpp", p) for p in (spin, sleep, busy_then_right, busy_then_right)],
                                                 [tight, tight, tight, loose], **OPTIONS)
    assert spun.details["tests"][0]["verdict"] == "TLE" and "CPU time" in spun.reason, spun.reason
    assert slept.details["tests"][0]["verdict"] == "TLE" and "wall-clock guard" in slept.reason, slept.reason
    assert over.details["tests"][0]["verdict"] == "TLE" and over.score == 0.0, over.reason
    assert under.status == "correct", under.reason
    assert under.details["tests"][0]["cpu_seconds"] > 0.0


def test_children_the_program_never_waits_for_count_in_its_cpu_time():
    """The work spread over children it does not wait for (the parent only blocks on a pipe) is still its CPU time."""
    spread = ("#include <stdio.h>\n#include <time.h>\n#include <unistd.h>\nint main(void) {\n    int done[2];\n"
              "    pipe(done);\n    for (int i = 0; i < 2; i++) {\n        if (fork() == 0) {\n"
              "            clock_t start = clock();\n            while (clock() - start < CLOCKS_PER_SEC * 6 / 10) { }\n"
              "            write(done[1], \"!\", 1);\n            for (;;) { }\n        }\n    }\n    char byte;\n"
              "    for (int i = 0; i < 2; i++) read(done[0], &byte, 1);\n    long long n, m, a;\n"
              "    scanf(\"%lld %lld %lld\", &n, &m, &a);\n"
              "    printf(\"%lld\\n\", ((n + a - 1) / a) * ((m + a - 1) / a));\n    return 0;\n}\n")
    tests = {**THEATRE, "inputs": THEATRE["inputs"][:1], "outputs": THEATRE["outputs"][:1], "time_limit": 1.0}
    verdict = code.verify(fenced("c", spread), tests, **OPTIONS)
    assert verdict.details["tests"][0]["verdict"] == "TLE" and "CPU time" in verdict.reason, verdict.reason
    assert verdict.details["tests"][0]["cpu_seconds"] > 1.0


MEMORY_HOGS = {
    "cpp": "#include <bits/stdc++.h>\nint main() { std::vector<long long> v(200000000, 1); std::cout << v[5] << std::endl; }\n",
    "java": "public class Main {\n    public static void main(String[] a) {\n        long[] v = new long[200000000];\n"
            "        System.out.println(v[5]);\n    }\n}\n",
    "rust": "fn main() {\n    let v = vec![1u64; 200_000_000];\n    println!(\"{}\", v[5]);\n}\n",
}


@pytest.mark.parametrize("language", [name for name in MEMORY_HOGS if name in AVAILABLE])
def test_memory_past_the_problems_limit_is_mle(language):
    tests = {**THEATRE, "memory_limit": 64}
    verdict = code.verify(fenced(language, MEMORY_HOGS[language]), tests, **OPTIONS)
    assert verdict.score == 0.0 and verdict.details["memory_limit_mb"] == 64
    assert {t["verdict"] for t in verdict.details["tests"]} == {"MLE"}, verdict.reason


def test_a_crash_and_a_nonzero_exit_are_runtime_errors():
    segfault = "int main() { volatile int *p = 0; *p = 1; return 0; }\n"
    exits = "#include <stdio.h>\nint main() { printf(\"4\\n\"); return 3; }\n"
    crashed, exited = code.verify_batch([fenced("c", segfault), fenced("c", exits)], [THEATRE] * 2, **OPTIONS)
    assert crashed.details["tests"][0]["verdict"] == "RE" and "SIGSEGV" in crashed.reason
    assert exited.details["tests"][0]["verdict"] == "RE" and "code 3" in exited.reason and exited.score == 0.0


def test_a_program_cannot_change_the_binary_the_next_test_runs():
    """The first run overwrites (or deletes) its own binary; every test gets a fresh copy from the judge."""
    vandal = ("#include <stdio.h>\n#include <unistd.h>\nint main(void) {\n    FILE *f = fopen(\"main\", \"w\");\n"
              "    if (f) { fputs(\"broken\", f); fclose(f); }\n    unlink(\"main\");\n    long long n, m, a;\n"
              "    scanf(\"%lld %lld %lld\", &n, &m, &a);\n    printf(\"%lld\\n\", ((n + a - 1) / a) * ((m + a - 1) / a));\n}\n")
    verdict = code.verify(fenced("c", vandal), THEATRE, **OPTIONS)
    assert verdict.status == "correct", verdict.reason


def test_the_compile_cache_builds_a_program_once():
    program = fenced("c", THEATRE_RIGHT["c"].replace("return 0;", "return 0; /* cache */"))
    first, again = (code.verify(program, THEATRE, **OPTIONS) for _ in range(2))
    assert first.details["build"] == "compiled" and again.details["build"] == "cached"
    assert again.status == "correct"


def test_float_answers_within_the_tolerance_the_tests_give():
    tests = {"format": "stdio", "language": "c", "inputs": ["1 3\n"], "outputs": ["0.333333333\n"], "abs_tol": 1e-6}
    close = "#include <stdio.h>\nint main() { double a, b; scanf(\"%lf %lf\", &a, &b); printf(\"%.7f\\n\", a / b); }\n"
    far = close.replace("%.7f", "%.3f")
    assert [v.status for v in code.verify_batch([close, far], [tests] * 2, **OPTIONS)] == ["correct", "wrong"]


# A problem with many right answers: print two positive integers that sum to n. The checker
# follows testlib's protocol (checker input output answer; exit 0 ok, 1 wrong answer).
SPLIT = {"format": "stdio", "language": "cpp", "inputs": ["10\n", "3\n"], "outputs": ["5 5\n", "1 2\n"]}
SPLIT_CHECKER = ("#include <cstdio>\nint main(int argc, char **argv) {\n    long long n, a, b;\n"
                 "    FILE *in = fopen(argv[1], \"r\"), *out = fopen(argv[2], \"r\");\n"
                 "    if (!in || fscanf(in, \"%lld\", &n) != 1) return 3;\n"
                 "    if (!out || fscanf(out, \"%lld %lld\", &a, &b) != 2) { fprintf(stderr, \"expected two numbers\\n\"); return 2; }\n"
                 "    if (a < 1 || b < 1 || a + b != n) { fprintf(stderr, \"%lld + %lld != %lld\\n\", a, b, n); return 1; }\n"
                 "    return 0;\n}\n")
SPLIT_ANY = "#include <cstdio>\nint main() { long long n; scanf(\"%lld\", &n); printf(\"%lld %lld\\n\", n - 1, 1LL); }\n"
SPLIT_BAD = "#include <cstdio>\nint main() { long long n; scanf(\"%lld\", &n); printf(\"%lld %lld\\n\", n, 1LL); }\n"
PY_SPLIT_CHECKER = ("import sys\nn = int(open(sys.argv[1]).read())\ntry:\n    a, b = map(int, open(sys.argv[2]).read().split())\n"
                    "except ValueError:\n    sys.exit(2)\nsys.exit(0 if a >= 1 and b >= 1 and a + b == n else 1)\n")


def test_a_testlib_style_checker_accepts_any_right_answer():
    with_checker = {**SPLIT, "checker": SPLIT_CHECKER}
    exact = code.verify(SPLIT_ANY, SPLIT, **OPTIONS)
    accepted, rejected = code.verify_batch([SPLIT_ANY, SPLIT_BAD], [with_checker] * 2, **OPTIONS)
    assert exact.status == "wrong"  # token comparison wants the answer file's pair
    assert accepted.status == "correct", accepted.reason
    assert rejected.status == "wrong" and "wrong answer" in rejected.reason and "!=" in rejected.reason, rejected.reason


def test_a_python_checker_and_a_python_program_judged_by_it():
    tests = {**SPLIT, "language": "python", "checker": PY_SPLIT_CHECKER, "checker_language": "python"}
    right = code.verify("```python\nn = int(input())\nprint(1, n - 1)\n```", tests, **OPTIONS)
    wrong = code.verify("```python\nn = int(input())\nprint(0, n)\n```", tests, **OPTIONS)
    assert right.status == "correct", right.reason
    assert wrong.status == "wrong" and wrong.details["tests"][0]["verdict"] == "WA"


def test_a_checker_that_fails_is_the_datasets_fault():
    broken = {**SPLIT, "checker": "int main() { return 3; }"}
    uncompilable = {**SPLIT, "checker": "int main() { return x; }"}
    failed, unbuilt = code.verify_batch([SPLIT_ANY, SPLIT_ANY], [broken, uncompilable], **OPTIONS)
    assert failed.status == "error" and "checker" in failed.reason
    assert unbuilt.status == "error" and "checker does not compile" in unbuilt.reason


def test_the_tests_dict_names_the_language_and_a_mismatch_is_the_programs_fault():
    tests = {**THEATRE, "language": "cpp"}
    mismatch = code.verify(fenced("python", "print(4)\n"), tests, **OPTIONS)
    unfenced = code.verify(THEATRE_RIGHT["cpp"], tests, **OPTIONS)
    assert mismatch.status == "wrong" and mismatch.score == 0.0
    assert mismatch.reason == "the tests ask for C++, but the completion answers in Python"
    assert unfenced.status == "correct", unfenced.reason


def test_an_unknown_language_or_a_function_format_is_a_dataset_error():
    unknown, functions = code.verify_batch(["int main() {}", fenced("cpp", "int main() {}")],
                                           [{**THEATRE, "language": "cobol"},
                                            {"format": "call", "language": "cpp", "fn_name": "f", "inputs": [[1]],
                                             "outputs": [2]}], **OPTIONS)
    assert unknown.status == "error" and "'cobol' is not a language" in unknown.reason
    assert functions.status == "error" and "stdio" in functions.reason


def test_every_language_module_registers_itself():
    assert {"cpp", "c", "java", "javascript", "rust", "go", "python"} <= set(LANGUAGES)
    for language in LANGUAGES.values():
        assert language_of_tag(language.name) == language.name
        assert all(language_of_tag(tag) == language.name for tag in language.tags)


@given(st.sampled_from(sorted({tag for lang in LANGUAGES.values() for tag in lang.tags})),
       st.text(alphabet=st.characters(blacklist_characters="`~"), max_size=40))
def test_the_fence_tag_decides_the_language_when_the_tests_name_none(tag, body):
    program, language, mismatch = extract_program(f"Answer:\n```{tag}\n{body}\n```\n")
    assert language == language_of_tag(tag) and mismatch is None
    if language != "python":
        assert program == f"{body}\n"


@pytest.mark.parametrize("tests, seconds, megabytes", [
    ({"time_limit": {"seconds": 2, "nanos": 0}, "memory_limit_bytes": 256 << 20}, 2.0, 256),  # CodeContests
    ({"time_limit": 1.5, "memory_limit": 512.0}, 1.5, 512),  # open-r1 codeforces
    ({"time_limit": "2 seconds", "memory_limit": "64 megabytes"}, 2.0, 64),  # Codeforces' statement words
    ({"time_limit": 500, "memory_limit": 256}, 60.0, 256),  # capped: a limit in the wrong unit
    ({}, 3.0, 1024),
])
def test_problem_limits_read_the_datasets_field_names(tests, seconds, megabytes):
    limits = problem_limits(tests, timeout=3.0, memory_mb=1024)
    assert (limits.time_seconds, limits.memory_mb) == (seconds, megabytes)


@pytest.mark.parametrize("bad", [{"time_limit": "soon"}, {"time_limit": -1}, {"memory_limit": True}])
def test_an_unreadable_limit_is_a_clear_dataset_error(bad):
    with pytest.raises(formats.TestsError, match="tests\\['(time|memory)_limit'\\]"):
        problem_limits(bad, timeout=3.0, memory_mb=1024)


def test_ioi_subtasks_score_the_points_of_the_groups_whose_every_test_passes():
    """The 32-bit Theatre Square passes the small tests only: the small subtask's points, not the large one's."""
    tests = {**THEATRE, "subtasks": [{"score": 30, "tests": [0, 2]}, {"score": 70, "tests": [0, 1, 2]}]}
    right, wrong = code.verify_batch([fenced("c", THEATRE_RIGHT["c"]), fenced("c", THEATRE_WRONG["c"])], [tests] * 2,
                                     **OPTIONS)
    assert right.status == "correct" and right.score == 1.0
    assert wrong.status == "wrong" and wrong.score == pytest.approx(0.3), wrong.reason
    assert wrong.details["subtasks"] == [{"score": 30.0, "won": True}, {"score": 70.0, "won": False}]
    unusable = code.verify(fenced("c", THEATRE_RIGHT["c"]), {**THEATRE, "subtasks": [{"score": 10, "tests": [9]}]},
                           **OPTIONS)
    assert unusable.status == "error" and "subtasks" in unusable.reason
