"""Prediction tables for latex2sympy's LaTeX parser, computed once and shipped, so that no worker learns them.

latex2sympy parses with an ANTLR parser in pure Python. Each decision of the parser predicts
its alternative with a DFA that ANTLR builds lazily: the first time a token sequence reaches a
DFA state without an edge for the next token, ANTLR simulates the grammar's ATN to compute the
edge (about a millisecond each, most of a cold parse), then caches it for the process. A fresh
worker therefore parses its first few hundred answers several times slower than a warm one.

This module saves a warmed parser's DFAs (learnt from a corpus of typical answers, see
:func:`build`) and installs them in a fresh process (:func:`install`, which the worker
template calls before it forks any worker). The DFA is a cache of what the ATN simulation
returns, so every parse gives the same tree (or the same error) with or without the tables;
only the time differs. Edges the tables lack are learnt as before.

The tables are tied to the grammar and to ANTLR's runtime: they carry a fingerprint of both,
and :func:`install` leaves the parser untouched when the installed versions differ (parsing
is then as slow as before, never different). A state's configurations, which ANTLR needs only
to extend the DFA from that state, are decoded the first time they are asked for.

Rebuild the shipped file after upgrading latex2sympy2_extended or antlr4-python3-runtime:

    python -m referee.verifiers.math.parser_tables --math-jsonl MATH500.jsonl
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.metadata
import json
import marshal
import re
import sys
import zlib
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from antlr4.atn.ATNConfig import ATNConfig
from antlr4.atn.ATNConfigSet import ATNConfigSet
from antlr4.atn.ATNSimulator import ATNSimulator
from antlr4.atn.SemanticContext import PrecedencePredicate, SemanticContext
from antlr4.dfa.DFA import DFA
from antlr4.dfa.DFAState import DFAState
from antlr4.PredictionContext import ArrayPredictionContext, PredictionContext, SingletonPredictionContext

TABLES = Path(__file__).with_name("parser_tables.bin")
_FORMAT = 1
_EMPTY, _NO_PARENT, _ERROR = -2, -1, -1  # context indexes for EMPTY and None; the edge index of ANTLR's ERROR state
_NO_PREDICATE = -1  # a configuration's semantic context: NONE, else a precedence predicate's precedence
_SHORT_MATHS = 60  # characters: inline maths of a solution short enough to look like an answer
_INLINE_MATHS_RE = re.compile(r"\$\$([^$]+)\$\$|\$([^$]+)\$")


def _parser() -> type:
    """The ANTLR parser class latex2sympy parses with (it picks one per ANTLR runtime version)."""
    from latex2sympy2_extended.antlr_parser import PSParser

    return PSParser


def fingerprint() -> str:
    """What the tables depend on: the grammar's serialized ATN, ANTLR's runtime version and this format.

    Example:
        >>> len(fingerprint()), fingerprint() == fingerprint()
        (64, True)
    """
    parser_module = sys.modules[_parser().__module__]
    digest = hashlib.sha256(f"{_FORMAT} {importlib.metadata.version('antlr4-python3-runtime')} ".encode())
    digest.update(json.dumps(parser_module.serializedATN()).encode())
    return digest.hexdigest()


class _Contexts:
    """Prediction contexts numbered in the order they are first met (parents before children)."""

    def __init__(self) -> None:
        self.index: dict[int, int] = {}
        self.rows: list[tuple[Any, ...]] = []
        self.kept: list[PredictionContext] = []  # keeps each numbered context alive, so ids stay unique

    def number(self, context: PredictionContext | None) -> int:
        if context is None:
            return _NO_PARENT
        if context is PredictionContext.EMPTY:
            return _EMPTY
        known = self.index.get(id(context))
        if known is not None:
            return known
        if isinstance(context, ArrayPredictionContext):
            row: tuple[Any, ...] = (tuple(self.number(p) for p in context.parents), tuple(context.returnStates))
        elif type(context) is SingletonPredictionContext:
            row = (self.number(context.parentCtx), context.returnState)
        else:
            raise TypeError(f"cannot save a prediction context of type {type(context).__name__}")
        self.index[id(context)] = len(self.rows)
        self.rows.append(row)
        self.kept.append(context)
        return self.index[id(context)]


def _key(configs: ATNConfigSet) -> int:
    """A hash of the configurations that every process computes alike (ANTLR's own hashes
    ``SemanticContext.NONE`` by identity, so it differs from one process to the next)."""
    return hash(tuple((config.state.stateNumber, config.alt, hash(config.context),
                       -1 if config.semanticContext is SemanticContext.NONE else hash(config.semanticContext))
                      for config in configs))


def _encode_configs(configs: ATNConfigSet, contexts: _Contexts) -> tuple[Any, ...]:
    flat: list[int] = []
    for config in configs:
        if type(config) is not ATNConfig:
            raise TypeError(f"cannot save a configuration of type {type(config).__name__}")
        semantic = config.semanticContext
        if semantic is SemanticContext.NONE:
            predicate = _NO_PREDICATE
        elif type(semantic) is PrecedencePredicate:
            predicate = semantic.precedence
        else:
            raise TypeError(f"cannot save a semantic context of type {type(semantic).__name__}")
        flat += (config.state.stateNumber, config.alt, contexts.number(config.context), predicate,
                 config.reachesIntoOuterContext, int(config.precedenceFilterSuppressed))
    conflicting = None if configs.conflictingAlts is None else tuple(sorted(configs.conflictingAlts))
    return (tuple(flat), configs.fullCtx, configs.uniqueAlt, conflicting, configs.hasSemanticContext,
            configs.dipsIntoOuterContext, _key(configs))


def _encode_dfa(dfa: DFA, contexts: _Contexts) -> tuple[Any, ...]:
    states = list(dfa._states)
    numbers = {id(state): k for k, state in enumerate(states)}

    def edges(state: DFAState) -> tuple[Any, ...] | None:
        if state.edges is None:
            return None
        return (len(state.edges), tuple((t, _ERROR if target is ATNSimulator.ERROR else numbers[id(target)])
                                        for t, target in enumerate(state.edges) if target is not None))

    rows = []
    for state in states:
        if state.predicates is not None or state.lexerActionExecutor is not None:
            raise TypeError("cannot save a DFA state with predicates or lexer actions")
        rows.append((state.stateNumber, state.isAcceptState, state.prediction, state.requiresFullContext,
                     _encode_configs(state.configs, contexts), edges(state)))
    start = edges(dfa.s0) if dfa.precedenceDfa else (None if dfa.s0 is None else numbers[id(dfa.s0)])
    return dfa.decision, rows, start


def build(texts: Iterable[str]) -> bytes:
    """Parse ``texts`` in this process (as the workers do) and return its parser's DFAs, saved.

    Example:
        >>> saved = build([r"\\frac{1}{2}", r"(1, 2)"])
        >>> saved[:4] == b"RPT1", len(saved) > 100
        (True, True)
    """
    from .sympy_worker import _parse, prepare

    prepare()
    for text in texts:
        try:
            _parse(text)
        except Exception:  # a text that does not parse still teaches the DFA what it saw
            continue
    contexts = _Contexts()
    dfas = [_encode_dfa(dfa, contexts) for dfa in _parser().decisionsToDFA]
    payload = marshal.dumps((fingerprint(), contexts.rows, dfas))
    return b"RPT1" + zlib.compress(payload, 9)


class _LazyState(DFAState):
    """A saved DFA state whose configurations are decoded the first time ANTLR asks for them.

    ANTLR reads a state's configurations only to extend the DFA from it, or to compare it with
    a state it has just computed; following its edges decodes nothing, and :class:`_SavedStates`
    finds it by its saved key, so a lookup decodes only a state that may be equal.
    """

    __slots__ = ("_saved", "_key", "_tables")

    def _get_configs(self) -> ATNConfigSet:
        try:
            return DFAState.configs.__get__(self)  # type: ignore[attr-defined]
        except AttributeError:
            configs = self._tables.configs(self._saved)
            DFAState.configs.__set__(self, configs)  # type: ignore[attr-defined]
            return configs

    def _set_configs(self, configs: ATNConfigSet) -> None:
        DFAState.configs.__set__(self, configs)  # type: ignore[attr-defined]

    configs = property(_get_configs, _set_configs)  # type: ignore[assignment]

    def __hash__(self) -> int:  # equality stays ANTLR's: equal configurations
        return self._key


class _SavedStates(dict):
    """A DFA's states (``DFA._states``) where a state ANTLR has just computed also finds an equal saved state.

    ANTLR looks a new state up before adding it (``dfa.states.get(state)``), by its own hash;
    saved states are keyed by :func:`_key` instead, so they are looked up by that key too.
    """

    def __init__(self) -> None:
        super().__init__()
        self.saved: dict[int, list[_LazyState]] = {}

    def add_saved(self, state: _LazyState) -> None:
        self[state] = state
        self.saved.setdefault(state._key, []).append(state)

    def get(self, state: DFAState, default: Any = None) -> Any:
        found = super().get(state)
        if found is not None:
            return found
        for saved in self.saved.get(_key(state.configs), ()):
            if saved.configs == state.configs:
                return saved
        return default


class _Tables:
    """The saved contexts of one installation, decoded on demand and shared by its states."""

    def __init__(self, rows: list[tuple[Any, ...]], atn: Any) -> None:
        self.rows = rows
        self.contexts: list[PredictionContext | None] = [None] * len(rows)
        self.atn_states = atn.states

    def context(self, index: int) -> PredictionContext | None:
        if index == _EMPTY:
            return PredictionContext.EMPTY
        if index == _NO_PARENT:
            return None
        known = self.contexts[index]
        if known is None:
            first, second = self.rows[index]
            if isinstance(first, tuple):
                known = ArrayPredictionContext([self.context(p) for p in first], list(second))
            else:
                known = SingletonPredictionContext(self.context(first), second)
            self.contexts[index] = known
        return known

    def configs(self, saved: tuple[Any, ...]) -> ATNConfigSet:
        flat, full_context, unique_alt, conflicting, has_semantic, dips, _ = saved
        configs = ATNConfigSet(full_context)
        states, context = self.atn_states, self.context
        for at in range(0, len(flat), 6):
            state, alt, ctx, predicate, reaches, suppressed = flat[at:at + 6]
            config = ATNConfig.__new__(ATNConfig)
            config.state, config.alt, config.context = states[state], alt, context(ctx)
            config.semanticContext = SemanticContext.NONE if predicate == _NO_PREDICATE else PrecedencePredicate(predicate)
            config.reachesIntoOuterContext, config.precedenceFilterSuppressed = reaches, bool(suppressed)
            configs.configs.append(config)
        configs.uniqueAlt = unique_alt
        configs.conflictingAlts = None if conflicting is None else set(conflicting)
        configs.hasSemanticContext, configs.dipsIntoOuterContext = has_semantic, dips
        configs.setReadonly(True)
        return configs


def _install_dfa(saved: tuple[Any, ...], atn: Any, tables: _Tables) -> DFA:
    decision, rows, start = saved
    dfa = DFA(atn.decisionToState[decision], decision)
    dfa._states = _SavedStates()
    states = []
    for number, accept, prediction, full_context, configs, _ in rows:
        state = _LazyState.__new__(_LazyState)
        state.stateNumber, state.isAcceptState, state.prediction = number, accept, prediction
        state.requiresFullContext, state.edges, state.lexerActionExecutor, state.predicates = full_context, None, None, None
        state._saved, state._key, state._tables = configs, configs[-1], tables
        states.append(state)

    def edges(saved_edges: tuple[Any, ...] | None) -> list[DFAState | None] | None:
        if saved_edges is None:
            return None
        size, pairs = saved_edges
        linked: list[DFAState | None] = [None] * size
        for t, target in pairs:
            linked[t] = ATNSimulator.ERROR if target == _ERROR else states[target]
        return linked

    for state, row in zip(states, rows):
        state.edges = edges(row[5])
        dfa._states.add_saved(state)
    if dfa.precedenceDfa:
        dfa.s0.edges = edges(start)
    elif start is not None:
        dfa.s0 = states[start]
    return dfa


def install(path: Path = TABLES) -> bool:
    """Give this process's LaTeX parser the saved tables; ``False`` (parser untouched) when they do not fit.

    Call it before the first parse: it replaces whatever the parser has learnt so far.

    Example:
        >>> install(Path("no-such-file.bin"))
        False
    """
    try:
        saved = path.read_bytes()
        if not saved.startswith(b"RPT1"):
            return False
        stamp, rows, dfas = marshal.loads(zlib.decompress(saved[4:]))
        if stamp != fingerprint():
            return False
        parser = _parser()
    except Exception:  # no file, a damaged one, or a latex2sympy that cannot load here: parse as before
        return False
    tables = _Tables(rows, parser.atn)
    parser.decisionsToDFA[:] = [_install_dfa(dfa, parser.atn, tables) for dfa in dfas]
    return True


def answer_corpus(rows: Iterable[dict[str, Any]]) -> list[str]:
    """The texts :func:`build` learns from: each row's ``answer``, and the short maths of its ``solution``.

    Example:
        >>> answer_corpus([{"answer": "3", "solution": "So $x = 3$ and $\\\\frac{1}{2}$."}])
        ['3', '\\\\frac{1}{2}', 'x = 3']
    """
    texts = set()
    for row in rows:
        texts.add(str(row.get("answer", "")).strip())
        for display, inline in _INLINE_MATHS_RE.findall(str(row.get("solution", ""))):
            if len((display or inline).strip()) <= _SHORT_MATHS:
                texts.add((display or inline).strip())
    return sorted(text for text in texts if text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--math-jsonl", required=True, nargs="+",
                        help="JSONL files of maths problems with `answer` and `solution` (MATH, MATH-500)")
    parser.add_argument("--out", default=str(TABLES), help="where to write the tables (default: the shipped file)")
    args = parser.parse_args()
    from .sympy_worker import _WARM_UP_ANSWERS

    rows = [json.loads(line) for path in args.math_jsonl for line in Path(path).read_text().splitlines() if line.strip()]
    texts = list(_WARM_UP_ANSWERS) + answer_corpus(rows)
    saved = build(texts)
    Path(args.out).write_bytes(saved)
    print(f"learnt from {len(texts)} texts; wrote {len(saved)} bytes to {args.out}")


if __name__ == "__main__":
    main()
