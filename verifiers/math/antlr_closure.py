"""ANTLR's ATN closure with fewer Python calls: the same walk, the same configurations in the same order.

latex2sympy's parser is ANTLR's pure-Python runtime. When its prediction DFA lacks an edge,
ANTLR computes one by walking the grammar's ATN along epsilon edges from every configuration
(``ParserATNSimulator.closure``): a few hundred nested calls per configuration, most of a cold
parse's time. :func:`install` replaces the two methods of that walk
(``closureCheckingStopState`` and ``closure_``) with one pair of functions that do the same
steps in the same order: they make the same configurations, add them to the configuration set
in the same order, mark the same ones busy and recurse in the same order. What changes is only
how: epsilon, rule and action transitions, and precedence transitions where no predicate is
collected, are followed inline instead of through ``getEpsilonTarget``'s table of lambdas; a
configuration is copied without ``ATNConfig.__init__``'s keyword handling; a plain
configuration set's lookup (``ATNConfigSet.add``) is inlined; and the check for a left-recursive
loop entry calls its method only at such a state. Every other transition (collected
predicates, EOF as epsilon) goes through ANTLR's own ``getEpsilonTarget``.

The functions follow the runtime they were written against; :func:`install` leaves ANTLR
untouched under any other version. ANTLR's debug tracing of the walk is not printed, and the
walk takes fewer Python frames per step: a text nested so deeply that ANTLR's own walk runs
out of Python's recursion limit may parse about one level deeper with this one.
"""

from __future__ import annotations

import importlib.metadata
from typing import Any

from antlr4.atn.ATNConfig import ATNConfig
from antlr4.atn.ATNConfigSet import ATNConfigSet
from antlr4.atn.ATNState import ATNState
from antlr4.atn.ParserATNSimulator import ParserATNSimulator
from antlr4.atn.SemanticContext import SemanticContext
from antlr4.atn.Transition import Transition
from antlr4.PredictionContext import PredictionContext, SingletonPredictionContext, merge

RUNTIME_VERSION = "4.13.2"  # the antlr4-python3-runtime whose closure these functions follow

_RULE_STOP, _STAR_LOOP_ENTRY = ATNState.RULE_STOP, ATNState.STAR_LOOP_ENTRY
_EPSILON, _RULE, _ACTION, _PRECEDENCE = Transition.EPSILON, Transition.RULE, Transition.ACTION, Transition.PRECEDENCE
_MATCHING = frozenset((Transition.ATOM, Transition.RANGE, Transition.SET))  # epsilon edges only for EOF, at the end
_EMPTY_RETURN_STATE = PredictionContext.EMPTY_RETURN_STATE
_NONE = SemanticContext.NONE
_new_config = object.__new__
_create_context = SingletonPredictionContext.create
# ANTLR's own methods, which install() replaces (kept to compare against, see the tests).
ANTLR_WALK = {"closureCheckingStopState": ParserATNSimulator.closureCheckingStopState,
              "closure_": ParserATNSimulator.closure_}


def _follow(config: ATNConfig, state: Any, context: Any) -> ATNConfig:
    """``ATNConfig(state=state, context=context, config=config)`` without the keyword handling."""
    follower = _new_config(ATNConfig)
    follower.state = state
    follower.alt = config.alt
    follower.context = context
    semantic = config.semanticContext
    follower.semanticContext = _NONE if semantic is None else semantic
    follower.reachesIntoOuterContext = config.reachesIntoOuterContext
    follower.precedenceFilterSuppressed = config.precedenceFilterSuppressed
    return follower


def _add(configs: Any, config: ATNConfig, merge_cache: Any) -> None:
    """``configs.add(config, merge_cache)``, with ``ATNConfigSet.add``'s lookup inline for a plain set."""
    if type(configs) is not ATNConfigSet:
        configs.add(config, merge_cache)
        return
    if configs.readonly:
        raise Exception("This set is readonly")
    semantic = config.semanticContext
    if semantic is not _NONE:
        configs.hasSemanticContext = True
    if config.reachesIntoOuterContext > 0:
        configs.dipsIntoOuterContext = True
    number, alt = config.state.stateNumber, config.alt
    key = hash((number, alt, hash(semantic)))  # ATNConfig.hashCodeForConfigSet
    bucket = configs.configLookup.get(key)
    if bucket is None:
        configs.configLookup[key] = [config]
    else:
        for existing in bucket:  # ATNConfig.equalsForConfigSet
            if config is existing:  # ANTLR lists a configuration added twice twice, and merges nothing
                break
            if isinstance(existing, ATNConfig) and number == existing.state.stateNumber \
                    and alt == existing.alt and semantic == existing.semanticContext:
                merged = merge(existing.context, config.context, not configs.fullCtx, merge_cache)
                existing.reachesIntoOuterContext = max(existing.reachesIntoOuterContext, config.reachesIntoOuterContext)
                if config.precedenceFilterSuppressed:
                    existing.precedenceFilterSuppressed = True
                existing.context = merged
                return
        else:
            bucket.append(config)
    configs.cachedHashCode = -1
    configs.configs.append(config)


def closure_checking_stop_state(sim: ParserATNSimulator, config: ATNConfig, configs: Any, busy: set, collect: bool,
                                full_context: bool, depth: int, eof_as_epsilon: bool) -> None:
    """``ParserATNSimulator.closureCheckingStopState``: at a rule's end, return to each caller on the stack."""
    state = config.state
    if state.stateType == _RULE_STOP:
        if not config.context.isEmpty():
            states = sim.atn.states
            for i in range(len(config.context)):
                context = config.context  # read again at each return, as ANTLR does: a merge may have replaced it
                return_state = context.getReturnState(i)
                if return_state is _EMPTY_RETURN_STATE:  # identity, as ANTLR tests it
                    if full_context:
                        _add(configs, ATNConfig(state=state, context=PredictionContext.EMPTY, config=config), sim.mergeCache)
                    else:  # no context left: follow the rule's follow links
                        closure(sim, config, configs, busy, collect, full_context, depth, eof_as_epsilon)
                    continue
                returned = _new_config(ATNConfig)  # ATNConfig(state, alt, context, semantic): no flags copied but one
                returned.state = states[return_state]
                returned.alt = config.alt
                returned.context = context.getParent(i)
                semantic = config.semanticContext
                returned.semanticContext = _NONE if semantic is None else semantic
                returned.reachesIntoOuterContext = config.reachesIntoOuterContext
                returned.precedenceFilterSuppressed = False
                closure_checking_stop_state(sim, returned, configs, busy, collect, full_context, depth - 1, eof_as_epsilon)
            return
        if full_context:
            _add(configs, config, sim.mergeCache)
            return
    closure(sim, config, configs, busy, collect, full_context, depth, eof_as_epsilon)


def closure(sim: ParserATNSimulator, config: ATNConfig, configs: Any, busy: set, collect: bool,
            full_context: bool, depth: int, eof_as_epsilon: bool) -> None:
    """``ParserATNSimulator.closure_``: add ``config`` when it can match a token, then follow its epsilon edges."""
    state = config.state
    if not state.epsilonOnlyTransitions:
        _add(configs, config, sim.mergeCache)
    at_rule_stop = state.stateType == _RULE_STOP
    first = True
    for transition in state.transitions:
        if first:
            first = False
            if state.stateType == _STAR_LOOP_ENTRY and sim.canDropLoopEntryEdgeInLeftRecursiveRule(config):
                continue
        kind = transition.serializationType
        keep_collecting = collect and kind != _ACTION
        if kind == _EPSILON or kind == _ACTION or kind == _PRECEDENCE and not (keep_collecting and depth == 0):
            target = _follow(config, transition.target, config.context)
        elif kind == _RULE:
            target = _follow(config, transition.target,
                             _create_context(config.context, transition.followState.stateNumber))
        elif kind in _MATCHING and not eof_as_epsilon:
            continue  # a token to match, not an epsilon edge
        else:
            target = sim.getEpsilonTarget(config, transition, keep_collecting, depth == 0, full_context, eof_as_epsilon)
            if target is None:
                continue
        new_depth = depth
        if at_rule_stop:  # fell off the end of the rule into the outer context
            dfa = sim._dfa
            if dfa is not None and dfa.precedenceDfa and \
                    transition.outermostPrecedenceReturn == dfa.atnStartState.ruleIndex:
                target.precedenceFilterSuppressed = True
            target.reachesIntoOuterContext += 1
            if target in busy:
                continue
            busy.add(target)
            configs.dipsIntoOuterContext = True
            new_depth -= 1
        else:
            if not transition.isEpsilon:
                if target in busy:
                    continue
                busy.add(target)
            if kind == _RULE and new_depth >= 0:
                new_depth += 1
        closure_checking_stop_state(sim, target, configs, busy, keep_collecting, full_context, new_depth, eof_as_epsilon)


WALK = {"closureCheckingStopState": closure_checking_stop_state, "closure_": closure}


def install() -> bool:
    """Make ANTLR's parser simulator walk closures with these functions; whether it did (the runtime matches).

    Example:
        >>> install(), ParserATNSimulator.closure_ is closure
        (True, True)
    """
    try:
        version = importlib.metadata.version("antlr4-python3-runtime")
    except importlib.metadata.PackageNotFoundError:  # a runtime without its metadata: of no known version
        return False
    if version != RUNTIME_VERSION:
        return False
    for name, function in WALK.items():
        setattr(ParserATNSimulator, name, function)
    return True
