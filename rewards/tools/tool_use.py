"""``tool_use``: a shaping reward for calling the Python tool, paid only beside a right final answer.

A reward for calling a tool at all is hacked at once: a policy calls it for nothing. This one pays
1.0 when the conversation called the tool (at least ``min_calls`` times) *and* its final answer is
right by the ``when_correct`` verifier; else 0.0. It never pays a wrong answer, so at a weight
below correctness it only tells right answers apart: 0.1 (the shipped advice) makes a right answer
found with the tool worth 1.1 and one without it 1.0, while any wrong answer stays at 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from referee.verifiers import Verdict

from ..verdict_rewards import VerifierReward, score_verdicts

DEFAULT_GOLD = {"math": ("answer", "solution"), "gsm8k": ("answer",)}


def tool_calls(completion: Any, tool: str) -> int:
    """How many calls of ``tool`` a conversational completion made (a plain string made none).

    Example:
        >>> from referee.rewards.tool_probes import tool_conversation
        >>> tool_calls(tool_conversation("print(6 * 7)", "42", "It is 42."), "python"), tool_calls("It is 42.", "python")
        (1, 0)
    """
    if isinstance(completion, dict):
        completion = [completion]
    if not isinstance(completion, (list, tuple)):
        return 0
    return sum(1 for message in completion if isinstance(message, dict) and message.get("role") == "assistant"
               for call in message.get("tool_calls") or []
               if isinstance(call, dict) and (call.get("function") or {}).get("name") == tool)


class ToolUseReward:
    """Pays 1.0 for a conversation that called ``tool`` at least ``min_calls`` times and whose final
    answer the ``when_correct`` verifier judges right; 0.0 otherwise (``None`` when the answer cannot
    be judged: an unusable gold).

    Args:
        name: the reward's ``__name__`` (TRL's metric name).
        tool: the tool's name (``python`` for :class:`referee.rewards.tools.PythonTool`).
        when_correct: the verifier of the final answer (``math`` or ``gsm8k``).
        gold_column: where the gold is (default: ``answer``, then ``solution`` for maths).
        min_calls: the calls that count as using the tool.
        **options: the verifier's options (e.g. ``after_think=True``).

    Example:
        >>> from referee.rewards.tool_probes import tool_conversation
        >>> reward = ToolUseReward()
        >>> reward(completions=[tool_conversation("print(6 * 7)", "42", "So $\\\\boxed{42}$."),
        ...                     tool_conversation("print(6 * 7)", "42", "So $\\\\boxed{41}$."),
        ...                     [{"role": "assistant", "content": "So $\\\\boxed{42}$."}]], answer=["42"] * 3)
        [1.0, 0.0, 0.0]
    """

    kind = "shaping"
    reward_range = (0.0, 1.0)

    def __init__(self, name: str = "tool_use", *, tool: str = "python", when_correct: str = "math",
                 gold_column: str | Sequence[str] | None = None, min_calls: int = 1, **options: Any) -> None:
        if isinstance(min_calls, bool) or not isinstance(min_calls, int) or min_calls < 1:
            raise ValueError(f"min_calls={min_calls!r} must be a whole number >= 1")
        if when_correct not in DEFAULT_GOLD:
            raise ValueError(f"when_correct={when_correct!r}: give the verifier of the final answer, "
                             f"one of {', '.join(DEFAULT_GOLD)}")
        self.__name__ = name
        self.tool = tool
        self.min_calls = min_calls
        self.correctness = VerifierReward(f"{name}_answer", when_correct,
                                          gold_column=DEFAULT_GOLD[when_correct] if gold_column is None else gold_column,
                                          max_error_share=None, **options)
        self.gold_columns = self.correctness.gold_columns

    def __repr__(self) -> str:
        return (f"ToolUseReward({self.__name__!r}, tool={self.tool!r}, when_correct={self.correctness.verifier!r}, "
                f"min_calls={self.min_calls})")

    def __call__(self, prompts: Sequence[Any] | None = None, completions: Sequence[Any] | None = None,
                 completion_ids: Sequence[Sequence[int]] | None = None, **kwargs: Any) -> list[float | None]:
        """Score a batch the way TRL's ``GRPOTrainer`` calls reward functions (by keyword)."""
        return score_verdicts(self.__name__, self.verdicts, completions, kwargs)

    def verdicts(self, completions: Sequence[Any], **columns: Any) -> list[Verdict]:
        """Why each completion was paid or not: the calls it made and its final answer's verdict.

        Example:
            >>> ToolUseReward().verdicts(["So $\\\\boxed{42}$."], answer=["42"])[0].reason
            'no call of the python tool (1 needed): tool_use pays only a right answer found with the tool'
        """
        answers = self.correctness.verdicts(completions, **columns)
        verdicts = []
        for completion, answer in zip(completions, answers):
            calls = tool_calls(completion, self.tool)
            if answer.status == "error":
                verdicts.append(answer)
            elif calls < self.min_calls:
                verdicts.append(Verdict("wrong", reason=f"no call of the {self.tool} tool ({self.min_calls} needed): "
                                        f"{self.__name__} pays only a right answer found with the tool"
                                        if not calls else f"{calls} calls of the {self.tool} tool, "
                                        f"{self.min_calls} needed"))
            elif not answer.correct:
                verdicts.append(Verdict("wrong", extracted=answer.extracted,
                                        reason=f"{calls} tool calls, but the final answer is not right ({answer.reason})"))
            else:
                verdicts.append(Verdict("correct", 1.0, extracted=answer.extracted,
                                        reason=f"{calls} tool calls and a right final answer"))
        return verdicts
