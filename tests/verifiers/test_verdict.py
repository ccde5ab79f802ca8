"""Verdict: the invariants every verifier's result keeps."""

from __future__ import annotations

import dataclasses
import json

import pytest

from referee.verifiers import Verdict


@pytest.mark.parametrize(
    "status, score",
    [("correct", 1.0), ("correct", 1), ("wrong", 0.0), ("wrong", 0.25), ("wrong", 1), ("no_answer", 0),
     ("timeout", 0.0), ("error", 0.0)],
)
def test_valid_verdicts_store_a_float_score(status, score):
    verdict = Verdict(status, score)
    assert type(verdict.score) is float and verdict.score == score
    assert verdict.correct == (status == "correct")
    assert verdict.is_completion_fault == (status != "error")


@pytest.mark.parametrize(
    "status, score, message",
    [("right", 1.0, "status 'right' is not one of"), ("Correct", 1.0, "is not one of"),
     ("correct", 0.5, "must score 1.0"), ("correct", float("nan"), "must score 1.0"),
     ("wrong", float("nan"), "must be a number in [0, 1]"), ("wrong", -0.1, "must be a number in [0, 1]"),
     ("wrong", 1.5, "must be a number in [0, 1]"), ("error", 1.0, "error Verdict must score 0.0"),
     ("no_answer", 0.5, "must score 0.0"), ("timeout", float("nan"), "must score 0.0")],
)
def test_invalid_verdicts_are_refused_with_the_reason(status, score, message):
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]")):
        Verdict(status, score)


def test_a_score_that_is_not_a_number_is_refused():
    with pytest.raises((TypeError, ValueError)):
        Verdict("wrong", "half")


def test_verdicts_are_immutable_and_serialise():
    verdict = Verdict("wrong", 0.5, extracted="7", reason="7 of 14 tests", details={"passed": 7})
    with pytest.raises(dataclasses.FrozenInstanceError):
        verdict.score = 1.0  # type: ignore[misc]
    assert json.loads(json.dumps(verdict.to_dict())) == {
        "status": "wrong", "score": 0.5, "extracted": "7", "reason": "7 of 14 tests", "details": {"passed": 7}}


def test_defaults_replace_and_pickle_keep_the_fields():
    import pickle

    bare = Verdict("no_answer")
    assert (bare.score, bare.extracted, bare.reason, bare.details) == (0.0, None, "", {})
    assert Verdict("error").details is not bare.details  # a fresh dict each time
    changed = dataclasses.replace(Verdict("wrong", 0.5, "7"), status="correct", score=1.0)
    assert changed == Verdict("correct", 1.0, "7")
    with pytest.raises(ValueError, match="must score 1.0"):
        dataclasses.replace(changed, score=0.5)
    assert pickle.loads(pickle.dumps(changed)) == changed
    assert [f.name for f in dataclasses.fields(Verdict)] == ["status", "score", "extracted", "reason", "details"]


def test_a_bad_status_is_named_before_the_score_is_read():
    with pytest.raises(ValueError, match="status 'bogus'"):
        Verdict("bogus", None)  # type: ignore[arg-type]


def test_dataclass_subclasses_keep_the_checks():
    @dataclasses.dataclass(frozen=True)
    class Tagged(Verdict):
        tag: str = ""

    assert Tagged("wrong", 1, tag="x").score == 1.0 and type(Tagged("wrong", 1).score) is float
    with pytest.raises(ValueError, match="is not one of"):
        Tagged("bogus", 5.0, tag="x")
    with pytest.raises(ValueError, match="must score 1.0"):
        Tagged("correct", 0.5)
