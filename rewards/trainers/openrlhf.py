"""referee in OpenRLHF: ``reward_func`` for ``--reward.remote_url my_reward.py``, and the remote protocol.

OpenRLHF loads ``reward_func`` from a ``.py`` file given as the remote reward URL (this module's
own file works: ``python -c "import referee.rewards.trainers.openrlhf as m; print(m.__file__)"``) and calls
``reward_func(queries, prompts, labels)`` in a thread (``asyncio.to_thread``), one sample per
call. ``queries`` are prompt + response decoded *with* special tokens: the prompt is cut off the
front and trailing special tokens (``<|im_end|>``, ``</s>``, ...) off the end before judging.
The prompt is never judged: a query in which its prompt cannot be found (not even with spaces
ignored) is not judged at all (an ``error``, not the completion's fault), since a worked answer in
the prompt would otherwise score the response.
The result is ``{"rewards", "scores", "extra_logs"}``: one reward and one score per query (the
same numbers: referee's rewards are in [0, 1] already, what OpenRLHF's dynamic filtering wants),
and ``extra_logs`` of scalar means (OpenRLHF logs one number per key and sample).

A label is the gold answer, or a JSON object / dict naming what referee needs:
``{"verifier": "code", "tests": {...}}``, ``{"data_source": "openai/gsm8k", "answer": "18"}``.
OpenRLHF has no ``None`` reward: an ``error`` scores the ``fallback`` and counts in
``extra_logs["referee_error"]``; too many stop the run.

:func:`handle_get_reward` answers the same thing over HTTP (``referee serve``'s ``POST
/get_reward``, OpenRLHF's remote reward-model protocol: ``{"query", "prompts", "labels"}`` in).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping, Sequence
from typing import Any

# Absolute imports: OpenRLHF may load this very file by path (--reward.remote_url .../openrlhf.py).
from referee.rewards.trainers.adapters import SampleScore, Scorer, TrainerSample, mean_metrics, scorer_for
from referee.rewards.trainers.routing import OPENRLHF_FIELDS, ConfigurationError

# Special tokens a decoded query may end with (chat templates' end-of-turn, EOS, padding).
_TRAILING_SPECIAL_RE = re.compile(r"(?:\s*(?:<\|[^|<>\s]{1,40}\|>|</s>|<eos>|<end_of_turn>|<pad>|<\uff5cend\u2581of\u2581sentence\uff5c>))+\s*\Z")

# Options for the file-loaded reward_func come from this environment variable (a JSON object),
# since OpenRLHF passes none.
OPTIONS_ENV = "REFEREE_OPTIONS"


class PromptNotFound(ValueError):
    """A query does not contain its prompt: where the response starts is unknown, so it is not judged.

    Example:
        >>> issubclass(PromptNotFound, ValueError)
        True
    """


def response_text(query: str, prompt: Any) -> str:
    """The response in an OpenRLHF query: the prompt cut off the front, trailing special tokens off the end.

    The prompt is looked for at the start, then anywhere (a BOS before it), then with runs of
    spaces ignored (a tokenizer's round trip may change them); a prompt found nowhere raises
    :class:`PromptNotFound` rather than have the prompt judged. No prompt (``None`` or ``""``):
    the whole query is the response.

    Example:
        >>> response_text("<|im_start|>user\\n9*2?<|im_end|>\\n<|im_start|>assistant\\n#### 18<|im_end|><|endoftext|>",
        ...               "<|im_start|>user\\n9*2?<|im_end|>\\n<|im_start|>assistant\\n")
        '#### 18'
        >>> response_text("<s>Q: 9*2? A: #### 18</s>", "Q: 9*2? A:")  # the prompt found inside (a BOS before it)
        ' #### 18'
        >>> response_text("Q:  9*2?\\nA: #### 18", "Q: 9*2? A:")  # spaces changed on the way
        ' #### 18'
        >>> response_text("User: 9*2? Worked: #### 18\\nAssistant: I am not sure.", "9*2? Worked: #### 18\\nA:")
        Traceback (most recent call last):
        ...
        referee.rewards.trainers.openrlhf.PromptNotFound: the query does not contain its prompt ('9*2? Worked: #### 18\\nA:'), not even with spaces ignored, so where the response starts is unknown and it is not judged (the prompt itself must never be); send each prompt exactly as the query begins with it.
    """
    text = query if isinstance(query, str) else str(query)
    if prompt is not None and prompt != "":
        end = _prompt_end(text, prompt) if isinstance(prompt, str) else None
        if end is None:
            shown = repr(prompt if len(str(prompt)) <= 80 else str(prompt)[:77] + "...")
            raise PromptNotFound(f"the query does not contain its prompt ({shown}), not even with spaces ignored, so "
                                 "where the response starts is unknown and it is not judged (the prompt itself must "
                                 "never be); send each prompt exactly as the query begins with it.")
        text = text[end:]
    return _TRAILING_SPECIAL_RE.sub("", text)


def _prompt_end(text: str, prompt: str) -> int | None:
    """Where ``prompt`` ends in ``text`` (its first occurrence, spaces ignored last), or ``None``."""
    if text.startswith(prompt):
        return len(prompt)
    at = text.find(prompt)
    if at != -1:
        return at + len(prompt)
    words = prompt.split()
    if not words:  # a prompt of spaces only
        return 0
    found = re.search(r"\s*".join(re.escape(word) for word in words), text)
    return found.end() if found else None


def _label_fields(label: Any) -> tuple[Any, Any, Mapping[str, Any] | None]:
    """(gold, data_source, extra_info) from a label: plain gold, or a dict / JSON object of fields."""
    if isinstance(label, str) and label.lstrip().startswith("{"):
        try:
            parsed = json.loads(label)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict):
            label = parsed
    if isinstance(label, Mapping):
        extra = {k: v for k, v in label.items() if k in ("verifier", "tests")}
        return label, label.get("data_source"), extra
    return label, None, None


def samples_of(queries: Sequence[Any], prompts: Sequence[Any], labels: Sequence[Any]) -> list[TrainerSample]:
    """OpenRLHF's three lists as referee samples (raises ``ValueError`` if their lengths differ).

    Example:
        >>> samples_of(["Q? #### 18"], ["Q?"], ['{"verifier": "gsm8k", "answer": "18"}'])[0].extra_info
        {'verifier': 'gsm8k'}
    """
    if not (len(queries) == len(prompts) == len(labels)):
        raise ValueError(f"got {len(queries)} queries, {len(prompts)} prompts and {len(labels)} labels; "
                         "send one prompt and one label per query.")
    samples = []
    for query, prompt, label in zip(queries, prompts, labels):
        gold, source, extra = _label_fields(label)
        try:
            samples.append(TrainerSample(response_text(query, prompt), gold, source, extra))
        except PromptNotFound as exc:
            samples.append(TrainerSample("", gold, source, extra, problem=str(exc)))
    return samples


def result_of(scores: Sequence[SampleScore]) -> dict[str, Any]:
    """The ``{"rewards", "scores", "extra_logs"}`` dict OpenRLHF reads (plain lists and floats: JSON-ready).

    Example:
        >>> from referee.verifiers import Verdict
        >>> result_of([SampleScore(1.0, Verdict("correct", 1.0), "gsm8k")])["extra_logs"]["referee_accuracy"]
        1.0
    """
    means = mean_metrics(scores)
    rewards = [float(score.score) for score in scores]
    return {"rewards": rewards, "scores": list(rewards),
            "extra_logs": {"referee_accuracy": means["acc"], "referee_error": means["referee_error"],
                           "referee_timeout": means["referee_timeout"], "referee_no_answer": means["referee_no_answer"]}}


def _env_options() -> dict[str, Any]:
    raw = os.environ.get(OPTIONS_ENV, "").strip()
    if not raw:
        return {}
    try:
        options = json.loads(raw)
    except ValueError as exc:
        raise ConfigurationError(f"{OPTIONS_ENV} is not JSON ({exc}); write it as a JSON object of referee options.") from None
    if not isinstance(options, dict):
        raise ConfigurationError(f"{OPTIONS_ENV} must be a JSON object of referee options, got {type(options).__name__}.")
    return options


def _scorer() -> Scorer:
    return scorer_for(_env_options(), name="referee_openrlhf", fields=OPENRLHF_FIELDS)


def reward_func(queries: Sequence[str], prompts: Sequence[Any], labels: Sequence[Any], **kwargs: Any) -> dict[str, Any]:
    """OpenRLHF's custom reward function: score each query's response against its label.

    Options (:class:`~referee.rewards.trainers.adapters.AdapterOptions`) come from the
    ``REFEREE_OPTIONS`` environment variable as JSON, e.g. ``{"default_verifier": "math"}``;
    without one, labels must say which verifier (``{"verifier": ...}`` or ``{"data_source": ...}``).

    Example:
        >>> reward_func(["Q: 9*2?\\nA: 9 * 2 = 18\\n#### 18<|im_end|>"], ["Q: 9*2?\\nA:"],
        ...             ['{"data_source": "openai/gsm8k", "answer": "18"}'])["rewards"]
        [1.0]
    """
    return result_of(_scorer().score(samples_of(queries, prompts, labels)))


async def reward_func_async(queries: Sequence[str], prompts: Sequence[Any], labels: Sequence[Any],
                            **kwargs: Any) -> dict[str, Any]:
    """:func:`reward_func` waited for in a worker thread (for servers and agent code on an event loop).

    Example:
        >>> import asyncio
        >>> asyncio.run(reward_func_async(["#### 17"], [""], [{"verifier": "gsm8k", "answer": "18"}]))["rewards"]
        [0.0]
    """
    return result_of(await _scorer().score_async(samples_of(queries, prompts, labels)))


def request_samples(payload: Any) -> list[TrainerSample]:
    """The samples in one ``POST /get_reward`` body of OpenRLHF's remote reward-model protocol.

    ``payload`` is ``{"query": [...], "prompts": [...], "labels": [...]}``; one that is not
    raises ``ValueError`` with one sentence saying what is wrong.

    Example:
        >>> request_samples({"query": ["Q? #### 18"], "prompts": ["Q?"], "labels": ["18"]})[0].completion
        ' #### 18'
        >>> request_samples({"queries": []})
        Traceback (most recent call last):
        ...
        ValueError: the body needs 'query': a list of prompt + response texts.
    """
    if not isinstance(payload, Mapping):
        raise ValueError(f"the body must be a JSON object with 'query', 'prompts' and 'labels', got {type(payload).__name__}.")
    queries = payload.get("query")
    if not isinstance(queries, list):
        raise ValueError("the body needs 'query': a list of prompt + response texts.")
    prompts = payload.get("prompts")
    labels = payload.get("labels")
    prompts = [""] * len(queries) if prompts is None else prompts
    if not isinstance(prompts, list) or not isinstance(labels, list):
        raise ValueError("'prompts' and 'labels' must be lists, one item per query (labels hold the gold answers).")
    return samples_of(queries, prompts, labels)


def handle_get_reward(payload: Any, scorer: Scorer) -> dict[str, Any]:
    """Answer one ``POST /get_reward`` body (see :func:`request_samples`) with ``{"rewards", "scores", "extra_logs"}``.

    Example:
        >>> handle_get_reward({"query": ["#### 18"], "prompts": [""], "labels": ["18"]},
        ...                   scorer_for({"default_verifier": "gsm8k"}))["rewards"]
        [1.0]
    """
    return result_of(scorer.score(request_samples(payload)))


async def handle_get_reward_async(payload: Any, scorer: Scorer) -> dict[str, Any]:
    """:func:`handle_get_reward`, judged in a worker thread (what ``referee serve`` awaits per request).

    Example:
        >>> import asyncio
        >>> asyncio.run(handle_get_reward_async({"query": ["#### 7"], "labels": ["7"]},
        ...                                     scorer_for({"default_verifier": "gsm8k"})))["scores"]
        [1.0]
    """
    return result_of(await scorer.score_async(request_samples(payload)))
