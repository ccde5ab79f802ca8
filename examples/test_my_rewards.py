"""The golden cases of the worked examples as pytest tests, one per line of each file.

The reward modules and golden files are found beside this file, so it runs from this folder or
from the repository root::

    cd examples && pytest test_my_rewards.py
    pytest examples/test_my_rewards.py
"""

import sys
from pathlib import Path

import pytest

from referee.rewards.testing import assert_golden, golden_params

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # my_rewards.py and json_rewards.py, whichever folder pytest runs from


@pytest.mark.parametrize("case", golden_params(HERE / "golden" / "accuracy.jsonl"))
def test_accuracy(case):
    assert_golden("my_rewards:accuracy", case)


@pytest.mark.parametrize("case", golden_params(HERE / "golden" / "shows_work.jsonl"))
def test_shows_work(case):
    assert_golden("my_rewards:shows_work", case)


@pytest.mark.parametrize("case", golden_params(HERE / "golden" / "json_answer.jsonl"))
def test_json_answer(case):
    assert_golden("json_rewards:json_answer", case)
