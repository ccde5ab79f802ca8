"""``referee serve``: rewards over HTTP in OpenRLHF's remote reward-model protocol.

``POST /get_reward`` takes ``{"query": [...], "prompts": [...], "labels": [...]}`` (what
OpenRLHF's ``--reward.remote_url http://host:port/get_reward`` sends) and answers
``{"rewards": [...], "scores": [...], "extra_logs": {...}}``; ``POST /run_code`` answers Sandbox
Fusion's requests for Python (verl's ``reward_model.sandbox_fusion.url`` can point at it, see
:mod:`referee.rewards.sandbox_fusion`); ``GET /health`` says whether the
server is up and how many recent samples were errors. One process serves every request with the
same verifier pools (``--workers`` worker processes each for maths and code), so parallel
requests share them instead of starting their own. Needs the ``serve`` extra (FastAPI, uvicorn).
"""

# No `from __future__ import annotations` here: FastAPI reads the endpoints' annotations at
# definition time, and `Request` is imported inside build_app().

import argparse
import asyncio
import json
import os
import sys
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from referee.rewards.adapters import AdapterOptions, ErrorRateExceeded, Scorer
from referee.rewards.routing import ConfigurationError
from referee.verifiers import VERIFIER_NAMES


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "serve",
        help="serve rewards over HTTP (OpenRLHF's remote reward-model protocol, Sandbox Fusion's /run_code)",
        description=(
            "Serve referee's verifiers over HTTP: POST /get_reward answers OpenRLHF's remote "
            "reward-model requests ({query, prompts, labels} -> {rewards, scores, extra_logs}), GET "
            "/health reports the error count, POST /run_code runs a Python program as Sandbox Fusion's "
            "/run_code does (for verl's sandbox_fusion.url). Labels hold the gold answer, or a JSON object such as "
            '{"data_source": "openai/gsm8k", "answer": "18"} or {"verifier": "code", "tests": {...}}. '
            "Exits 2 when the options are unusable or the serve extra is missing."
        ),
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1; 0.0.0.0 for all)")
    parser.add_argument("--port", type=int, default=5000, help="port to listen on (default 5000)")
    parser.add_argument("--workers", type=int, default=None,
                        help="verifier worker processes for maths and code, shared by all requests (default: one per core)")
    parser.add_argument("--default-verifier", choices=VERIFIER_NAMES, default=None,
                        help="the verifier for labels that name none (plain gold answers)")
    parser.add_argument("--fallback", type=float, default=0.0, help="the reward of an error sample (default 0.0)")
    parser.add_argument("--max-error-share", type=float, default=0.05,
                        help="share of errors in the window that makes every request fail with 503 (default 0.05)")
    parser.add_argument("--error-window", type=int, default=512, help="samples the error share is taken over (default 512)")
    parser.add_argument("--verifier-options", default=None, metavar="JSON",
                        help='each verifier\'s options as JSON, e.g. \'{"math": {"timeout": 5}}\'')
    parser.set_defaults(run=run)


def options_from_args(args: argparse.Namespace) -> AdapterOptions:
    """The adapter options the command line gives (``--workers`` goes to the maths and code pools).

    Example:
        >>> args = argparse.Namespace(default_verifier="gsm8k", fallback=0.0, max_error_share=0.05, error_window=512,
        ...                           workers=2, verifier_options='{"math": {"timeout": 5}}')
        >>> options_from_args(args).verifier_options
        {'math': {'workers': 2, 'timeout': 5}, 'code': {'workers': 2}}
    """
    per_verifier: dict[str, dict[str, Any]] = {}
    if args.workers is not None:
        if args.workers < 1:
            raise ConfigurationError(f"--workers {args.workers} must be at least 1.")
        per_verifier = {"math": {"workers": args.workers}, "code": {"workers": args.workers}}
    if args.verifier_options:
        try:
            given = json.loads(args.verifier_options)
        except ValueError as exc:
            raise ConfigurationError(f"--verifier-options is not JSON ({exc}).") from None
        if not isinstance(given, dict):
            raise ConfigurationError("--verifier-options must be a JSON object, e.g. '{\"math\": {\"timeout\": 5}}'.")
        for name, options in given.items():
            if not isinstance(options, dict):
                raise ConfigurationError(f"--verifier-options: the options of {name!r} must be a JSON object.")
            per_verifier.setdefault(name, {}).update(options)
    return AdapterOptions.parse({"default_verifier": args.default_verifier, "fallback": args.fallback,
                                 "max_error_share": args.max_error_share, "error_window": args.error_window,
                                 "verifier_options": per_verifier})


def build_app(scorer: Scorer) -> Any:
    """The FastAPI app: ``POST /get_reward``, ``POST /run_code`` and ``GET /health``, every request
    sharing ``scorer`` (and its code options for ``/run_code``).

    Example:
        >>> sorted(route.path for route in build_app(Scorer()).routes if route.path.startswith(("/get", "/run", "/health")))
        ['/get_reward', '/health', '/run_code']
    """
    from fastapi import FastAPI, Request
    from fastapi.responses import JSONResponse

    from referee.rewards.openrlhf import handle_get_reward_async
    from referee.rewards.sandbox_fusion import RunCodeRequestError, handle_run_code

    code_options = scorer.options.verifier_options.get("code", {})
    # Their own threads: programs waiting for a judge worker must not hold the threads /get_reward uses.
    run_code_threads = ThreadPoolExecutor(max_workers=2 * (code_options.get("workers") or os.cpu_count() or 1),
                                          thread_name_prefix="referee-run-code")
    app = FastAPI(title="referee", description="Verifiable rewards in OpenRLHF's remote reward-model protocol.")

    @app.post("/get_reward")
    async def get_reward(request: Request) -> JSONResponse:
        try:
            payload = await request.json()
        except ValueError:
            return JSONResponse({"error": "the body is not JSON; send {\"query\": [...], \"prompts\": [...], "
                                          "\"labels\": [...]}."}, status_code=400)
        try:
            return JSONResponse(await handle_get_reward_async(payload, scorer))
        except (ValueError, ConfigurationError) as exc:
            return JSONResponse({"error": str(exc)}, status_code=400)
        except ErrorRateExceeded as exc:
            return JSONResponse({"error": str(exc)}, status_code=503)

    @app.post("/run_code")
    async def run_code(request: Request) -> JSONResponse:
        try:
            payload = await request.json()
        except ValueError:
            return JSONResponse({"error": "the body is not JSON; send Sandbox Fusion's {\"code\": ..., "
                                          "\"language\": \"python\", \"stdin\": ...}."}, status_code=400)
        try:
            reply = await asyncio.get_running_loop().run_in_executor(run_code_threads, handle_run_code, payload,
                                                                     code_options)
        except RunCodeRequestError as exc:
            return JSONResponse({"error": str(exc)}, status_code=400)
        return JSONResponse(reply)

    @app.get("/health")
    async def health() -> JSONResponse:
        stats = scorer.breaker.stats()
        return JSONResponse({"status": "tripped" if stats["tripped"] else "ok", "errors": stats,
                             "verifiers": list(VERIFIER_NAMES)}, status_code=503 if stats["tripped"] else 200)

    return app


def run(args: argparse.Namespace) -> int:
    try:
        import uvicorn  # noqa: F401  (checked before anything starts)
        import fastapi  # noqa: F401
    except ImportError as exc:
        print(f"referee serve: {exc.name} is missing; install the serve extra: pip install 'referee[serve]'", file=sys.stderr)
        return 2
    try:
        scorer = Scorer(options_from_args(args), name="referee_serve")
    except ConfigurationError as exc:
        print(f"referee serve: {exc}", file=sys.stderr)
        return 2
    import uvicorn

    print(f"referee serve: POST http://{args.host}:{args.port}/get_reward (OpenRLHF: --reward.remote_url "
          f"http://{args.host}:{args.port}/get_reward); POST .../run_code (verl: "
          f"reward_model.sandbox_fusion.url=http://{args.host}:{args.port}/run_code)", file=sys.stderr, flush=True)
    uvicorn.run(build_app(scorer), host=args.host, port=args.port, log_level="warning")
    return 0
