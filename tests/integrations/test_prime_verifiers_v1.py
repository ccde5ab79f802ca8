"""Prime Intellect's verifiers 0.4.0 (``verifiers.v1``) scoring with referee's documented task (``make test-integrations``).

The v1 snippet of docs/integrations.md runs as written (``MathData``, ``MathTask`` with a
``score_completion`` reward and a ``fault_signals`` metric); its tasks are then scored by
verifiers' own ``Task.score`` (metrics first, then rewards, each group concurrently) inside the
``boundary(TaskError, "scoring")`` a rollout puts around it, on ``vf.Trace`` objects whose last
reply is a sampled assistant message. verifiers 0.4.0 is installed with ``--no-deps`` and the
packages ``import verifiers.v1`` loads (``.venv-integrations-verifiers-0.4.0``, first on PYTHONPATH
for this file).
"""

import asyncio

import pytest

from tests.integrations.conftest import prime_verifiers

prime_verifiers("0.4.0")
import verifiers.v1 as vf  # noqa: E402
from verifiers.v1.errors import TaskError, boundary  # noqa: E402

from referee.rewards.trainers.adapters import ErrorRateExceeded  # noqa: E402


@pytest.fixture
def documented_task(documented):
    """docs/integrations.md's v1 snippet, run as written: its namespace (``MathData``, ``MathTask``, ...)."""
    namespace = {"__name__": "documented_v1"}
    exec(documented.find("class MathTask(vf.Task[MathData]):"), namespace)
    assert namespace["vf"] is vf and issubclass(namespace["MathTask"], vf.Task)
    return namespace


def trace_of(task, reply):
    """A ``vf.Trace`` as a rollout leaves it for scoring: the prompt, then the model's (sampled) reply."""
    return vf.Trace(task=vf.TraceTask(type=type(task).__name__, data=task.data, key=task.key, hash=task.hash),
                    agent=vf.AgentInfo(config=vf.AgentConfig(), name="solver", trainable=False),
                    nodes=[vf.MessageNode(message=vf.UserMessage(content=task.data.prompt)),
                           vf.MessageNode(parent=0, message=vf.AssistantMessage(content=reply), sampled=True)])


async def score(task, trace):
    """What a rollout does at its scoring stage: ``Task.score`` inside verifiers' scoring boundary."""
    async with boundary(TaskError, "scoring"):
        await task.score(trace)
    return trace


# (reply, gold, reward, the fault signal that must be 1)
ROWS = [
    ("so the area is $\\boxed{\\dfrac{1}{2}}$.", "0.5", 1.0, None),
    ("The answer is $\\boxed{3}$.", "0.5", 0.0, None),
    ("I am not sure.", "0.5", 0.0, "referee_no_answer"),
    ("so $\\boxed{2}$", "not a number {", 0.0, "referee_error"),  # a gold that does not parse: the fallback
]


def test_the_documented_task_keeps_the_fault_signals_and_judges_each_rollout_once(documented_task, scorer_calls):
    MathData, MathTask = documented_task["MathData"], documented_task["MathTask"]
    tasks = [MathTask(MathData(prompt="What is the area?", answer=gold)) for _, gold, _, _ in ROWS]
    traces = [trace_of(task, reply) for task, (reply, *_rest) in zip(tasks, ROWS)]

    async def score_all():  # rollouts are scored concurrently
        return await asyncio.gather(*(score(task, trace) for task, trace in zip(tasks, traces)))

    for trace, (reply, gold, reward, signal) in zip(asyncio.run(score_all()), ROWS):
        assert trace.rewards["correct"].score == reward and trace.reward == reward, (reply, trace.rewards)
        assert trace.metrics == {name: (1.0 if name == signal else 0.0)
                                 for name in ("referee_error", "referee_timeout", "referee_no_answer")}, (reply, trace.metrics)
        assert not trace.errors
    assert scorer_calls == [1] * len(ROWS)  # the metric and the reward of a rollout share one judgement


def test_an_outage_gets_past_verifiers_scoring_boundary(documented_task):
    """A plain Exception in a task's reward becomes a TaskError the rollout records (and trains on); referee's
    stop, a BaseException, passes both boundaries. The documented task uses the default breaker: more than
    5% of 512, so the 26th broken gold in a row stops it."""
    MathData, MathTask = documented_task["MathData"], documented_task["MathTask"]
    with pytest.raises(TaskError):  # what a bug in a reward would be: recorded on the trace by the rollout
        asyncio.run(score(MathTask(MathData(prompt="x", answer="0.5")), None))

    async def score_broken_golds():
        for n in range(40):
            task = MathTask(MathData(prompt=f"Question {n}", answer=f"not a number {{ {n}"))
            await score(task, trace_of(task, f"so $\\boxed{{{n}}}$"))

    with pytest.raises(ErrorRateExceeded, match="referee errors"):
        asyncio.run(score_broken_golds())
