"""Programs as real datasets' harnesses run them: LeetCode-style call-based programs find the
standard imports APPS and LiveCodeBench give them; fences glued to tags are found; prose is no
answer; a program compiles as plain Python would, never with the judge's ``__future__`` flags."""

import pytest

from referee.verifiers import code

OPTIONS = {"timeout": 2.0, "workers": 1}
TOP_K = {"format": "call", "fn_name": "topKFrequent", "inputs": [[[1, 1, 1, 2, 2, 3], 2], [[4], 1]],
         "outputs": [[1, 2], [4]]}
LEETCODE = '''class Solution:
    def topKFrequent(self, nums: List[int], k: int) -> List[int]:
        counts = defaultdict(int)
        for n in nums:
            counts[n] += 1
        best = heapq.nlargest(k, counts, key=counts.get)
        assert bisect_left(sorted(best), inf) == len(best) and Counter(best) and deque(best)
        return best
'''


def test_a_leetcode_program_that_imports_nothing_finds_the_standard_names():
    verdict = code.verify(f"```python\n{LEETCODE}```", TOP_K, **OPTIONS)
    assert verdict.status == "correct", verdict.reason


def test_a_name_the_program_only_got_from_the_standard_imports_is_not_its_function():
    gcd = {"format": "call", "fn_name": "gcd", "inputs": [[4, 6]], "outputs": [2]}
    assert code.verify("x = 1\n", gcd, **OPTIONS).reason == "the test failed: the program defines no function gcd"
    assert code.verify("def gcd(a, b):\n    return math.gcd(a, b)\n", gcd, **OPTIONS).correct


def test_builtins_that_math_shadows_stay_the_builtins():
    power = {"format": "call", "fn_name": "f", "inputs": [[3]], "outputs": [[8, 3, 3]]}
    program = "def f(n):\n    return [pow(2, n), pow(2, n, 5), sum([1, 2], 0)]\n"
    assert code.verify(program, power, **OPTIONS).correct


def test_other_formats_run_the_program_as_written():
    asserts = {"format": "asserts", "asserts": ["assert f() == 1"]}
    verdict = code.verify("def f():\n    return len(defaultdict(int)) + 1\n", asserts, **OPTIONS)
    assert verdict.status == "wrong" and "NameError" in verdict.reason


def test_the_program_does_not_inherit_the_judges_future_imports():
    asserts = {"format": "asserts", "asserts": ["assert f(1) == 2"]}
    verdict = code.verify("def f(x: Undefined) -> int:\n    return 2 * x\n", asserts, **OPTIONS)
    assert verdict.status == "wrong" and "NameError" in verdict.reason, verdict.reason  # as plain Python says
    assert code.verify("from __future__ import annotations\ndef f(x: Undefined) -> int:\n    return 2 * x\n",
                       asserts, **OPTIONS).correct


@pytest.mark.parametrize("completion", ["<answer>```python\ndef f(x):\n    return 2 * x\n```</answer>",
                                        "Final:```python\ndef f(x):\n    return 2 * x```</answer>"])
def test_a_fence_glued_to_tags_is_found(completion):
    verdict = code.verify(completion, {"format": "asserts", "asserts": ["assert f(1) == 2"]}, **OPTIONS)
    assert verdict.status == "correct", verdict.reason


def test_prose_without_code_is_no_answer():
    verdict = code.verify("I am not sure how to solve this; maybe sort the list first.", TOP_K, **OPTIONS)
    assert (verdict.status, verdict.score, verdict.reason) == ("no_answer", 0.0, "the completion holds no code")
