"""``referee serve``: rewards over HTTP in OpenRLHF's remote reward-model protocol.

``POST /get_reward`` takes ``{"query": [...], "prompts": [...], "labels": [...]}`` (what
OpenRLHF's ``--reward.remote_url http://host:port/get_reward`` sends) and answers
``{"rewards": [...], "scores": [...], "extra_logs": {...}}``; ``POST /run_code`` answers Sandbox
Fusion's requests (verl 0.7+'s ``reward.sandbox_fusion.url``, ``reward_model.sandbox_fusion.url`` in
verl 0.6 and earlier, can point at it, see
:mod:`referee.rewards.trainers.sandbox_fusion`); ``GET /health`` says whether the
server is up, how many recent samples were errors, whether the last request tripped the breaker
and why, and the last refusal; each refusal's sentence is printed on stderr too. One process serves every request with the
same verifier pools (``--workers`` worker processes each for maths and code), so parallel
requests share them instead of starting their own. Needs the ``serve`` extra (FastAPI, uvicorn).
"""

from __future__ import annotations

import argparse
import errno
import json
import logging
import math
import os
import socket
import sys
from typing import Any

from referee.recipes.serve.limits import TOKEN_ENV, ServeLimits, is_loopback
from referee.rewards.trainers.adapters import AdapterOptions, Scorer
from referee.rewards.trainers.routing import OPENRLHF_FIELDS, ConfigurationError
from referee.verifiers import VERIFIER_NAMES


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "serve",
        help="serve rewards over HTTP (OpenRLHF's remote reward-model protocol, Sandbox Fusion's /run_code)",
        description=(
            "Serve referee's verifiers over HTTP: POST /get_reward answers OpenRLHF's remote "
            "reward-model requests ({query, prompts, labels} -> {rewards, scores, extra_logs}), GET "
            "/health reports the recent error count, a tripped breaker and the last refusal (each refusal's sentence is "
            "also printed on stderr), POST /run_code runs a program (python, cpp, nodejs, go, java, "
            "rust) as Sandbox Fusion's /run_code does (for verl's sandbox_fusion.url). Labels hold the gold answer, or a JSON object such as "
            '{"data_source": "openai/gsm8k", "answer": "18"} or {"verifier": "code", "tests": {...}}. '
            f"Every endpoint but /health needs the bearer token when one is set (--token, or {TOKEN_ENV}); "
            "an address other than loopback is refused without one. "
            "Exits 2 when the options are unusable, the port is taken or the serve extra is missing."
        ),
    )
    defaults = ServeLimits()
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to listen on (default 127.0.0.1; any other than loopback needs a token)")
    parser.add_argument("--port", type=int, default=5000, help="port to listen on, 0 to 65535 (default 5000; 0: any free one)")
    parser.add_argument("--token", default=None,
                        help=f"the bearer token clients must send (Authorization: Bearer ..., or ?token=... in the URL "
                             f"for clients that send no headers); default: ${TOKEN_ENV}. "
                             "Prefer the environment variable: a command line is visible to every local user")
    parser.add_argument("--workers", type=int, default=None,
                        help="verifier worker processes for maths and code, shared by all requests (default: one per core)")
    parser.add_argument("--default-verifier", choices=VERIFIER_NAMES, default=None,
                        help="the verifier for labels that name neither a verifier nor a data_source (plain gold "
                             "answers); a label's unknown data_source is refused, never sent here")
    parser.add_argument("--data-source", action="append", default=[], metavar="NAME=VERIFIER",
                        help="judge labels of data_source NAME with VERIFIER (repeat it; NAME '*': every data_source "
                             "referee does not know), e.g. --data-source my/set=math")
    parser.add_argument("--fallback", type=float, default=0.0, help="the reward of an error sample (default 0.0)")
    parser.add_argument("--max-error-share", type=float, default=0.05,
                        help="share of a request's samples that may be referee errors; past it that request fails "
                             "with 503 (default 0.05)")
    parser.add_argument("--error-window", type=int, default=512,
                        help="recent samples /health counts errors over (default 512)")
    parser.add_argument("--verifier-options", default=None, metavar="JSON",
                        help='each verifier\'s options as JSON, e.g. \'{"math": {"timeout": 5}}\'')
    parser.add_argument("--max-body-mb", type=float, default=defaults.max_body_bytes / 2 ** 20,
                        help=f"largest request body in MiB, refused with 413 before it is read (default {defaults.max_body_bytes // 2 ** 20})")
    parser.add_argument("--max-completion-chars", type=int, default=defaults.max_completion_chars,
                        help="longest query (prompt + response) judged; a longer one scores 0 as a timeout, unread "
                             f"(default {defaults.max_completion_chars:,})")
    parser.add_argument("--max-memory-mb", type=int, default=defaults.max_memory_mb,
                        help=f"most memory a /run_code request may ask for (default {defaults.max_memory_mb})")
    parser.add_argument("--max-timeout", type=float, default=defaults.max_timeout,
                        help=f"most seconds a /run_code request may ask for (default {defaults.max_timeout:g})")
    parser.add_argument("--max-programs", type=int, default=None,
                        help="/run_code programs at once; one more gets 429 (default: two per code worker)")
    parser.add_argument("--max-connections", type=int, default=defaults.max_connections,
                        help=f"connections served at once; beyond it requests get 503 (default {defaults.max_connections})")
    parser.add_argument("--request-timeout", type=float, default=defaults.request_timeout,
                        help="seconds a connection has to send a whole request (headers and body) before it is "
                             f"closed (default {defaults.request_timeout:g})")
    parser.add_argument("--idle-timeout", type=float, default=defaults.idle_timeout,
                        help=f"seconds an idle keep-alive connection stays open (default {defaults.idle_timeout:g})")
    parser.set_defaults(run=run)


def options_from_args(args: argparse.Namespace) -> AdapterOptions:
    """The adapter options the command line gives (``--workers`` goes to the maths and code pools).

    Example:
        >>> args = build_example_args(default_verifier="gsm8k", workers=2, verifier_options='{"math": {"timeout": 5}}',
        ...                           data_source=["my/set=math"])
        >>> options_from_args(args).verifier_options, options_from_args(args).data_sources
        ({'math': {'workers': 2, 'timeout': 5}, 'code': {'workers': 2}}, {'my/set': 'math'})
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
    sources = {}
    for given in args.data_source:
        name, sep, verifier = given.rpartition("=")
        if not sep or not name:
            raise ConfigurationError(f"--data-source {given!r} must be NAME=VERIFIER, e.g. my/set=math.")
        sources[name] = verifier
    return AdapterOptions.parse({"default_verifier": args.default_verifier, "data_sources": sources,
                                 "fallback": args.fallback,
                                 "max_error_share": args.max_error_share, "error_window": args.error_window,
                                 "verifier_options": per_verifier})


def limits_from_args(args: argparse.Namespace, code_workers: int | None = None) -> ServeLimits:
    """The server's limits the command line gives (the token from ``--token`` or the environment).

    Example:
        >>> args = build_example_args(max_timeout=30.0)
        >>> limits_from_args(args, code_workers=2).max_timeout, limits_from_args(args, code_workers=2).max_programs
        (30.0, 4)
    """
    token = args.token if args.token is not None else os.environ.get(TOKEN_ENV) or None
    if token is not None and (not token.strip() or token != token.strip()):
        raise ConfigurationError(f"the token ({'--token' if args.token is not None else TOKEN_ENV}) is empty or "
                                 "has spaces around it; use a long random string, e.g. from `openssl rand -hex 32`.")
    positive = {"--max-body-mb": args.max_body_mb, "--max-completion-chars": args.max_completion_chars,
                "--max-memory-mb": args.max_memory_mb, "--max-timeout": args.max_timeout,
                "--max-connections": args.max_connections, "--request-timeout": args.request_timeout,
                "--idle-timeout": args.idle_timeout}
    if args.max_programs is not None:
        positive["--max-programs"] = args.max_programs
    for flag, value in positive.items():
        if not (math.isfinite(value) and value > 0):
            raise ConfigurationError(f"{flag} {value} must be a positive number.")
    if args.max_timeout > 86400:  # a timer longer than that is a mistake, and past ~1e9 s no clock holds it
        raise ConfigurationError(f"--max-timeout {args.max_timeout:g} is over a day; give seconds, e.g. 60.")
    max_programs = args.max_programs if args.max_programs is not None else 2 * (code_workers or os.cpu_count() or 1)
    return ServeLimits(token=token, max_body_bytes=int(args.max_body_mb * 2 ** 20),
                       max_completion_chars=args.max_completion_chars, max_memory_mb=args.max_memory_mb,
                       max_timeout=args.max_timeout, max_programs=max_programs, request_timeout=args.request_timeout,
                       idle_timeout=args.idle_timeout, max_connections=args.max_connections)


def build_example_args(**overrides: Any) -> argparse.Namespace:
    """``referee serve``'s arguments with their defaults and ``overrides`` (for examples and tests).

    Example:
        >>> build_example_args(port=8000).port
        8000
    """
    from referee.recipes.cli import build_parser

    args = build_parser().parse_args(["serve"])
    for key, value in overrides.items():
        setattr(args, key, value)
    return args


def bind(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host``:``port`` (raises ``ConfigurationError`` naming what is wrong).

    Example:
        >>> listener = bind("127.0.0.1", 0); listener.getsockname()[0]
        '127.0.0.1'
        >>> bind("127.0.0.1", listener.getsockname()[1])
        Traceback (most recent call last):
        ...
        referee.rewards.trainers.routing.ConfigurationError: 127.0.0.1 port ... is in use (another server?); stop it or choose another --port.
        >>> listener.close()
    """
    if not 0 <= port <= 65535:
        raise ConfigurationError(f"--port {port} is not a port; use 0 to 65535 (0: any free one).")
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM,
                                                             flags=socket.AI_PASSIVE)[0]
    except (socket.gaierror, UnicodeError) as exc:
        raise ConfigurationError(f"--host {host!r} is not an address this machine has ({exc}).") from None
    listener = socket.socket(family, kind, proto)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listener.bind(address)
        listener.listen(2048)
    except OSError as exc:
        listener.close()
        if exc.errno == errno.EADDRINUSE:
            raise ConfigurationError(f"{host} port {port} is in use (another server?); stop it or choose another --port.") from None
        raise ConfigurationError(f"cannot listen on {host} port {port}: {exc.strerror or exc}.") from None
    return listener


def serve_log_to_stderr() -> logging.Logger:
    """Send the server's own log (each refused request's sentence) to stderr, as ``referee serve: ...`` lines.

    Example:
        >>> serve_log_to_stderr() is serve_log_to_stderr() and len(serve_log_to_stderr().handlers)
        1
    """
    log = logging.getLogger("referee.serve")
    if not log.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("referee serve: %(message)s"))
        log.addHandler(handler)
        log.setLevel(logging.INFO)
        log.propagate = False
    return log


def run(args: argparse.Namespace) -> int:
    try:
        import uvicorn  # noqa: F401  (checked before anything starts)
        import fastapi  # noqa: F401
    except ImportError as exc:
        print(f"referee serve: {exc.name} is missing; install the serve extra: pip install 'referee[serve]'", file=sys.stderr)
        return 2
    try:
        options = options_from_args(args)
        limits = limits_from_args(args, options.verifier_options.get("code", {}).get("workers"))
        listener = bind(args.host, args.port)
    except ConfigurationError as exc:
        print(f"referee serve: {exc}", file=sys.stderr)
        return 2
    host, port = listener.getsockname()[:2]
    if limits.token is None and not is_loopback(host):
        listener.close()
        print(f"referee serve: --host {args.host} is reachable from other machines, and /run_code runs any caller's "
              f"code: set a token (--token, or {TOKEN_ENV}) or listen on 127.0.0.1.", file=sys.stderr)
        return 2
    try:
        scorer = Scorer(options, name="referee_serve", fields=OPENRLHF_FIELDS)
    except ConfigurationError as exc:
        listener.close()
        print(f"referee serve: {exc}", file=sys.stderr)
        return 2
    import uvicorn

    from referee.recipes.serve.app import build_app
    from referee.recipes.serve.protocol import protocol_with_request_timeout

    serve_log_to_stderr()
    config = uvicorn.Config(build_app(scorer, limits), log_level="warning", http=protocol_with_request_timeout(limits.request_timeout),
                            timeout_keep_alive=limits.idle_timeout, limit_concurrency=limits.max_connections,
                            timeout_graceful_shutdown=10)
    shown = f"[{host}]" if ":" in host else host
    url = f"http://{shown}:{port}"
    print(f"referee serve: listening on {url}{' (token required)' if limits.token else ''}: POST {url}/get_reward "
          f"(OpenRLHF: --reward.remote_url {url}/get_reward); POST {url}/run_code (verl 0.7+: "
          f"reward.sandbox_fusion.url={url}/run_code; verl 0.6 and earlier: reward_model.sandbox_fusion.url)",
          file=sys.stderr, flush=True)
    uvicorn.Server(config).run(sockets=[listener])
    return 0
