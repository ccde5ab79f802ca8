"""Synthetic addition problems answered as ``#### N``: the data of ``referee demo``.

Every pair ``a + b`` with ``low <= a, b <= high`` is a problem; a seeded share of them is held
out for evaluation and never trained on, so held-out accuracy measures what the model
learned about addition, not what it memorised.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Sum:
    """One addition problem.

    Example:
        >>> problem = Sum(12, 7)
        >>> problem.question, problem.answer, problem.completion
        ('12+7', 19, '#### 19')
        >>> problem.prompt
        [{'role': 'user', 'content': '12+7'}]
    """

    a: int
    b: int

    @property
    def question(self) -> str:
        """The user's message."""
        return f"{self.a}+{self.b}"

    @property
    def answer(self) -> int:
        """The gold answer."""
        return self.a + self.b

    @property
    def completion(self) -> str:
        """The reply the demo teaches: the answer on a GSM8K ``#### N`` line."""
        return f"#### {self.answer}"

    @property
    def prompt(self) -> list[dict[str, str]]:
        """The conversational prompt TRL samples completions for."""
        return [{"role": "user", "content": self.question}]


def split_sums(low: int, high: int, held_out: int, *, seed: int = 0) -> tuple[list[Sum], list[Sum]]:
    """All sums with operands in ``[low, high]``, split into (training, held-out) at random.

    Example:
        >>> train, held_out = split_sums(0, 9, 20)
        >>> len(train), len(held_out), set(train) & set(held_out)
        (80, 20, set())
    """
    problems = [Sum(a, b) for a in range(low, high + 1) for b in range(low, high + 1)]
    if not 0 < held_out < len(problems):
        raise ValueError(f"held_out={held_out} must be between 1 and {len(problems) - 1} for operands {low}..{high}.")
    random.Random(seed).shuffle(problems)
    return problems[held_out:], problems[:held_out]


def grpo_rows(problems: list[Sum]) -> list[dict[str, Any]]:
    """Dataset rows for TRL: a conversational ``prompt`` and the gold in ``answer``.

    Example:
        >>> grpo_rows([Sum(2, 3)])
        [{'prompt': [{'role': 'user', 'content': '2+3'}], 'answer': '5'}]
    """
    return [{"prompt": problem.prompt, "answer": str(problem.answer)} for problem in problems]
