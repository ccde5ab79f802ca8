"""One ``POST /get_reward`` request of ``referee serve``, judged on its own.

A training server answers many clients; a client's bad request must not change what the others
get. So, per request:

* a query over ``max_completion_chars`` is not read at all: it scores 0 as a ``timeout``
  (the completion's fault, like the verifiers' ``max_answer_chars``);
* a label that cannot be judged whatever the completion says (a gold that does not parse, a
  tests dict that is not one, no verifier for it, an unknown ``data_source``) makes the request a
  400 naming the label, and so does a query that does not contain its prompt (the prompt is never
  judged); nothing of it is counted;
* other ``error`` verdicts (a failed sandbox or verifier: not the completions' fault) score
  the ``fallback``; past ``max_error_share`` of the request's samples the request is a 503 so
  that the trainer stops rather than train on fallbacks. The next request starts afresh: the
  breaker never trips server-wide. ``GET /health`` shows the recent error count, whether the
  last request tripped the breaker and why, and the last refusal's sentence.
"""

from __future__ import annotations

import collections
import threading
from dataclasses import dataclass
from typing import Any

from referee.rewards.trainers.adapters import SampleScore, Scorer, TrainerSample
from referee.rewards.trainers.openrlhf import request_samples, result_of
from referee.rewards.trainers.routing import ConfigurationError
from referee.verifiers import Verdict


@dataclass(frozen=True)
class Reply:
    """An HTTP status and its JSON body.

    Example:
        >>> Reply(400, {"error": "bad"}).status
        400
    """

    status: int
    body: dict[str, Any]


class ErrorWindow:
    """What ``GET /health`` shows: the error flags of the last ``window`` samples judged, and the
    requests refused (400) or stopped by the per-request breaker (503), with the last one's sentence.
    Thread-safe.

    Example:
        >>> window = ErrorWindow(4)
        >>> window.record([True, False, False, False, False]); window.stats()
        {'errors': 0, 'samples': 4, 'window': 4}
        >>> window.outcome(Reply(503, {"error": "3 of the 4 samples were referee errors"})); window.breaker()
        {'tripped': True, 'trips': 1, 'reason': '3 of the 4 samples were referee errors'}
        >>> window.outcome(Reply(200, {})); window.breaker()["tripped"], window.refused()
        (False, {'requests': 0, 'last': None})
    """

    def __init__(self, window: int) -> None:
        self.window = window
        self._flags: collections.deque[bool] = collections.deque(maxlen=window)
        self._lock = threading.Lock()
        self._trips = 0
        self._trip_reason: str | None = None
        self._tripped = False
        self._refusals = 0
        self._refusal: str | None = None

    def record(self, flags: list[bool]) -> None:
        """Add one error flag per judged sample."""
        with self._lock:
            self._flags.extend(flags)

    def outcome(self, reply: Reply) -> None:
        """Note how a ``/get_reward`` request ended: 503 trips the breaker (until the next judged
        request), 400 is a refusal; either keeps its sentence."""
        with self._lock:
            if reply.status == 503:
                self._trips += 1
                self._trip_reason = str(reply.body.get("error"))
            elif reply.status >= 400:
                self._refusals += 1
                self._refusal = str(reply.body.get("error"))
            if reply.status != 400:  # a refused request judged nothing: it neither trips nor clears the breaker
                self._tripped = reply.status == 503

    def stats(self) -> dict[str, int]:
        """The errors among the last ``window`` samples judged."""
        with self._lock:
            return {"errors": sum(self._flags), "samples": len(self._flags), "window": self.window}

    def breaker(self) -> dict[str, Any]:
        """Whether the last judged request tripped the per-request breaker, the trips so far, the last one's reason."""
        with self._lock:
            return {"tripped": self._tripped, "trips": self._trips, "reason": self._trip_reason}

    def refused(self) -> dict[str, Any]:
        """The requests refused with 400 so far and the last one's sentence."""
        with self._lock:
            return {"requests": self._refusals, "last": self._refusal}


def _label_text(label: Any) -> str:
    text = label if isinstance(label, str) else repr(label)
    return repr(text if len(text) <= 80 else text[:77] + "...")


def _too_long(query: Any, limit: int) -> Verdict:
    return Verdict("timeout", reason=f"the query is {len(query)} characters long, over this server's "
                                     f"--max-completion-chars={limit}; not read", details={"limit": "max_completion_chars"})


def judge_request(payload: Any, scorer: Scorer, max_completion_chars: int, errors: ErrorWindow) -> Reply:
    """Judge one ``/get_reward`` body (OpenRLHF's ``{"query", "prompts", "labels"}``) under the rules above.

    Example:
        >>> from referee.rewards.trainers.adapters import AdapterOptions
        >>> scorer = Scorer(AdapterOptions(default_verifier="gsm8k"))
        >>> judge_request({"query": ["#### 18", "#### 1" * 50], "labels": ["18", "1"]}, scorer, 100, ErrorWindow(8)).body["rewards"]
        [1.0, 0.0]
        >>> reply = judge_request({"query": ["#### 18"], "labels": ["eighteen"]}, scorer, 100, ErrorWindow(8))
        >>> reply.status, reply.body["error"]
        (400, "label 0 ('eighteen') cannot be judged: gold 'eighteen' is not a single number; fix the label (1 of the 1 labels of this request cannot be judged).")
    """
    queries = payload.get("query") if isinstance(payload, dict) else None
    long_ones: set[int] = set()
    if isinstance(queries, list):
        long_ones = {i for i, q in enumerate(queries) if isinstance(q, str) and len(q) > max_completion_chars}
        if long_ones:  # never read: not even the prompt is looked for in them
            payload = {**payload, "query": ["" if i in long_ones else q for i, q in enumerate(queries)]}
    try:
        samples = request_samples(payload)
    except ValueError as exc:
        return Reply(400, {"error": str(exc)})
    unjudgeable = [i for i, sample in enumerate(samples) if sample.problem is not None]
    if unjudgeable:
        return Reply(400, {"error": f"query {unjudgeable[0]}: {samples[unjudgeable[0]].problem}",
                           "queries": unjudgeable})
    labels = payload["labels"]
    for i, sample in enumerate(samples):
        try:
            scorer.route(sample)
        except ConfigurationError as exc:
            return Reply(400, {"error": f"label {i} ({_label_text(labels[i])}): {exc}", "labels": [i]})
    judged = [i for i in range(len(samples)) if i not in long_ones]
    scores: list[SampleScore | None] = [None] * len(samples)
    for i in long_ones:
        scores[i] = SampleScore(0.0, _too_long(queries[i], max_completion_chars), None)
    for i, score in zip(judged, scorer.score([samples[i] for i in judged], record=False)):
        scores[i] = score
    failed = [i for i, score in enumerate(scores) if score is not None and score.verdict.status == "error"]
    unusable = _unusable_labels(scorer, samples, failed)
    if unusable:
        first, reason = unusable[0]
        return Reply(400, {"error": f"label {first} ({_label_text(labels[first])}) cannot be judged: {reason.rstrip('.')}; "
                                    f"fix the label ({len(unusable)} of the {len(samples)} labels of this request "
                                    "cannot be judged).", "labels": [i for i, _ in unusable]})
    final = [score for score in scores if score is not None]
    errors.record([score.verdict.status == "error" for score in final])
    share = scorer.options.max_error_share
    if len(failed) > share * len(final):
        return Reply(503, {"error": f"{len(failed)} of the {len(final)} samples of this request were referee errors "
                                    f"(more than {share:.0%}), the last: {final[failed[-1]].verdict.reason.rstrip('.')}. "
                                    "Not the completions' fault (a failed sandbox or verifier): fix the cause before "
                                    "training on these rewards, or raise --max-error-share."})
    return Reply(200, result_of(final))


def _unusable_labels(scorer: Scorer, samples: list[TrainerSample], failed: list[int]) -> list[tuple[int, str]]:
    """(index, reason) of the failed samples whose label fails even for an empty completion (no code runs for one)."""
    if not failed:
        return []
    probes = scorer.score([TrainerSample("", samples[i].ground_truth, samples[i].data_source, samples[i].extra_info)
                           for i in failed], record=False)
    return [(i, probe.verdict.reason) for i, probe in zip(failed, probes) if probe.verdict.status == "error"]
