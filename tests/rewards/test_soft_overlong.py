import pickle

import pytest
from hypothesis import given
from hypothesis import strategies as st

from referee.rewards import SoftOverlong, get_reward
from referee.rewards import policy


def test_dapo_shape():
    overlong = SoftOverlong(max_length=20480, buffer=4096)  # the DAPO paper's setting
    lengths = [0, 16384, 16385, 18432, 20480, 25000]
    expected = [0.0, 0.0, -1 / 4096, -0.5, -1.0, -1.0]
    assert overlong(completions=["x"] * 6, completion_ids=[[7] * n for n in lengths]) == pytest.approx(expected)


@given(max_length=st.integers(1, 4096), data=st.data())
def test_penalty_is_zero_then_a_ramp_to_minus_one(max_length, data):
    buffer = data.draw(st.integers(1, max_length))
    length = data.draw(st.integers(0, 2 * max_length))
    value = SoftOverlong(max_length, buffer).penalty(length)
    assert -1.0 <= value <= 0.0
    assert (value == 0.0) == (length <= max_length - buffer)
    if length >= max_length:
        assert value == -1.0
    assert SoftOverlong(max_length, buffer).penalty(length + 1) <= value  # never rewards length


def test_default_buffer_is_a_fifth_and_bad_settings_are_refused():
    assert SoftOverlong(max_length=1000).buffer == 200
    assert SoftOverlong(max_length=3).buffer == 1
    for bad in [dict(max_length=0), dict(max_length=1.5), dict(max_length=10, buffer=11), dict(max_length=10, buffer=0)]:
        with pytest.raises(ValueError, match="must be"):
            SoftOverlong(**bad)
    with pytest.raises(ValueError, match="max_length"):
        get_reward("soft_overlong")


def test_without_token_ids_the_reward_is_none_and_counted(monkeypatch):
    monkeypatch.setattr(policy, "_warned", set())
    logged = {}
    overlong = SoftOverlong(max_length=8)
    assert overlong(completions=["a", "b"], log_metric=logged.__setitem__) == [None, None]
    assert logged == {"rewards/soft_overlong/error": 1.0}
    assert overlong(completions=["a", "b"], completion_ids=[[1]], log_metric=logged.__setitem__) == [None, None]
    assert overlong(completions=["a"], completion_ids=[[1] * 8], log_metric=logged.__setitem__) == [-1.0]
    assert logged == {"rewards/soft_overlong/error": 0.0}


def test_pickles_with_its_name():
    copy = pickle.loads(pickle.dumps(get_reward("soft_overlong", max_length=10, buffer=5, name="overlong10")))
    assert copy.__name__ == "overlong10"
    assert copy(completions=["x"], completion_ids=[[1] * 9]) == [-0.8]
