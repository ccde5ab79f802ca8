"""The shipped LaTeX parser tables fit the installed parser, and a parser given them reads every
text exactly as one that learnt everything itself (the tables only save time)."""

import json
import marshal
import random
import subprocess
import sys
import zlib

import pytest

from referee.verifiers.math import parser_tables

# Shapes real answers take (inside and outside what the tables learnt), and texts that do not parse.
SHAPES = [r"\frac{1}{2}", r"2\sqrt{3}+1", r"(-\infty, 3) \cup (5, \infty)", r"\{1, 2, 3\}", r"y = 2x + 3",
          r"\begin{pmatrix} 1 \\ 2 \end{pmatrix}", r"\left\lfloor \frac{n}{2} \right\rfloor", r"f(x) = 2x + 1",
          r"\frac{\pi}{6} + k\pi", r"(4, \log_{10} 2)", r"x \in [2, 5)", r"30^\circ", r"50\%", r"a_n = 2^n",
          r"k \geq 2", r"10^{3}, 10", r"\text{Evelyn}", r"-1 + x - x^2 + x^3 - x^4 + x^5",
          r"N(n) = \left\lfloor \frac{n^2 + 3n}{6} \right\rfloor + (n \mod 2)", r"\frac{(d-1)!}{(d-k)!}",
          r"\angle BEA_{1} = \angle AEB_{1} = 45^{\circ}", r"(1, 7), (8, 0), (-1, -9)", r"\binom{39}{36}",
          r"\sum_{k=1}^{n} k^2", r"\int_0^1 x^2 \, dx", r"\lim_{x \to 0} \frac{\sin x}{x}", r"|x - 1| < 2",
          r"\frac{\log(2)}{\log\left(\frac{2}{3}\right)}", r"x_1 = 3, x_2 = -\frac{1}{2}", r"\overline{AB}"]
BROKEN = [r"\frac{", r"2 +* 3", r"\sqrt{}{}{", r"((((1", r"\left( 3", r"x = = 2", "}{"]
ATOMS = ["x", "n", "2", "17", "0.5", r"\pi", r"\sqrt{2}", r"\frac{1}{3}", "a_1", r"\infty", "k!", r"\log 3"]
JOINS = [" + ", " - ", r" \cdot ", "^", " = ", ", ", r" \leq ", " < ", r" \cup ", " / ", ""]


def generated(count: int, seed: int = 7) -> list[str]:
    """Random LaTeX in answer shapes: atoms joined by operators, some grouped, some malformed."""
    rng = random.Random(seed)
    texts = []
    for _ in range(count):
        parts = [rng.choice(ATOMS)]
        for _ in range(rng.randint(1, 6)):
            parts += [rng.choice(JOINS), rng.choice(ATOMS)]
        text = "".join(parts)
        if rng.random() < 0.3:
            text = rng.choice([r"\left( {} \right)", "({})", r"\{{{}\}}", "[{})", r"\frac{{{}}}{{2}}"]).format(text)
        texts.append(text)
    return texts


READ_IN_FRESH_PROCESS = """
import json, sys
from sympy import srepr
from referee.verifiers.math import parser_tables, sympy_worker
sympy_worker.prepare()
installed = parser_tables.install() if sys.argv[1] == "tables" else None
reads = []
for text in json.loads(sys.stdin.read()):
    try:
        reads.append([item if isinstance(item, str) else srepr(item) for item in sympy_worker._parse(text)])
    except Exception as exc:
        reads.append("raised " + type(exc).__name__)
lazy = [state for dfa in parser_tables._parser().decisionsToDFA for state in dfa._states
        if isinstance(state, parser_tables._LazyState)]
faithful = all(parser_tables._key(state.configs) == state._key and len(state.configs) > 0 for state in lazy)
print(json.dumps({"installed": installed, "reads": reads, "saved_states": len(lazy), "faithful": faithful}))
"""


def read_in_fresh_process(texts: list[str], tables: bool) -> dict:
    done = subprocess.run([sys.executable, "-c", READ_IN_FRESH_PROCESS, "tables" if tables else "none"],
                          input=json.dumps(texts), capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def test_a_parser_with_the_tables_reads_every_text_as_one_without():
    texts = SHAPES + BROKEN + generated(120)
    learnt, given = read_in_fresh_process(texts, tables=False), read_in_fresh_process(texts, tables=True)
    if not given["installed"]:  # only when latex2sympy2_extended or ANTLR's runtime was upgraded
        pytest.skip("the shipped LaTeX parser tables were built for another latex2sympy2_extended or ANTLR runtime: "
                    "rebuild them with python -m referee.verifiers.math.parser_tables --math-jsonl MATH500.jsonl")
    assert given["reads"] == learnt["reads"]
    parsed = [len(read) > 1 for read in learnt["reads"]]  # maths read, then the text itself
    assert any(parsed) and not all(parsed)
    # Every saved state that was decoded, decoded to what was saved (its configurations hash as before).
    assert given["saved_states"] > 100 and given["faithful"]
    assert learnt["saved_states"] == 0


def _with_fingerprint(saved: bytes, fingerprint: str) -> bytes:
    _, rows, dfas = _content(saved)
    return b"RPT1" + zlib.compress(marshal.dumps((fingerprint, rows, dfas)))


def test_tables_for_another_parser_or_a_damaged_file_leave_the_parser_untouched(tmp_path):
    dfas = list(parser_tables._parser().decisionsToDFA)
    other = tmp_path / "other.bin"
    other.write_bytes(_with_fingerprint(parser_tables.TABLES.read_bytes(), "0" * 64))
    damaged = tmp_path / "damaged.bin"
    damaged.write_bytes(parser_tables.TABLES.read_bytes()[:1000])
    foreign = tmp_path / "foreign.bin"
    foreign.write_bytes(b"not tables at all")
    assert [parser_tables.install(path) for path in (other, damaged, foreign, tmp_path / "missing.bin")] == [False] * 4
    assert all(now is before for now, before in zip(parser_tables._parser().decisionsToDFA, dfas))


def test_built_tables_install_and_read_as_the_parser_that_built_them(tmp_path):
    built = tmp_path / "built.bin"
    script = ("import sys; from pathlib import Path; from referee.verifiers.math import parser_tables; "
              "Path(sys.argv[1]).write_bytes(parser_tables.build(sys.argv[2:]))")
    subprocess.run([sys.executable, "-c", script, str(built), *SHAPES[:10]], check=True)
    check = READ_IN_FRESH_PROCESS.replace("parser_tables.install()", f"parser_tables.install(__import__('pathlib').Path({str(built)!r}))")
    done = subprocess.run([sys.executable, "-c", check, "tables"], input=json.dumps(SHAPES), capture_output=True,
                          text=True, check=True)
    given = json.loads(done.stdout)
    assert given["installed"] is True and given["faithful"] and given["saved_states"] > 10
    assert given["reads"] == read_in_fresh_process(SHAPES, tables=False)["reads"]


def _content(saved: bytes) -> tuple:
    return marshal.loads(zlib.decompress(saved[4:]))


def test_installed_tables_save_again_to_the_same_tables(tmp_path):
    """Every field of every saved state and context survives a round trip (decoded, saved again)."""
    built = tmp_path / "built.bin"
    script = ("import sys; from pathlib import Path; from referee.verifiers.math import parser_tables; "
              "Path(sys.argv[1]).write_bytes(parser_tables.build(sys.argv[2:]))")
    subprocess.run([sys.executable, "-c", script, str(built), *SHAPES], check=True)
    again = ("import sys; from pathlib import Path; from referee.verifiers.math import parser_tables; "
             "assert parser_tables.install(Path(sys.argv[1])); sys.stdout.buffer.write(parser_tables.build([]))")
    saved_again = subprocess.run([sys.executable, "-c", again, str(built)], capture_output=True, check=True).stdout
    assert _content(saved_again) == _content(built.read_bytes())


def test_the_corpus_is_each_answer_and_the_short_inline_maths_of_its_solution():
    rows = [{"answer": r"\frac{1}{2}", "solution": "We get $x = 1$, so $$y$$ and $" + "a + " * 20 + "b$."},
            {"answer": "3"}]
    assert parser_tables.answer_corpus(rows) == ["3", r"\frac{1}{2}", "x = 1", "y"]
