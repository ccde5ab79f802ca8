"""The README's worked example: a correctness reward and a shaping reward for a dataset whose
gold number is in a column ``final`` and whose answers end with a ``#### N`` line.

Prove them on golden cases and audit them for reward hacking (from this folder)::

    referee check my_rewards:accuracy golden/accuracy.jsonl
    referee check my_rewards:shows_work golden/shows_work.jsonl
    referee audit "my_rewards:accuracy + 0.2*think_format" data.jsonl

Example:
    >>> accuracy(completions=["48 + 24 = 72\\n#### 72", "#### 71"], final=["72", "72"])
    [1.0, 0.0]
    >>> shows_work(completions=["48 + 24 = 72\\n#### 72", "#### 72"])
    [1.0, 0.0]
"""

from referee.rewards import FormatReward, VerifierReward

# Correctness: the number on the "#### N" line, against the gold in the dataset's "final" column.
accuracy = VerifierReward("accuracy", "gsm8k", gold_column="final", mode="strict")

# Shaping: at least one worked step such as "48 + 24 = 72".
shows_work = FormatReward("shows_work", "regex", pattern=r"\d\s*[-+*/x]\s*\d+\s*=\s*\d")
