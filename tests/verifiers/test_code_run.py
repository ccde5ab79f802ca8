"""``run_program``: one run in the sandbox, reported as it ended, judging nothing."""

import pytest

from referee.verifiers.code.run import ProgramRun, run_program


@pytest.mark.parametrize("code, stdin, ended, exit_code, stdout, stderr", [
    ("print(int(input()) * 2)", "21\n", "finished", 0, "42\n", ""),
    ("import sys\nprint('partial')\nsys.exit(3)", "", "finished", 3, "partial\n", ""),
    ("import sys\nsys.exit('bad input')", "", "finished", 1, "", "bad input"),
    ("import sys\nsys.exit(True)", "", "finished", 1, "", ""),
    ("raise SystemExit", "", "finished", 0, "", ""),
    ("import sys\nsys.exit(2 ** 70)", "", "finished", 255, "", ""),
    ("import sys\nsys.exit(259)", "", "finished", 3, "", ""),
    ("raise KeyboardInterrupt", "", "finished", 130, "", "KeyboardInterrupt"),
    ("print('before')\n1 / 0", "", "finished", 1, "before\n", "ZeroDivisionError: division by zero"),
    ("import os\nprint(5, flush=True)\nos._exit(7)", "", "finished", 7, "5\n", ""),
    ("import sys\nprint('warn', file=sys.stderr)\nprint(sys.stdin.read().upper())", "abc", "finished", 0, "ABC\n", "warn"),
])
def test_how_a_program_ends_is_reported_as_python_would(code, stdin, ended, exit_code, stdout, stderr):
    run = run_program(code, stdin=stdin, timeout=5.0)
    assert (run.ended, run.exit_code, run.stdout) == (ended, exit_code, stdout), run
    assert stderr in run.stderr
    assert run.ok is (exit_code == 0)


@pytest.mark.parametrize("code, ended", [
    ("while True:\n    pass", "timeout"),
    ("import time\ntime.sleep(60)", "timeout"),
    ("x = bytearray(10 ** 10)", "memory"),
    ("while True:\n    print('a' * 10000)", "output"),
    ("import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)", "crashed"),
])
def test_a_program_that_overruns_a_limit_says_which(code, ended):
    run = run_program(code, timeout=1.0, memory_mb=256, max_output_bytes=1 << 16)
    assert run.ended == ended, run
    assert run.exit_code == (1 if ended == "memory" else None)  # a MemoryError ends Python with 1
    assert not run.ok


def test_a_timeout_ends_the_run_at_its_deadline():
    run = run_program("import time\nprint('started', flush=True)\ntime.sleep(60)", timeout=1.0)
    assert run.ended == "timeout" and "1 s" in run.reason and run.stdout == "started\n"


@pytest.mark.parametrize("options, message", [
    ({"timeout": 0}, "timeout=0"),
    ({"memory_mb": -1}, "memory_mb=-1"),
    ({"isolation": "none"}, "isolation"),
])
def test_unusable_options_are_an_error_not_a_run(options, message):
    run = run_program("print(1)", **options)
    assert run == ProgramRun("error", None, "", "", 0.0, run.reason) and message in run.reason


def test_code_that_is_not_text_is_an_error():
    assert run_program(b"print(1)").ended == "error"  # type: ignore[arg-type]


FORGED_DONE = ("import gc, socket, sys\nfrom referee.verifiers.sandbox.channel import send_message\n"
               "print({})\nsys.stdout.flush()\n"
               "for o in gc.get_objects():\n"
               "    if isinstance(o, socket.socket):\n"
               "        try:\n            send_message(o, ('done', (), 0))\n        except Exception:\n            pass\n")


def test_a_forged_malformed_report_is_no_report_not_a_judge_failure():
    """A program that finds its channel and sends ("done", (), 0) must not turn its wrong output
    into an error verdict (reward None): the report is ignored and its output decides."""
    from referee.verifiers import code

    verdict = code.verify(FORGED_DONE.format(41), {"format": "stdio", "inputs": [""], "outputs": ["42"]})
    assert verdict.status == "wrong", verdict
    assert code.verify(FORGED_DONE.format(42), {"format": "stdio", "inputs": [""], "outputs": ["42"]}).status == "correct"
    run = run_program(FORGED_DONE.format(42))
    assert run.ended == "finished" and run.stdout == "42\n", run
