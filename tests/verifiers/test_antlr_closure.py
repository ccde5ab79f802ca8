"""The faster closure walk (``referee.verifiers.math.antlr_closure``) learns, from the same state,
the same prediction DFA as ANTLR's own walk, state for state and configuration for configuration,
and parses every text to the same tree or the same error, under SLL and full LL prediction."""

import copy
import marshal
import random
from contextlib import contextmanager

import pytest
from antlr4 import CommonTokenStream, InputStream
from antlr4.atn.ATNConfig import ATNConfig
from antlr4.atn.ATNConfigSet import ATNConfigSet
from antlr4.atn.ParserATNSimulator import ParserATNSimulator
from antlr4.atn.PredictionMode import PredictionMode
from antlr4.dfa.DFA import DFA
from antlr4.error.ErrorStrategy import BailErrorStrategy
from antlr4.atn.SemanticContext import SemanticContext
from antlr4.PredictionContext import PredictionContext, PredictionContextCache
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from latex2sympy2_extended.antlr_parser import PSLexer, PSParser

from referee.verifiers.math import antlr_closure, parser_tables

# Answer shapes of the kind models write (nested groups, floors, roots, relations, lists, sets,
# intervals, functions), a few that SLL prediction alone rejects (so full LL runs), and broken ones.
SHAPES = [
    r"\frac{1}{2}", r"-\dfrac{3}{4}", r"2\sqrt{3}+1", r"(-\infty, 3) \cup (5, \infty)", r"\{1, 2, 3\}",
    r"N(n) = \left\lfloor \frac{n^2 + 3n}{6} \right\rfloor + (n \mod 2)", r"3(n-1)n^2",
    r"\angle BEA_{1} = \angle AEB_{1} = 45^{\circ}", r"\frac{r_{1}}{\sqrt[3]{r_{2}}} + \frac{r_{2}}{\sqrt[3]{r_{1}}}",
    r"n \left(1 + 2 \left\lfloor \frac{m-1}{2} \right\rfloor \right)", r"\left( f(n) = n, g(n) = 1 \right)",
    r"\frac{\pi}{6} + k\pi, \frac{\pi}{3} + k\pi, -\frac{\pi}{6} + k\pi", r"(4, \log_{10}(2))", r"x \in [2, 5)",
    r"\frac{\log(2)}{\log\left(\frac{2}{3}\right)}", r"\cos(36^\circ + 12^\circ), \cos(-12^\circ)", r"k \geq 2",
    r"(1, 7), (8, 0), (-1, -9)", r"\frac{(d-1)!}{(d-k)!}", r"\begin{pmatrix} 1 \\ 2 \end{pmatrix}", r"50\%",
    r"-1 + x - x^2 + x^3 - x^4 + x^5", r"f(x) = 2x + 1", r"a_n = 2^n", r"\pm 1", r"|x - 1| < 3", r"\binom{5}{2}",
    r"\frac{", r"2 +* 3", r"\sqrt{}{}{", r"(1, 2", r"\left( 3, \frac{\pi}{2} \right",
]


@contextmanager
def walking(walk):
    """ANTLR's parser simulator walks closures with ``walk`` inside the block."""
    before = {name: ParserATNSimulator.__dict__[name] for name in walk}
    try:
        for name, function in walk.items():
            setattr(ParserATNSimulator, name, function)
        yield
    finally:
        for name, function in before.items():
            setattr(ParserATNSimulator, name, function)


class Learner:
    """A parser's prediction state of its own (empty DFAs, its own context cache), walked with ``walk``."""

    def __init__(self, walk):
        self.walk = walk
        atn = PSParser.atn
        self.dfas = [DFA(atn.decisionToState[i], i) for i in range(len(atn.decisionToState))]
        self.cache = PredictionContextCache()
        self.ll_after_sll = 0  # texts SLL rejected and full LL parsed

    def simulator(self, parser=None):
        """A parser simulator that predicts with this learner's DFAs and context cache."""
        return ParserATNSimulator(parser, PSParser.atn, self.dfas, self.cache)

    def _parse(self, text, mode):
        lexer = PSLexer(InputStream(text))
        lexer.removeErrorListeners()
        parser = PSParser(CommonTokenStream(lexer))
        parser.removeErrorListeners()
        parser._interp = self.simulator(parser)
        parser._interp.predictionMode = mode
        if mode == PredictionMode.SLL:
            parser._errHandler = BailErrorStrategy()
        try:
            return parser.math().toStringTree(recog=parser)
        except Exception as exc:  # noqa: BLE001 (which error is part of what must not change)
            return f"raised {type(exc).__name__}"

    def read(self, text):
        """``text``'s tree (or error) under SLL, then under full LL with ANTLR's error recovery."""
        with walking(self.walk):
            sll, ll = self._parse(text, PredictionMode.SLL), self._parse(text, PredictionMode.LL)
        self.ll_after_sll += sll.startswith("raised") and not ll.startswith("raised")
        return sll, ll

    def learnt(self):
        """Every DFA state, its configurations (contexts included) and edges, encoded as the shipped tables are."""
        contexts = parser_tables._Contexts()
        return marshal.dumps(([parser_tables._encode_dfa(dfa, contexts) for dfa in self.dfas], contexts.rows))


def test_the_walk_learns_what_antlr_learns_on_answer_shapes():
    antlr, ours = Learner(antlr_closure.ANTLR_WALK), Learner(antlr_closure.WALK)
    assert [ours.read(text) for text in SHAPES] == [antlr.read(text) for text in SHAPES]
    assert ours.learnt() == antlr.learnt()
    assert sum(len(dfa._states) for dfa in antlr.dfas) > 200  # a real DFA was learnt
    assert antlr.ll_after_sll >= 2  # full LL prediction ran and parsed what SLL rejected


def test_the_comparison_sees_a_walk_that_differs(monkeypatch):
    """A walk that never drops the loop-entry edge of a left-recursive rule (ANTLR drops it where it
    can) parses the same but learns other configurations: the comparison above would fail on it."""
    antlr, other = Learner(antlr_closure.ANTLR_WALK), Learner(antlr_closure.WALK)
    reads = [antlr.read(text) for text in SHAPES[:12]]
    monkeypatch.setattr(ParserATNSimulator, "canDropLoopEntryEdgeInLeftRecursiveRule", lambda sim, config: False)
    assert [other.read(text) for text in SHAPES[:12]] == reads
    assert other.learnt() != antlr.learnt()


# Token soup in LaTeX's alphabet: mostly malformed, so every corner of the walk (errors, recovery,
# rule ends with and without a caller) is reached. One pair of learners carries its DFA from example
# to example, so later examples extend a DFA that is already large, as a worker's does.
TOKENS = ["x", "n", "1", "23", "0.5", "+", "-", "=", "<", "\\leq", "\\pm", "^", "_", ",", ";", "(", ")", "[", "]",
          "{", "}", "\\{", "\\}", "|", "!", "\\frac{", "\\sqrt{", "\\sqrt[3]{", "\\left(", "\\right)",
          "\\lfloor", "\\rfloor", "\\cup", "\\in", "\\cdot", "\\pi", "\\infty", "\\sin", "\\log_", "\\text{ m}",
          "\\mathbb{R}", "^\\circ", "\\%", " ", "f(", "\\begin{pmatrix}", "\\\\", "\\end{pmatrix}", "&"]
_SHARED = {}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.lists(st.sampled_from(TOKENS), min_size=1, max_size=14).map("".join), min_size=1, max_size=4))
def test_the_walk_learns_what_antlr_learns_on_any_text(texts):
    if not _SHARED:
        _SHARED.update(antlr=Learner(antlr_closure.ANTLR_WALK), ours=Learner(antlr_closure.WALK))
    antlr, ours = _SHARED["antlr"], _SHARED["ours"]
    assert [ours.read(text) for text in texts] == [antlr.read(text) for text in texts]
    assert ours.learnt() == antlr.learnt()


def test_install_replaces_the_walk_only_under_the_runtime_it_follows(monkeypatch):
    with walking(antlr_closure.ANTLR_WALK):
        monkeypatch.setattr(antlr_closure.importlib.metadata, "version", lambda name: "4.9.3")
        assert antlr_closure.install() is False
        assert ParserATNSimulator.closure_ is antlr_closure.ANTLR_WALK["closure_"]
        def no_metadata(name):
            raise antlr_closure.importlib.metadata.PackageNotFoundError(name)

        monkeypatch.setattr(antlr_closure.importlib.metadata, "version", no_metadata)
        assert antlr_closure.install() is False
        assert ParserATNSimulator.closure_ is antlr_closure.ANTLR_WALK["closure_"]
        monkeypatch.undo()
        assert antlr_closure.install() is True
        assert ParserATNSimulator.closure_ is antlr_closure.closure
        assert ParserATNSimulator.closureCheckingStopState is antlr_closure.closure_checking_stop_state


@pytest.mark.parametrize("text", [r"\frac{1}{2}", r"(-\infty, 3) \cup (5, \infty)", r"2 +* 3"])
def test_the_worker_template_parses_with_the_walk(text):
    from referee.verifiers.math import sympy_worker

    sympy_worker.prepare()
    assert ParserATNSimulator.closure_ is antlr_closure.closure
    sympy_worker._parse(text)  # parses (or fails) without the walk raising


def test_a_configuration_added_twice_is_listed_twice_as_antlr_lists_it():
    """ANTLR's ``ATNConfigSet.add`` of a configuration already in the set appends it again."""
    state = next(s for s in PSParser.atn.states if s is not None and not s.epsilonOnlyTransitions and s.transitions)
    sizes = []
    for walk in (antlr_closure.ANTLR_WALK, antlr_closure.WALK):
        configs = ATNConfigSet(False)
        config = ATNConfig(state=state, alt=1, context=PredictionContext.EMPTY)
        configs.add(config)
        walk["closure_"](Learner(walk).simulator(), config, configs, set(), False, False, 0, False)
        sizes.append((len(configs.configs), configs.cachedHashCode))
    assert sizes[0] == sizes[1] == (2, -1)


def _snapshot(config, configs, busy):
    """Every field the walk may set, of ``config``, of each configuration of ``configs`` in order, of
    the set's lookup buckets (as positions) and flags, and of the busy set; contexts compared by structure."""
    seen = {}

    def context(ctx):
        if ctx is None or ctx is PredictionContext.EMPTY:
            return "$" if ctx is not None else None
        if id(ctx) not in seen:
            seen[id(ctx)] = (type(ctx).__name__, [ctx.getReturnState(i) for i in range(len(ctx))],
                             [context(ctx.getParent(i)) for i in range(len(ctx))])
        return seen[id(ctx)]

    def fields(c):
        return (c.state.stateNumber, c.alt, context(c.context), str(c.semanticContext),
                c.semanticContext is SemanticContext.NONE, c.reachesIntoOuterContext, c.precedenceFilterSuppressed)

    position = {id(c): i for i, c in enumerate(configs.configs)}
    return (fields(config), [fields(c) for c in configs.configs],
            [[position.get(id(c), fields(c)) for c in bucket] for bucket in configs.configLookup.values()],
            configs.hasSemanticContext, configs.dipsIntoOuterContext, configs.cachedHashCode,
            sorted(repr(fields(c)) for c in busy))


def test_every_closure_leaves_what_antlrs_leaves(monkeypatch):
    """Each closure ANTLR computes while parsing (full-context ones included, which no DFA keeps) is
    computed again by the walk on a deep copy of its inputs: configurations, lookup, flags and busy set agree."""
    keep = {id(state): state for state in PSParser.atn.states}
    keep.update({id(SemanticContext.NONE): SemanticContext.NONE, id(PredictionContext.EMPTY): PredictionContext.EMPTY})
    calls = {"all": 0, "full context": 0, "differ": 0}

    def shadowed(sim, config, configs, busy, collect, full_context, eof_as_epsilon):
        copies = copy.deepcopy((config, configs, busy, sim.mergeCache), dict(keep))
        merge_cache, sim.mergeCache = sim.mergeCache, copies[3]
        try:
            antlr_closure.closure_checking_stop_state(sim, *copies[:3], collect, full_context, 0, eof_as_epsilon)
        finally:
            sim.mergeCache = merge_cache
        antlr_closure.ANTLR_WALK["closureCheckingStopState"](sim, config, configs, busy, collect, full_context, 0,
                                                             eof_as_epsilon)
        calls["all"] += 1
        calls["full context"] += full_context
        calls["differ"] += _snapshot(config, configs, busy) != _snapshot(*copies[:3])

    monkeypatch.setattr(ParserATNSimulator, "closure", shadowed)
    learner = Learner(antlr_closure.ANTLR_WALK)
    soup = random.Random(7)
    for text in SHAPES + ["".join(soup.choices(TOKENS, k=soup.randint(1, 14))) for _ in range(300)]:
        learner.read(text)
    assert calls["differ"] == 0
    assert calls["all"] > 1000 and calls["full context"] > 100  # the walk ran, SLL and full LL alike
