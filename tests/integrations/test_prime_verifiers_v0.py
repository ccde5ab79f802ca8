"""Prime Intellect's verifiers 0.3.1 (the v0 API) scoring with referee's Rubric functions (``make test-integrations``).

The snippet of docs/integrations.md runs as written (``import verifiers as vf``, ``rubric_functions``,
``vf.Rubric(funcs=..., weights=...)``); the rollouts are then scored by that Rubric's own
``score_rollout`` and ``score_group`` (what an environment calls after generation), on ``vf.State``
objects laid out as an environment leaves them (``input``: prompt, answer, info; ``completion``:
chat messages). verifiers 0.3.1 is installed with ``--no-deps`` and the packages its ``vf.Rubric``
import chain loads (``.venv-integrations-verifiers-0.3.1``, first on PYTHONPATH for this file).
"""

import asyncio

import pytest

from tests.integrations.conftest import prime_verifiers

vf = prime_verifiers("0.3.1")

from referee.rewards.trainers.adapters import ErrorRateExceeded  # noqa: E402
from referee.rewards.trainers.routing import UnknownDataSource  # noqa: E402


def state(completion, answer, info=None):
    """A rollout's ``vf.State`` as the environment leaves it for the Rubric."""
    prompt = [{"role": "user", "content": "Solve it."}]
    messages = [{"role": "assistant", "content": completion}] if isinstance(completion, str) else completion
    return vf.State(input={"prompt": prompt, "answer": answer, "info": info or {}, "example_id": 0},
                    completion=messages, trajectory=[])


AS_DOCUMENTED = object()


def documented_rubric(documented, verifier=AS_DOCUMENTED, **options):
    """docs/integrations.md's v0 snippet, run as written; the Rubric of another ``rubric_functions`` call when asked."""
    namespace = {}
    exec(documented.find("rubric = vf.Rubric(funcs=funcs, weights=weights)"), namespace)
    assert isinstance(namespace["rubric"], vf.Rubric) and namespace["vf"] is vf
    if verifier is AS_DOCUMENTED:
        return namespace["rubric"]
    funcs, weights = namespace["rubric_functions"](verifier, **options)
    return vf.Rubric(funcs=funcs, weights=weights)


# (completion, answer, reward, the weight-0 metric that must be 1)
MATH_ROWS = [
    ("so the area is $\\boxed{\\dfrac{1}{2}}$.", "0.5", 1.0, None),
    ("The answer is $\\boxed{3}$.", "0.5", 0.0, None),
    ("I am not sure.", "0.5", 0.0, "referee_no_answer"),
    ("so $\\boxed{2}$", "not a number {", 0.0, "referee_error"),  # a gold that does not parse: the fallback
]


def test_the_documented_rubric_scores_rollouts_and_shows_referees_faults(documented):
    rubric = documented_rubric(documented)
    assert [func.__name__ for func in rubric.funcs] == ["referee_math", "referee_error", "referee_timeout", "referee_no_answer"]
    states = [state(completion, answer) for completion, answer, _, _ in MATH_ROWS]
    asyncio.run(rubric.score_group(states))  # the rollouts of a group, concurrently
    for row, scored in zip(MATH_ROWS, states):
        assert scored["reward"] == row[2] and scored["metrics"]["referee_math"] == row[2], (row, scored["metrics"])
        for metric in ("referee_error", "referee_timeout", "referee_no_answer"):
            assert scored["metrics"][metric] == (1.0 if metric == row[3] else 0.0), (row, scored["metrics"])
    single = state(*MATH_ROWS[0][:2])
    asyncio.run(rubric.score_rollout(single))
    assert single["reward"] == 1.0 and single["metrics"]["referee_error"] == 0.0


def test_rows_routed_by_info(documented):
    rubric = documented_rubric(documented, None)  # rubric_functions(None): each row's info says
    tests = {"fn_name": "double", "inputs": [[9]], "outputs": [18]}
    states = [state("```python\ndef double(x):\n    return 2 * x\n```", "", {"verifier": "code", "tests": tests}),
              state("9 * 2 = 18\n#### 18", "18", {"data_source": "openai/gsm8k"}),
              state("#### 17", "18", {"data_source": "openai/gsm8k"})]
    asyncio.run(rubric.score_group(states))
    assert [scored["reward"] for scored in states] == [1.0, 1.0, 0.0]
    with pytest.raises(UnknownDataSource, match="did you mean 'openai/gsm8k'"):  # past the Rubric's `except Exception`
        asyncio.run(rubric.score_rollout(state("#### 18", "18", {"data_source": "openai/gms8k"})))


def test_an_outage_stops_the_rubric_instead_of_scoring_zeros(documented):
    rubric = documented_rubric(documented, "gsm8k", max_error_share=0.25, error_window=4)
    with pytest.raises(ErrorRateExceeded):  # a Rubric logs an Exception and scores 0: this gets past it
        asyncio.run(rubric.score_group([state("#### 18", "eighteen") for _ in range(4)]))
