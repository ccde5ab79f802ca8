"""Sandbox Fusion's ``POST /run_code``, answered by referee's sandbox (``referee serve``).

verl judges code with a Sandbox Fusion service when its config sets
``reward.sandbox_fusion.url`` (verl 0.7 and later; ``reward_model.sandbox_fusion.url`` in verl 0.6 and
earlier): it posts ``{"code", "language", "stdin", "run_timeout",
"memory_limit_MB", ...}`` and compares the reply's ``run_result.stdout`` with the expected output.
Pointing that URL at ``referee serve``'s ``/run_code`` runs those programs in referee's sandbox
(isolation, limits, cleanup) with no service to deploy. Sandbox Fusion's ``language`` names
``python``, ``cpp``, ``nodejs``, ``go``, ``java`` and ``rust`` are served (and ``c``, and any fence
tag referee reads: ``c++``, ``javascript``, ``golang``, ...), each where ``referee doctor`` finds its
toolchain; a compiled program is built first, and a compile error is a ``Failed`` reply with its
``compile_result``, as Sandbox Fusion gives it. A failure of the sandbox itself (a missing
toolchain included) is a ``SandboxError`` reply, never a program's failure.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from referee.verifiers.code import LANGUAGES, ProgramRun, language_of_tag, run_program

# Sandbox Fusion's names of the languages referee runs (any fence tag of them is taken too).
SANDBOX_FUSION_LANGUAGES = {"python": "python", "python3": "python", "cpp": "cpp", "nodejs": "javascript",
                            "go": "go", "java": "java", "rust": "rust"}
DEFAULT_RUN_TIMEOUT = 10.0
DEFAULT_MEMORY_MB = 1024
MAX_RUN_TIMEOUT = 300.0  # a request may not hold a judge worker longer
MAX_MEMORY_MB = 65536
# Options of the code verifier that also apply to a plain run (``--verifier-options '{"code": ...}'``).
RUN_OPTIONS = ("workers", "isolation", "allow_weak_isolation", "min_isolation", "tmp_mb", "max_output_bytes")


class RunCodeRequestError(ValueError):
    """A ``/run_code`` request referee cannot serve (the caller's to fix: HTTP 400).

    Example:
        >>> issubclass(RunCodeRequestError, ValueError)
        True
    """


def handle_run_code(payload: Any, code_options: Mapping[str, Any] | None = None, *,
                    max_run_timeout: float = MAX_RUN_TIMEOUT, max_memory_mb: int = MAX_MEMORY_MB) -> dict[str, Any]:
    """Run a Sandbox Fusion request's program and answer in Sandbox Fusion's reply shape.

    ``code_options`` are the code verifier's options (only those in :data:`RUN_OPTIONS`
    apply: ``workers``, the isolation options, ``tmp_mb`` and ``max_output_bytes``). ``max_run_timeout`` and ``max_memory_mb`` are
    the most a request may ask for (``referee serve --max-timeout`` / ``--max-memory-mb``).
    Raises :class:`RunCodeRequestError` for a request that is not one referee serves.

    Example:
        >>> reply = handle_run_code({"code": "print(int(input()) + 1)", "stdin": "41", "language": "python"})
        >>> reply["status"], reply["run_result"]["status"], reply["run_result"]["stdout"]
        ('Success', 'Finished', '42\\n')
        >>> handle_run_code({"code": "while True: pass", "language": "python", "run_timeout": 0.5})["run_result"]["status"]
        'TimeLimitExceeded'
        >>> handle_run_code({"code": "print(1)", "run_timeout": 60}, max_run_timeout=30)
        Traceback (most recent call last):
        ...
        referee.rewards.trainers.sandbox_fusion.RunCodeRequestError: 'run_timeout' must be a number of seconds in (0, 30], got 60.
    """
    request = _checked(payload, max_run_timeout, max_memory_mb)
    options = {key: value for key, value in (code_options or {}).items() if key in RUN_OPTIONS}
    run = run_program(request["code"], stdin=request["stdin"], timeout=request["run_timeout"],
                      memory_mb=request["memory_mb"], language=request["language"], **options)
    return run_code_reply(run)


def run_code_reply(run: ProgramRun) -> dict[str, Any]:
    """``run`` in Sandbox Fusion's reply shape: ``Success`` for a run that finished with code 0,
    ``Failed`` for the program's failures, ``SandboxError`` when the sandbox failed.

    Example:
        >>> run_code_reply(ProgramRun("finished", 1, "", "Traceback ...", 0.01, "exited with code 1"))["status"]
        'Failed'
        >>> reply = run_code_reply(ProgramRun("compile_error", None, "", "main.cpp:1:1: error: ...", 0.0, "compile error"))
        >>> reply["compile_result"]["return_code"], reply["run_result"]
        (1, None)
    """
    if run.ended == "error":
        return {"status": "SandboxError", "message": run.reason, "compile_result": None, "run_result": None,
                "executor_pod_name": None, "files": {}}
    if run.ended == "compile_error":
        return {"status": "Failed", "message": run.reason.splitlines()[0],
                "compile_result": {"status": "Finished", "execution_time": 0.0, "return_code": 1, "stdout": "",
                                   "stderr": run.stderr},
                "run_result": None, "executor_pod_name": None, "files": {}}
    status = {"finished": "Finished", "timeout": "TimeLimitExceeded"}.get(run.ended, "Error")
    return {
        "status": "Success" if run.ok else "Failed",
        "message": "" if run.ok else run.reason,
        "compile_result": None,
        "run_result": {"status": status, "execution_time": round(run.seconds, 4), "return_code": run.exit_code,
                       "stdout": run.stdout, "stderr": run.stderr},
        "executor_pod_name": None,
        "files": {},
    }


def _checked(payload: Any, max_run_timeout: float, max_memory_mb: int) -> dict[str, Any]:
    if not isinstance(payload, Mapping):
        raise RunCodeRequestError("the body must be a JSON object such as {\"code\": \"print(1)\", \"language\": \"python\"}.")
    code = payload.get("code")
    if not isinstance(code, str):
        raise RunCodeRequestError(f"'code' must be a string, got {type(code).__name__}.")
    named = payload.get("language", "python")
    language = SANDBOX_FUSION_LANGUAGES.get(named) or (language_of_tag(named) if isinstance(named, str) else None)
    if language is None:
        raise RunCodeRequestError(f"language {named!r} is not served; use one of "
                                  f"{', '.join(SANDBOX_FUSION_LANGUAGES)} (Sandbox Fusion's names) or {', '.join(LANGUAGES)}.")
    stdin = payload.get("stdin")
    if stdin is None:
        stdin = ""
    if not isinstance(stdin, str):
        raise RunCodeRequestError(f"'stdin' must be a string, got {type(stdin).__name__}.")
    for key in ("files", "fetch_files"):
        if payload.get(key):
            raise RunCodeRequestError(f"'{key}' is not supported: the program gets only its code and stdin.")
    run_timeout = payload.get("run_timeout")
    run_timeout = min(DEFAULT_RUN_TIMEOUT, max_run_timeout) if run_timeout is None else run_timeout
    if isinstance(run_timeout, bool) or not isinstance(run_timeout, (int, float)) or not (
            0 < run_timeout <= max_run_timeout and math.isfinite(run_timeout)):
        raise RunCodeRequestError(f"'run_timeout' must be a number of seconds in (0, {max_run_timeout:g}], "
                                  f"got {run_timeout!r}.")
    memory = payload.get("memory_limit_MB")
    memory = min(DEFAULT_MEMORY_MB, max_memory_mb) if memory is None else memory
    if isinstance(memory, bool) or not isinstance(memory, int) or not 1 <= memory <= max_memory_mb:
        raise RunCodeRequestError(f"'memory_limit_MB' must be an integer in [1, {max_memory_mb}], got {memory!r}.")
    return {"code": code, "stdin": stdin, "run_timeout": float(run_timeout), "memory_mb": memory, "language": language}
