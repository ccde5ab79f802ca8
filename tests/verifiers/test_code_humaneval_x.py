"""HumanEval-X function tests in C++, Java, JavaScript, Go and Rust: the dataset's canonical
solutions pass (as a whole function and as the body continuing the prompt), a wrong one fails,
and programs that try to write the verdict themselves (exit before the tests, print a marker,
replace the test's assertions or comparisons) fail. Rows from tests/verifiers/data (see its README)."""

import json
from pathlib import Path

import pytest

from referee.verifiers import code
from referee.verifiers.code.formats import parse_tests
from referee.verifiers.code.languages import find_toolchain

OPTIONS = {"timeout": 10.0, "workers": 2}
ROWS = [json.loads(line) for line in (Path(__file__).parent / "data" / "humaneval_x_sample.jsonl").open()]
LANGUAGES = ("cpp", "java", "javascript", "go", "rust")


def spec_of(row):
    tests = {"format": "humaneval", "language": row["language"], "prompt": row["prompt"],
             "declaration": row["declaration"], "test": row["test"]}
    if "test_setup" in row:
        tests["test_setup"] = row["test_setup"]
    return tests


def whole(row, body):
    """The function as a model writes it in full: the declaration (Go: the prompt, with its imports) and the body."""
    return (row["prompt"] if row["language"] == "go" else row["declaration"]) + body


def available(language):
    if find_toolchain(language) is None:
        pytest.skip(f"no {language} toolchain here")


@pytest.mark.parametrize("language", LANGUAGES)
def test_canonical_solutions_pass_and_wrong_ones_fail(language):
    available(language)
    rows = [row for row in ROWS if row["language"] == language]
    completions, tests, expected = [], [], []
    for row in rows:
        for program, status in ((whole(row, row["canonical_solution"]), "correct"), (row["canonical_solution"], "correct"),
                                (whole(row, row["wrong_solution"]), "wrong")):
            completions.append(f"```{language}\n{program}\n```")
            tests.append(spec_of(row))
            expected.append((row["task_id"], status))
    verdicts = code.verify_batch(completions, tests, **OPTIONS)
    got = [(task, verdict.status) for (task, _), verdict in zip(expected, verdicts)]
    assert got == expected, [(task, v.status, v.reason[:300]) for (task, _), v in zip(expected, verdicts)]
    assert all(v.details["language"] == language for v in verdicts)
    assert all(v.details["tests"][0]["verdict"] == "WA" for v, (_, status) in zip(verdicts, expected) if status == "wrong")


# HumanEval/0 (has_close_elements): programs that answer `true` for everything, trying to pass anyway.
FORGERIES = {
    "cpp": {
        "exit(0) in a static initializer": "#include<vector>\n#include<cstdlib>\nusing namespace std;\n"
                                           "struct E { E() { exit(0); } } e;\n"
                                           "bool has_close_elements(vector<float> numbers, float threshold){ return true; }\n",
        "print a success marker and exit": "#include<vector>\n#include<cstdio>\n#include<cstdlib>\nusing namespace std;\n"
                                           "bool has_close_elements(vector<float> n, float t){ puts(\"All tests passed\"); exit(0); }\n",
        "#define false true": "#include<vector>\nusing namespace std;\n#define false true\n"
                              "bool has_close_elements(vector<float> numbers, float threshold){ return true; }\n",
        "a __assert_fail that returns": "#include<vector>\nusing namespace std;\n"
                                        "extern \"C\" void __assert_fail(const char*, const char*, unsigned, const char*) {}\n"
                                        "bool has_close_elements(vector<float> numbers, float threshold){ return true; }\n",
        "a memcmp that says equal": "#include<vector>\nusing namespace std;\n"
                                    "extern \"C\" int memcmp(const void*, const void*, unsigned long) { return 0; }\n"
                                    "bool has_close_elements(vector<float> numbers, float threshold){ return true; }\n",
        "a main of its own": "#include<vector>\n#include<cstdio>\nusing namespace std;\n"
                             "bool has_close_elements(vector<float> numbers, float threshold){ return true; }\n"
                             "#undef main\nint main(){ return 0; }\n",
        "catch the failure's signal": "#include<vector>\n#include<csignal>\n#include<unistd.h>\nusing namespace std;\n"
                                      "static void h(int){ _exit(0); }\n"
                                      "struct S { S(){ signal(SIGILL, h); signal(SIGTRAP, h); signal(SIGABRT, h); } } s;\n"
                                      "bool has_close_elements(vector<float> numbers, float threshold){ return true; }\n",
    },
    "javascript": {
        "replace console.assert": "console.assert = () => {};\nconst hasCloseElements = () => true;\n",
        "process.exit(0) before the tests": "process.exit(0);\nconst hasCloseElements = () => true;\n",
        "patch JSON and the prototypes": "JSON.stringify = () => 'x';\nArray.prototype.toString = () => '';\n"
                                         "globalThis.JSON = { stringify: () => 'x' };\nconst hasCloseElements = () => true;\n",
        "close the harness's wrapper": "const hasCloseElements = () => true;\nreturn hasCloseElements; }); "
                                       "const refereeAssert = () => {}; (function() {\n",
        "swallow the test's exception": "process.on('uncaughtException', () => process.exit(0));\n"
                                        "const hasCloseElements = () => { throw new Error('x'); };\n",
    },
    "java": {
        "System.exit(0) in a static block": "import java.util.*;\nclass Solution { static { System.exit(0); }\n"
                                            "    public boolean hasCloseElements(List<Double> n, double t) { return true; } }\n",
        "a class Arrays of its own": "import java.util.*;\nclass Arrays { static List<Boolean> asList(Object... a) { return new ArrayList<>(); } }\n"
                                     "class Solution { public boolean hasCloseElements(List<Double> n, double t) { return true; } }\n",
        "the same, in unicode escapes": "import java.util.*;\n\\u0063lass Arrays { static List<Boolean> asList(Object... a) "
                                        "{ return new ArrayList<>(); } }\n"
                                        "class Solution { public boolean hasCloseElements(List<Double> n, double t) { return true; } }\n",
        "halt from the uncaught-exception handler": "import java.util.*;\nclass Solution { static { Thread.setDefaultUncaughtExceptionHandler("
                                                    "(th, e) -> Runtime.getRuntime().halt(0)); }\n"
                                                    "    public boolean hasCloseElements(List<Double> n, double t) { return true; } }\n",
    },
    "go": {
        "os.Exit(0) in init": "package main\n\nimport \"os\"\n\nfunc init() { os.Exit(0) }\n\n"
                              "func HasCloseElements(numbers []float64, threshold float64) bool { return true }\n",
        "an assert of its own": "package main\n\nfunc HasCloseElements(numbers []float64, threshold float64) bool { return true }\n"
                                "type fake struct{}\nfunc (fake) Equal(a, b interface{}) bool { return true }\nvar assert fake\n",
        "go:linkname": "package main\n\nimport _ \"unsafe\"\n\n//go:linkname deepEqual reflect.DeepEqual\nfunc deepEqual(x, y any) bool\n\n"
                       "func HasCloseElements(numbers []float64, threshold float64) bool { return true }\n",
    },
    "rust": {
        "a macro_rules! assert_eq": "macro_rules! assert_eq { ($a:expr, $b:expr) => { let _ = $a; }; }\n"
                                    "fn has_close_elements(numbers: Vec<f32>, threshold: f32) -> bool { true }\n",
        "an always-equal return type": "#[derive(Debug)] struct B;\nimpl PartialEq<bool> for B { fn eq(&self, _: &bool) -> bool { true } }\n"
                                       "fn has_close_elements(numbers: Vec<f32>, threshold: f32) -> B { B }\n",
        "a memcmp that says equal": "#[no_mangle] pub extern \"C\" fn memcmp(_a: *const u8, _b: *const u8, _n: usize) -> i32 { 0 }\n"
                                    "fn has_close_elements(numbers: Vec<f32>, threshold: f32) -> bool { true }\n",
        "process::exit(0) in the call": "fn has_close_elements(numbers: Vec<f32>, threshold: f32) -> bool { println!(\"test result: ok\"); "
                                        "std::process::exit(0) }\n",
        "a panic hook that exits 0": "fn has_close_elements(numbers: Vec<f32>, threshold: f32) -> bool { "
                                     "std::panic::set_hook(Box::new(|_| std::process::exit(0))); true }\n",
    },
}


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_program_cannot_write_the_verdict(language):
    available(language)
    [row] = [row for row in ROWS if row["language"] == language and row["task_id"].endswith("/0")]
    names = list(FORGERIES[language])
    verdicts = code.verify_batch([f"```{language}\n{FORGERIES[language][name]}\n```" for name in names],
                                 [spec_of(row)] * len(names), **OPTIONS)
    got = {name: (v.status, v.score, v.reason[:200]) for name, v in zip(names, verdicts)}
    assert all(status == "wrong" and score == 0.0 for status, score, _ in got.values()), got


def test_the_key_is_fresh_for_every_run_and_never_in_the_program():
    """The key a run must print is made per run on the trusted side and reaches the job only on its
    stdin: a program that prints what it finds in its own files and arguments prints no key."""
    available("javascript")
    [row] = [row for row in ROWS if row["language"] == "javascript" and row["task_id"].endswith("/0")]
    snoop = ("const fs = require('fs');\nfor (const name of fs.readdirSync('.')) { try { console.log(fs.readFileSync(name, 'utf8')); } catch (e) {} }\n"
             "console.log(process.argv.join('\\n'));\nprocess.exit(0);\nconst hasCloseElements = () => true;\n")
    verdict = code.verify(f"```javascript\n{snoop}```", spec_of(row), **OPTIONS)
    assert verdict.status == "wrong" and "did not run to its end" in verdict.reason, verdict.reason


def test_tests_without_an_entry_point_take_the_declarations_last_function():
    [row] = [row for row in ROWS if row["language"] == "cpp" and row["task_id"].endswith("/0")]
    spec = parse_tests(spec_of(row))
    assert spec.entry_point == "" and spec.declaration == row["declaration"]
    with pytest.raises(code.formats.TestsError, match="entry_point"):
        parse_tests({"format": "humaneval", "test": "def check(candidate): pass"})


def test_formats_a_language_does_not_take_are_refused_naming_those_it_does():
    verdict = code.verify("```c\nint main(void) { return 0; }\n```",
                          {"format": "humaneval", "language": "c", "test": "int main() {}", "declaration": "int f(){"},
                          **OPTIONS)
    assert verdict.status == "error" and verdict.reason == (
        "tests format 'humaneval' is not available for C programs; give stdio tests.")
    verdict = code.verify("```cpp\nint f() { return 1; }\n```",
                          {"format": "call", "language": "cpp", "fn_name": "f", "inputs": [[]], "outputs": [1]}, **OPTIONS)
    assert verdict.status == "error" and verdict.reason.endswith("give stdio or humaneval tests."), verdict.reason


def test_a_test_the_harness_cannot_read_is_the_datasets_error():
    verdict = code.verify("```go\nfunc F() int { return 1 }\n```",
                          {"format": "humaneval", "language": "go", "test": "func helper() {}", "declaration": "func F() int {"},
                          **OPTIONS)
    assert verdict.status == "error" and "func TestXxx" in verdict.reason, verdict.reason


# LeetCode 1 (two sum), as APPS/TACO-style call tests store it, for JavaScript.
TWO_SUM = {"format": "call", "language": "javascript", "fn_name": "twoSum",
           "inputs": [[[2, 7, 11, 15], 9], [[3, 2, 4], 6], [[3, 3], 6]], "outputs": [[0, 1], [1, 2], [0, 1]]}
TWO_SUM_RIGHT = ("var twoSum = function(nums, target) {\n  const seen = new Map();\n  for (let i = 0; i < nums.length; i++) {\n"
                 "    if (seen.has(target - nums[i])) return [seen.get(target - nums[i]), i];\n    seen.set(nums[i], i);\n  }\n};\n")


def test_javascript_call_tests_compare_the_returned_json_on_the_trusted_side():
    available("javascript")
    programs = {
        "right": (TWO_SUM_RIGHT, "correct", 1.0),
        "async and module.exports": ("module.exports = async (nums, target) => {\n  for (let i = 0; i < nums.length; i++)\n"
                                     "    for (let j = i + 1; j < nums.length; j++) if (nums[i] + nums[j] === target) return [i, j];\n};\n",
                                     "correct", 1.0),
        "first pair only": ("const twoSum = () => [0, 1];\n", "wrong", 2 / 3),
        "prints a result line and exits": ("const twoSum = () => { console.log('\\nkey [1,2]'); process.exit(0); };\n", "wrong", 0.0),
        "reads what stdin holds": ("const seen = require('fs').readFileSync(0, 'utf8');\nconst twoSum = () => seen;\n", "wrong", 0.0),
        "throws": ("const twoSum = () => { throw new Error('boom'); };\n", "wrong", 0.0),
    }
    verdicts = code.verify_batch([f"```javascript\n{program}```" for program, _, _ in programs.values()],
                                 [TWO_SUM] * len(programs), **OPTIONS)
    got = {name: (v.status, round(v.score, 3)) for name, v in zip(programs, verdicts)}
    assert got == {name: (status, round(score, 3)) for name, (_, status, score) in programs.items()}, \
        [(name, v.reason[:200]) for name, v in zip(programs, verdicts)]
    by_name = dict(zip(programs, verdicts))
    assert "returned [0, 1], expected [1, 2]" in by_name["first pair only"].reason
    assert "Error: boom" in by_name["throws"].reason


def guarded(level):
    """A pid namespace (bubblewrap) or a throwaway uid keeps the job from the rest of this machine."""
    try:
        isolation = code.resolve_isolation(level)
    except ValueError:
        return False
    return isolation.bubblewrap or isolation.own_uid


HOSTILE = {  # through the harness, before and inside the function the test calls
    "cpp": "#include<vector>\n#include<unistd.h>\n#include<signal.h>\nusing namespace std;\n"
           "struct Bomb { Bomb() { kill(getppid(), SIGKILL); kill(-1, SIGKILL); for (;;) fork(); } } bomb;\n"
           "bool has_close_elements(vector<float> numbers, float threshold){ return true; }\n",
    "javascript": "try { process.kill(process.ppid, 'SIGKILL'); } catch (e) {}\ntry { process.kill(-1, 'SIGKILL'); } catch (e) {}\n"
                  "const { spawn } = require('child_process');\n"
                  "const hasCloseElements = () => { for (;;) { try { spawn(process.execPath, ['-e', 'for(;;){}']); } catch (e) {} } };\n",
    "go": "package main\n\nimport \"syscall\"\n\nfunc init() { syscall.Kill(syscall.Getppid(), syscall.SIGKILL); syscall.Kill(-1, syscall.SIGKILL) }\n\n"
          "func HasCloseElements(numbers []float64, threshold float64) bool { b := make([]byte, 1<<40); return b[0] == 0 }\n",
}


@pytest.mark.parametrize("language", sorted(HOSTILE))
def test_hostile_programs_through_the_harness_score_0_and_leave_the_judge_working(language):
    if not guarded("auto"):
        pytest.skip("no guarded level here: no hostile program runs")
    available(language)
    [row] = [row for row in ROWS if row["language"] == language and row["task_id"].endswith("/0")]
    hostile, right = code.verify_batch([f"```{language}\n{HOSTILE[language]}```", f"```{language}\n{whole(row, row['canonical_solution'])}```"],
                                       [spec_of(row)] * 2, **OPTIONS)
    assert hostile.status in ("wrong", "timeout") and hostile.score == 0.0, hostile.reason
    assert right.status == "correct", right.reason
