"""``referee doctor``: which isolation the code sandbox gets on this machine, and why; the training stack."""

from __future__ import annotations

import argparse
import sys
import warnings
from typing import Any

from referee.verifiers.code import LEVELS
from referee.verifiers.code import Isolation, available_isolation, exposures


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "doctor",
        help="show the code sandbox's isolation level and why",
        description=(
            "Print the isolation level the code verifier runs with here (full, namespaces, uid or "
            "basic) and what makes its namespaces (bubblewrap, or referee's own where bubblewrap is missing "
            "or hidden by REFEREE_NO_BUBBLEWRAP=1), each layer on or off with the reason, then judge a small program in the sandbox "
            "to prove it works. Exits 0 when the sandbox works at full strength, 1 when it cannot "
            "judge or the level is below full (a job could then signal your processes, read your home, "
            "or kill its worker), 2 when the asked-for level is not available."
        ),
    )
    parser.add_argument("--isolation", default="auto", choices=("auto", *LEVELS),
                        help="the level to check (default: the best available)")
    parser.add_argument("--no-check", action="store_true", help="only print the layers; judge nothing")
    parser.add_argument("--ray", metavar="ADDRESS", nargs="?", const="auto", default=None,
                        help="also start (or find) the verifier host on every node of the Ray cluster at ADDRESS "
                             "(default: auto, the running one) and list them: node, isolation, pool size; "
                             "exits 1 when a host cannot judge code")
    parser.set_defaults(run=run)


def report_lines(isolation: Isolation) -> list[str]:
    """The printed report: the level and what makes its namespaces (bubblewrap or referee's own), one
    line per layer, then the languages (:func:`toolchain_lines`).

    Example:
        >>> print("\\n".join(report_lines(available_isolation("basic"))[:2]))
        code sandbox isolation: basic
          off  namespaces: not used at the 'basic' level
    """
    made_by = f" (namespaces made by {isolation.mechanism})" if isolation.mechanism else ""
    lines = [f"code sandbox isolation: {isolation.level}{made_by}"]
    for layer in isolation.layers:
        lines.append(f"  {'on ' if layer.on else 'off'}  {layer.name}: {layer.why}")
    return lines + toolchain_lines()


def strength_line(isolation: Isolation) -> str:
    """One line: full strength, or what a job could do below it and whether the verifiers accept that level.

    Example:
        >>> strength_line(available_isolation("basic"))
        "below full strength: a job could signal your processes and read your home ...; the verifiers refuse this level unless it is named with allow_weak_isolation=True (for 'full', run as root where namespaces can be made: bubblewrap, or user namespaces allowed)"
    """
    if isolation.level == "full":
        return "full strength: jobs cannot reach your processes, your files or the network"
    weak = exposures(isolation)
    if weak:
        return (f"below full strength: a job could {' and '.join(weak)}; the verifiers refuse this level unless it is "
                "named with allow_weak_isolation=True (for 'full', run as root where namespaces can be made: bubblewrap, or user namespaces allowed)")
    return ("below full strength: jobs share their worker's uid or see the host's files (see the layers above); "
            "run as root where namespaces can be made for 'full'")


def host_lines(infos: list[dict[str, Any]]) -> list[str]:
    """The printed list of Ray verifier hosts (``--ray``): one line per host.

    Example:
        >>> print("\\n".join(host_lines([{"node_id": "ab" * 28, "hostname": "n1", "isolation": "full", "pool_size": 8,
        ...     "sandbox_ok": True, "sandbox_reason": "", "refuses_code": False, "batches": 3, "items": 96}])))
        ray verifier hosts: 1
          node ababababababab (n1): isolation full, pool 8, 3 batches / 96 items
    """
    lines = [f"ray verifier hosts: {len(infos)}"]
    for info in infos:
        state = "" if info["sandbox_ok"] and not info["refuses_code"] else \
            f"; refuses code: {info['sandbox_reason'] or 'below min_isolation ' + str(info.get('min_isolation'))}"
        lines.append(f"  node {info['node_id'][:14]} ({info['hostname']}): isolation {info['isolation']}, "
                     f"pool {info['pool_size']}, {info['batches']} batches / {info['items']} items{state}")
    return lines


def _ray_hosts(address: str) -> int:
    from referee.verifiers.ray_host import connect, cpu_nodes, describe_hosts

    try:
        connect(address)
    except (ImportError, ConnectionError) as exc:
        print(f"referee doctor: {exc}", file=sys.stderr)
        return 2
    try:
        infos = describe_hosts(start=True)
    except TimeoutError as exc:
        print(f"referee doctor: {exc}", file=sys.stderr)
        return 1
    print("\n".join(host_lines(infos)))
    missing = len(cpu_nodes()) - len(infos)
    if missing > 0:
        print(f"{missing} CPU node(s) without a working host")
    return 0 if infos and missing <= 0 and all(i["sandbox_ok"] and not i["refuses_code"] for i in infos) else 1


def run(args: argparse.Namespace) -> int:
    from referee.verifiers.code import sandbox_check

    try:
        isolation = available_isolation(args.isolation)
    except ValueError as exc:
        print(f"referee doctor: {exc}", file=sys.stderr)
        return 2
    print("\n".join(report_lines(isolation)))
    strength = strength_line(isolation)
    print(strength)
    stack_ok = print_stack()
    full = isolation.level == "full" and stack_ok
    if args.no_check:
        code = 0 if full else 1
        return max(code, _ray_hosts(args.ray)) if getattr(args, "ray", None) else code
    # The check program is ours: it may run at a weak level (the verifiers refuse one unless told).
    with warnings.catch_warnings():  # the strength line above says it already
        warnings.simplefilter("ignore", RuntimeWarning)
        check = sandbox_check(isolation.level, workers=1, timeout=10.0, allow_weak_isolation=True)
    if check.ok:
        print(f"check: a test program was judged in the sandbox in {check.seconds:.2f} s (including the worker's start)")
    else:
        print(f"check: the sandbox could not judge a test program: {check.reason}")
    code = 0 if check.ok and full else 1
    if getattr(args, "ray", None):
        code = max(code, _ray_hosts(args.ray))
    return code


def toolchain_lines() -> list[str]:
    """The printed list of languages: each toolchain found (its version, the folders mounted for it)
    or missing (programs in that language are then ``error``, never 0).

    Example:
        >>> lines = toolchain_lines()
        >>> lines[0], any(line.startswith("  found    python") for line in lines)
        ('code languages (toolchains found here):', True)
    """
    from referee.verifiers.code import LANGUAGES, find_toolchain

    lines = ["code languages (toolchains found here):"]
    for name, language in LANGUAGES.items():
        toolchain = find_toolchain(name)
        if toolchain is None:
            lines.append(f"  missing  {name}: {', '.join(language.tools)} not found (its programs are judged error)")
            continue
        mounted = f"; mounted read-only: {', '.join(toolchain.folders)}" if toolchain.folders else ""
        lines.append(f"  found    {name}: {toolchain.version} ({', '.join(toolchain.tools.values())}){mounted}")
    return lines


def print_stack() -> bool:
    """Print the training stack and the pairs in it known not to work; returns whether there are none.

    Example:
        >>> import contextlib, io
        >>> with contextlib.redirect_stdout(io.StringIO()) as out:
        ...     ok = print_stack()
        >>> out.getvalue().startswith("training stack:"), ok == ("known not to work here: none" in out.getvalue())
        (True, True)
    """
    from referee.recipes.common.stack import stack_report

    lines, problems = stack_report()
    print("\n".join(lines))
    if not problems:
        print("known not to work here: none")
    for problem in problems:
        print(f"known not to work here: {problem}")
    return not problems
