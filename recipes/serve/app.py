"""``referee serve``'s endpoints: ``POST /get_reward``, ``POST /run_code`` and ``GET /health``.

Every request shares one :class:`~referee.rewards.trainers.adapters.Scorer` (its verifier pools start
once). The guards of :mod:`.guards` stand in front: the bearer token (when the server has one)
and the body size limit, both answered before an endpoint reads anything.
"""

# No `from __future__ import annotations` here: FastAPI reads the endpoints' annotations at
# definition time, and `Request` is imported inside build_app().

import asyncio
import logging
import os
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from referee.rewards.trainers.adapters import Scorer
from referee.verifiers import VERIFIER_NAMES

from .guards import BodyLimit, TokenGuard
from .judging import ErrorWindow, Reply, judge_request
from .limits import ServeLimits

# Each refused /get_reward request's sentence goes here (`referee serve` prints it on stderr): OpenRLHF's
# client retries a refusal and then trains on without the reward, showing the reason nowhere.
logger = logging.getLogger("referee.serve")

_NESTED = "the body is nested too deeply to read; send flat JSON (lists of strings, label objects of plain values)."


class UnreadableBody(ValueError):
    """A request body that is not JSON, or is nested too deeply to read (HTTP 400).

    Example:
        >>> str(UnreadableBody("the body is not JSON"))
        'the body is not JSON'
    """


def build_app(scorer: Scorer, limits: ServeLimits | None = None) -> Any:
    """The ASGI app: the FastAPI endpoints behind the token guard (if ``limits.token``) and the body limit.

    Example:
        >>> sorted(route.path for route in build_app(Scorer()).app.routes if route.path.startswith(("/get", "/run", "/health")))
        ['/get_reward', '/health', '/run_code']
    """
    from fastapi import FastAPI, Request
    from fastapi.responses import JSONResponse

    from referee.rewards.trainers.sandbox_fusion import RunCodeRequestError, handle_run_code

    limits = limits or ServeLimits()
    code_options = scorer.options.verifier_options.get("code", {})
    errors = ErrorWindow(scorer.options.error_window)
    judge_threads = ThreadPoolExecutor(max_workers=32, thread_name_prefix="referee-get-reward")
    # Their own threads: programs waiting for a judge worker must not hold the threads /get_reward uses.
    run_code_threads = ThreadPoolExecutor(max_workers=limits.max_programs, thread_name_prefix="referee-run-code")
    in_flight = {"programs": 0}  # changed on the event loop only
    app = FastAPI(title="referee", description="Verifiable rewards in OpenRLHF's remote reward-model protocol.")

    async def read_json(request: Request, shape: str) -> Any:
        """The body as JSON; one that cannot be read raises :class:`UnreadableBody` saying why."""
        try:
            return await request.json()
        except RecursionError:
            raise UnreadableBody(_NESTED) from None
        except ValueError:
            raise UnreadableBody(f"the body is not JSON; send {shape}.") from None

    @app.post("/get_reward")
    async def get_reward(request: Request) -> JSONResponse:
        try:
            payload = await read_json(request, '{"query": [...], "prompts": [...], "labels": [...]}')
            reply = await asyncio.get_running_loop().run_in_executor(
                judge_threads, judge_request, payload, scorer, limits.max_completion_chars, errors)
        except UnreadableBody as exc:
            reply = Reply(400, {"error": str(exc)})
        except RecursionError:
            reply = Reply(400, {"error": _NESTED})
        errors.outcome(reply)
        if reply.status != 200:
            logger.warning("POST /get_reward answered %d: %s", reply.status, reply.body["error"])
        return JSONResponse(reply.body, status_code=reply.status)

    @app.post("/run_code")
    async def run_code(request: Request) -> JSONResponse:
        try:
            payload = await read_json(request, 'Sandbox Fusion\'s {"code": ..., "language": "python", "stdin": ...}')
        except UnreadableBody as exc:
            return JSONResponse({"error": str(exc)}, status_code=400)
        code = payload.get("code") if isinstance(payload, dict) else None
        if isinstance(code, str) and len(code) > limits.max_completion_chars:
            return JSONResponse({"error": f"'code' is {len(code)} characters long, over this server's "
                                          f"--max-completion-chars={limits.max_completion_chars}."}, status_code=400)
        if in_flight["programs"] >= limits.max_programs:
            return JSONResponse({"error": f"{in_flight['programs']} programs are running, this server's "
                                          "--max-programs; retry later."}, status_code=429, headers={"Retry-After": "1"})
        in_flight["programs"] += 1
        try:
            reply = await asyncio.get_running_loop().run_in_executor(
                run_code_threads, lambda: handle_run_code(payload, code_options, max_run_timeout=limits.max_timeout,
                                                          max_memory_mb=limits.max_memory_mb))
        except RunCodeRequestError as exc:
            return JSONResponse({"error": str(exc)}, status_code=400)
        finally:
            in_flight["programs"] -= 1
        return JSONResponse(reply)

    @app.get("/health")
    async def health() -> JSONResponse:
        breaker = errors.breaker()
        return JSONResponse({"status": "tripped" if breaker["tripped"] else "ok", "errors": errors.stats(),
                             "breaker": breaker, "refused": errors.refused(), "verifiers": list(VERIFIER_NAMES)})

    guarded: Any = BodyLimit(app, limits.max_body_bytes)
    if limits.token:
        guarded = TokenGuard(guarded, limits.token)
    return guarded


def default_max_programs(code_options: dict[str, Any]) -> int:
    """Programs ``/run_code`` runs at once by default: two per code worker (one running, one waiting).

    Example:
        >>> default_max_programs({"workers": 3})
        6
    """
    return 2 * (code_options.get("workers") or os.cpu_count() or 1)
