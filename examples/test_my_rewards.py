"""The golden cases of the worked example as pytest tests, one per line of each file.

Run from this folder (the reward paths and golden files are relative to it)::

    cd examples && pytest test_my_rewards.py
"""

import pytest

from referee.rewards.testing import assert_golden, golden_params


@pytest.mark.parametrize("case", golden_params("golden/accuracy.jsonl"))
def test_accuracy(case):
    assert_golden("my_rewards:accuracy", case)


@pytest.mark.parametrize("case", golden_params("golden/shows_work.jsonl"))
def test_shows_work(case):
    assert_golden("my_rewards:shows_work", case)
