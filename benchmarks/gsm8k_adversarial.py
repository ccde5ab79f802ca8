"""GSM8K verifier on adversarial completion shapes: time on a quarter of each text and on all of
it. Linear work takes about 4x as long on the whole text; quadratic work takes about 16x (a
quadratic extractor once took 78 s on 160 KB of unclosed boxes). The test suite counts Python
steps instead (tests/verifiers/test_gsm8k.py); this measures the regexes' own work too.

    python -m benchmarks.gsm8k_adversarial [--repeat 3]
"""

from __future__ import annotations

import argparse
import time

from referee.verifiers import gsm8k

# (repeated unit, repeats): the shapes of tests/verifiers/test_gsm8k.py::test_adversarial_shapes_stay_linear.
SHAPES: tuple[tuple[str, int], ...] = (
    ("\\boxed{", 5000), ("\\boxed{1", 20000), ("\\boxed{1}, ", 20000), ("The answer is ", 30000),
    ("#### \n", 50000), ("**1** ", 50000), ("1 or ", 50000),
)


def best_seconds(text: str, repeat: int) -> float:
    """The fastest of ``repeat`` runs of ``gsm8k.verify(text, 1)``."""
    timings = []
    for _ in range(repeat):
        started = time.perf_counter()
        gsm8k.verify(text, 1)
        timings.append(time.perf_counter() - started)
    return min(timings)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=3, help="runs per text; the fastest counts (default 3)")
    args = parser.parse_args()
    print(f"{'shape':<18} {'chars':>9} {'quarter s':>10} {'whole s':>9} {'growth':>7}")
    for unit, count in SHAPES:
        text = unit * count
        quarter, whole = best_seconds(text[: len(text) // 4], args.repeat), best_seconds(text, args.repeat)
        print(f"{unit!r:<18} {len(text):>9,} {quarter:>10.4f} {whole:>9.4f} {whole / max(quarter, 1e-9):>6.1f}x")


if __name__ == "__main__":
    main()
