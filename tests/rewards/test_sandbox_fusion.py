"""Sandbox Fusion's /run_code shapes, answered as verl's sandbox_fusion client reads them."""

import pytest

from referee.rewards.trainers.sandbox_fusion import RunCodeRequestError, handle_run_code, run_code_reply
from referee.verifiers.code.run import ProgramRun


def verl_request(code, stdin, run_timeout=5, memory_limit_mb=1024, language="python"):
    """The body verl.utils.reward_score.sandbox_fusion.utils.call_sandbox_api posts."""
    return {"compile_timeout": run_timeout, "run_timeout": run_timeout, "code": code, "stdin": stdin,
            "memory_limit_MB": memory_limit_mb, "language": language, "files": {}, "fetch_files": []}


def verl_status(reply, expected_output):
    """verl's check_correctness: True, False, or its error codes (-1 sandbox, -2 runtime, -3 timeout)."""
    if reply["status"] == "SandboxError":
        return -1
    run = reply["run_result"]
    if reply["status"] == "Failed":
        compiled = reply["compile_result"]
        if run is None and compiled and compiled["status"] == "Finished" and compiled["return_code"] != 0:
            return -4
        if run["status"] == "TimeLimitExceeded":
            return -3
        if run["status"] == "Error" or (run["status"] == "Finished" and run["return_code"] != 0):
            return -2
        return -1
    return run["stdout"].rstrip("\n") == expected_output.rstrip("\n")


ADDER = "a, b = map(int, input().split())\nprint(a + b)"


@pytest.mark.parametrize("code, stdin, expected, status", [
    (ADDER, "1 2\n", "3\n", True),
    (ADDER, "1 2\n", "4\n", False),
    ("import sys\nprint(3)\nsys.exit(1)", "", "3", -2),
    ("print(1 / 0)", "", "", -2),
    ("while True:\n    pass", "", "", -3),
    ("x = bytearray(10 ** 10)", "", "", -2),
])
def test_verls_client_reads_each_outcome(code, stdin, expected, status):
    reply = handle_run_code(verl_request(code, stdin, run_timeout=1, memory_limit_mb=256))
    assert verl_status(reply, expected) == status, reply
    assert reply["compile_result"] is None and reply["files"] == {}


def test_a_failed_sandbox_is_a_sandbox_error_never_the_programs_failure():
    reply = handle_run_code(verl_request("print(1)", ""), {"isolation": "no-such-level"})
    assert reply["status"] == "SandboxError" and reply["run_result"] is None and "isolation" in reply["message"]
    assert verl_status(reply, "1") == -1


def test_only_the_code_verifiers_run_options_apply():
    reply = handle_run_code(verl_request("print('x' * 5000)", ""), {"max_output_bytes": 1000, "timeout": 0.001,
                                                                      "abs_tol": 1.0})
    assert reply["run_result"]["status"] == "Error" and "1000 bytes" in reply["message"]


def test_the_reply_keeps_sandbox_fusions_keys():
    reply = run_code_reply(ProgramRun("finished", 0, "ok\n", "", 0.25, "exited with code 0"))
    assert reply == {"status": "Success", "message": "", "compile_result": None,
                     "run_result": {"status": "Finished", "execution_time": 0.25, "return_code": 0, "stdout": "ok\n",
                                    "stderr": ""},
                     "executor_pod_name": None, "files": {}}


@pytest.mark.parametrize("payload, message", [
    ("print(1)", "JSON object"),
    ({"language": "python"}, "'code' must be a string"),
    ({"code": "print(1)", "language": "cobol"}, "not served; use one of python, python3, cpp, nodejs"),
    ({"code": "print(1)", "stdin": 5}, "'stdin' must be a string"),
    ({"code": "print(1)", "files": {"a.txt": "aGk="}}, "'files' is not supported"),
    ({"code": "print(1)", "run_timeout": -1}, "'run_timeout'"),
    ({"code": "print(1)", "run_timeout": float("inf")}, "'run_timeout'"),
    ({"code": "print(1)", "run_timeout": 1e9}, "'run_timeout'"),
    ({"code": "print(1)", "memory_limit_MB": 10 ** 7}, "'memory_limit_MB'"),
    ({"code": "print(1)", "memory_limit_MB": 1.5}, "'memory_limit_MB'"),
])
def test_requests_referee_cannot_serve_are_refused_with_the_reason(payload, message):
    with pytest.raises(RunCodeRequestError, match=message):
        handle_run_code(payload)


# An adder in each language Sandbox Fusion names (verl's language field), and one that does not compile.
ADDERS = {
    "cpp": "#include <iostream>\nint main() { long a, b; std::cin >> a >> b; std::cout << a + b << std::endl; }\n",
    "nodejs": "const [a, b] = require('fs').readFileSync(0, 'utf8').trim().split(/\\s+/).map(Number);\nconsole.log(a + b);\n",
    "go": "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tvar a, b int\n\tfmt.Scan(&a, &b)\n\tfmt.Println(a + b)\n}\n",
    "java": "import java.util.*;\n\npublic class Main {\n    public static void main(String[] args) {\n"
            "        Scanner in = new Scanner(System.in);\n        System.out.println(in.nextLong() + in.nextLong());\n    }\n}\n",
    "rust": "use std::io::Read;\nfn main() {\n    let mut s = String::new();\n    std::io::stdin().read_to_string(&mut s).unwrap();\n"
            "    let v: Vec<i64> = s.split_whitespace().map(|x| x.parse().unwrap()).collect();\n    println!(\"{}\", v[0] + v[1]);\n}\n",
}


@pytest.mark.parametrize("language", sorted(ADDERS))
def test_sandbox_fusions_languages_are_compiled_and_run(language):
    from referee.rewards.trainers.sandbox_fusion import SANDBOX_FUSION_LANGUAGES
    from referee.verifiers.code import find_toolchain
    if find_toolchain(SANDBOX_FUSION_LANGUAGES[language]) is None:
        pytest.skip(f"no toolchain for {language} here")
    reply = handle_run_code(verl_request(ADDERS[language], "20 22\n", language=language))
    if reply["status"] == "SandboxError" and "not run at isolation" in reply["message"]:
        pytest.skip("compiled programs are not run as root at this level")
    assert verl_status(reply, "42") is True, reply
    broken = handle_run_code(verl_request(ADDERS[language].replace("(", "", 1), "20 22\n", language=language))
    assert verl_status(broken, "42") in (-4, -2), broken  # node finds syntax errors when it runs
