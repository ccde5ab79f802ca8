"""Two-stage LaTeX parsing in the sympy workers (ANTLR's SLL prediction first, full LL after a
failure) reads every answer exactly as latex2sympy's own LL parsing does."""

import pytest
from antlr4.atn.PredictionMode import PredictionMode
from latex2sympy2_extended.latex2sympy2 import _Latex2Sympy
from sympy import srepr

from referee.verifiers.math import sympy_worker

# Shapes real answers take, and one that SLL alone cannot parse (a long alternating polynomial).
SHAPES = [r"\frac{1}{2}", r"2\sqrt{3}+1", r"(-\infty, 3) \cup (5, \infty)", r"\{1, 2, 3\}", r"y = 2x + 3",
          r"\begin{pmatrix} 1 \\ 2 \end{pmatrix}", r"\left\lfloor \frac{n}{2} \right\rfloor", r"f(x) = 2x + 1",
          r"\frac{\pi}{6} + k\pi", r"(4, \log_{10} 2)", r"x \in [2, 5)", r"30^\circ", r"50\%", r"a_n = 2^n",
          r"k \geq 2", r"10^{3}, 10", r"\text{Evelyn}", r"-1 + x - x^2 + x^3 - x^4 + x^5"]
BROKEN = [r"\frac{", r"2 +* 3", r"\sqrt{}{}{"]
SLL_ALONE_FAILS = r"-1 + x - x^2 + x^3 - x^4 + x^5"


def _read(text):
    try:
        return [item if isinstance(item, str) else srepr(item) for item in sympy_worker._parse(text)]
    except Exception as exc:  # noqa: BLE001 (what latex2sympy raises is part of what must not change)
        return f"raised {type(exc).__name__}"


@pytest.fixture(autouse=True)
def one_stage_parsing(monkeypatch):
    """Every test starts from latex2sympy's own parser: ``prepare()`` (its doctest, a worker
    template) switches a whole process to two-stage parsing for good."""
    original = getattr(_Latex2Sympy.create_parser, "__wrapped__", _Latex2Sympy.create_parser)
    monkeypatch.setattr(_Latex2Sympy, "create_parser", original)


@pytest.fixture
def two_stage(monkeypatch):
    monkeypatch.setattr(_Latex2Sympy, "create_parser", sympy_worker._two_stage(_Latex2Sympy.create_parser))


def test_sll_alone_fails_on_one_shape_so_the_fallback_is_exercised():
    parser = _Latex2Sympy().create_parser(SLL_ALONE_FAILS)
    parser._interp.predictionMode = PredictionMode.SLL
    with pytest.raises(Exception):
        parser.math()


def test_two_stage_reads_every_shape_as_ll_does(monkeypatch):
    sympy_worker._parsed_gold.cache_clear()
    as_ll = [_read(text) for text in SHAPES + BROKEN]
    monkeypatch.setattr(_Latex2Sympy, "create_parser", sympy_worker._two_stage(_Latex2Sympy.create_parser))
    assert [_read(text) for text in SHAPES + BROKEN] == as_ll
    assert all(isinstance(read, list) and read for read in as_ll[:len(SHAPES)])  # the shapes do parse


def test_two_stage_parsers_predict_with_sll(two_stage):
    assert _Latex2Sympy().create_parser("1+1")._interp.predictionMode == PredictionMode.SLL


def test_verdicts_are_unchanged_by_two_stage_parsing(monkeypatch):
    pairs = [(r"\frac{\sqrt{3}}{2}", r"\sin 60^\circ"), (r"x^2-1", r"(x-1)(x+1)"), (r"(1, 2)", r"(2, 1)"),
             (r"2^{k-1}", r"\frac{2^k}{2}"), (SLL_ALONE_FAILS, r"x^5 - x^4 + x^3 - x^2 + x - 1")]
    options = sympy_worker.CompareOptions()
    as_ll = [sympy_worker.judge(gold, answer, options) for gold, answer in pairs]
    sympy_worker._parsed_gold.cache_clear()
    monkeypatch.setattr(_Latex2Sympy, "create_parser", sympy_worker._two_stage(_Latex2Sympy.create_parser))
    assert [sympy_worker.judge(gold, answer, options) for gold, answer in pairs] == as_ll
    assert as_ll[1] == (None, (True, True)) and as_ll[4] == (None, (True, True))
