"""A reward of one's own for answers written as JSON: ``{"answer": ...}`` checked by referee's maths
verifier against the gold in the dataset's ``final`` column, with a reason for every score.

Prove it on golden cases and audit it (from this folder)::

    referee check json_rewards:json_answer golden/json_answer.jsonl
    referee audit json_rewards:json_answer data.jsonl

Example:
    >>> json_answer(completions=['{"answer": "72"}', '{"answer": 71}', "72"], final=["72", "72", "72"])
    [1.0, 0.0, 0.0]
    >>> [v.reason for v in json_answer.verdicts(['{"answer": "1/2"}', "72"], final=["0.5", "72"])]
    ['1/2 (boxed) equals the gold 0.5', 'not a JSON object with an "answer" key']
"""

import json

from referee.rewards import completion_text, verdict_reward
from referee.verifiers import Verdict, get_verifier

MATH = get_verifier("math")


@verdict_reward(answer_template='{"answer": "{answer}"}')
def json_answer(completions, final, **kwargs):
    """One Verdict per completion: ``no_answer`` unless it is a JSON object with an ``answer`` key,
    else the maths verifier's Verdict on that answer against ``final``."""
    verdicts = []
    for completion, gold in zip(completions, final):
        try:
            answer = json.loads(completion_text(completion) or "")["answer"]
        except (ValueError, TypeError, KeyError):
            verdicts.append(Verdict("no_answer", reason='not a JSON object with an "answer" key'))
            continue
        verdicts.append(MATH.verify(f"\\boxed{{{answer}}}", gold))
    return verdicts
