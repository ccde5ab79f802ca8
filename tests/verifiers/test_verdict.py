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


def test_verdicts_hash_by_value_and_equal_ones_hash_equal():
    first = Verdict("wrong", 0.5, "7", "7 of 14 tests", {"tests": [{"kind": "wrong", "args": [1, 2]}], "jobs": 1})
    again = Verdict("wrong", 0.5, "7", "7 of 14 tests", {"jobs": 1, "tests": [{"args": [1, 2], "kind": "wrong"}]})
    assert first == again and hash(first) == hash(again)
    assert len({first, again, Verdict("wrong", 0.5, "7", "7 of 14 tests", {"jobs": 2})}) == 2
    assert Verdict("correct", 1.0) != Verdict("correct", 1.0, details={"source": "boxed"})


def test_a_verdict_repeated_over_a_batch_shares_no_mutable_details():
    from referee.rewards.policy import error_verdict
    from referee.verifiers import gsm8k

    repeated = [error_verdict("bad_column", "column 'answer' holds 1 values for 3 completions")] * 3
    bad_timeout = gsm8k.verify_batch(["#### 1", "#### 2"], [1, 2], batch_timeout=-1)
    for verdicts in (repeated, bad_timeout):
        with pytest.raises(TypeError, match="read-only"):
            verdicts[0].details["seen"] = True
        for change in (lambda d: d.update(seen=True), lambda d: d.setdefault("seen", True), lambda d: d.pop("kind"),
                       lambda d: d.clear(), lambda d: d.popitem(), lambda d: d.__delitem__("kind")):
            with pytest.raises(TypeError, match="read-only"):
                change(verdicts[0].details)
        assert all("seen" not in v.details for v in verdicts)
    assert repeated[1].details == {"kind": "bad_column"}


def test_the_callers_dict_stays_the_callers():
    details = {"passed": 7}
    verdict = Verdict("wrong", 0.5, details=details)
    details["passed"] = 8
    assert verdict.details == {"passed": 7}


def test_details_still_behave_as_a_dict_for_json_copies_and_pickles():
    import copy
    import pickle

    verdict = Verdict("wrong", 0.5, details={"tests": [{"kind": "wrong"}]})
    assert isinstance(verdict.details, dict) and json.loads(json.dumps(verdict.details)) == {"tests": [{"kind": "wrong"}]}
    assert dataclasses.asdict(verdict)["details"] == {"tests": [{"kind": "wrong"}]}
    for clone in (pickle.loads(pickle.dumps(verdict)), copy.deepcopy(verdict), copy.copy(verdict)):
        assert clone == verdict and hash(clone) == hash(verdict)
        with pytest.raises(TypeError, match="read-only"):
            clone.details["tests"] = []
    changed = {**verdict.details, "jobs": 1}
    changed["jobs"] = 2  # a copy is a plain dict again
    assert dataclasses.replace(verdict, details=changed).details == {"tests": [{"kind": "wrong"}], "jobs": 2}
