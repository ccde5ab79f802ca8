"""TRL reward functions whose scores come from Verdicts: answer checking and format checks.

Both kinds are picklable callable instances with a stable ``__name__`` (TRL logs
``rewards/<__name__>/mean``), accept standard and conversational completions, and never raise
into the trainer: anything that goes wrong becomes an ``error`` Verdict, so a ``None`` reward,
counted and warned about by :mod:`referee.rewards.policy`.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Sequence
from typing import Any

from referee.verifiers import VERIFIER_NAMES, Verdict, get_verifier
from referee.verifiers.format import get_check
from referee.verifiers.registry import backend_problem, default_gold_field, verify_batch_on

from .breaker import ErrorBreaker
from .completions import completion_text
from .policy import error_verdict, report, reward_of, warn_once
from .trainers.routing import LANGUAGE_KEY, with_language

_NAME_RE = re.compile(r"[A-Za-z_][\w.-]*")

# How a right answer is written for each verifier: the audit writes its references this way.
ANSWER_TEMPLATES: dict[str, str] = {
    "gsm8k": "The answer is {answer}.\n#### {answer}",
    "math": "The answer is $\\boxed{{answer}}$.",
}


def _checked_name(name: Any) -> str:
    if not isinstance(name, str) or not _NAME_RE.fullmatch(name):
        raise ValueError(f"Reward name {name!r} is not a plain name; use letters, digits and _ (e.g. 'gsm8k_strict').")
    return name


def _check_options(function: Callable[..., Any], options: dict[str, Any], what: str, *fixed: Any) -> None:
    try:
        inspect.signature(function).bind(*fixed, **options)
    except TypeError as exc:
        raise ValueError(f"Bad option for {what} ({exc}); see help({function.__module__}.{function.__name__}).") from None


# A completion and a gold each verifier judges without an error when its options are good:
# an ``error`` Verdict on them can only come from the options.
_OPTION_PROBES: dict[str, tuple[str, Any]] = {
    "gsm8k": ("", "1"),
    "math": ("", "1"),
    "code": ("", {"format": "asserts", "asserts": ["assert True"]}),
}


def verifier_option_problem(verifier: str, options: dict[str, Any]) -> str | None:
    """What is wrong with ``options`` for ``verifier`` (one line), or ``None`` when they are
    usable: the verifier judges a probe that cannot fail for any other reason, so its own
    option checks decide. Unknown option names are caught by signature, before this.

    Example:
        >>> verifier_option_problem("gsm8k", {"mode": "strict"}) is None
        True
        >>> verifier_option_problem("math", {"timeout": -1})
        'timeout=-1 must be a positive number of seconds'
    """
    probe = _OPTION_PROBES.get(verifier)
    if probe is None or not options:
        return None
    try:
        verdict = get_verifier(verifier).verify(*probe, **options)
    except Exception as exc:  # an option the verifier chokes on is a bad option too
        return f"{type(exc).__name__}: {exc}"
    return verdict.reason if verdict.status == "error" else None


def score_verdicts(
    reward_name: str,
    judge: Callable[..., list[Verdict]],
    completions: Sequence[Any] | None,
    trainer_kwargs: dict[str, Any],
    *,
    all_or_nothing: bool = False,
) -> list[float | None]:
    """Judge a batch with ``judge(completions, **trainer_kwargs)``, report, and turn Verdicts into rewards.

    Whatever ``judge`` raises becomes an ``error`` Verdict per completion (reward ``None``).

    Example:
        >>> score_verdicts("demo", lambda completions, **kw: [Verdict("correct", 1.0)] * len(completions), ["a"], {})
        [1.0]
        >>> score_verdicts("demo_broken", lambda completions, **kw: 1 / 0, ["a", "b"], {})
        [None, None]
    """
    if completions is None:
        raise TypeError(f"reward {reward_name} needs completions=[...] (TRL passes them by keyword).")
    try:
        verdicts = judge(completions, **trainer_kwargs)
    except Exception as exc:  # a reward never raises into the trainer
        verdicts = [error_verdict("exception", f"scoring raised {type(exc).__name__}: {exc}")] * len(completions)
    report(reward_name, verdicts, trainer_kwargs)
    return [reward_of(verdict, all_or_nothing=all_or_nothing) for verdict in verdicts]


class VerifierReward:
    """A correctness reward: a referee verifier judges each completion against the row's gold.

    Args:
        name: the reward's ``__name__`` (TRL's metric name).
        verifier: a verifier name (``gsm8k``, ``math``, ``code``; see
            :func:`referee.verifiers.get_verifier`).
        gold_column: the dataset column holding the gold, or several to try in order (per
            row, the first one present with a value wins, e.g. ``("answer", "solution")``);
            default: the verifier's usual column (``answer`` for GSM8K).
        all_or_nothing: reward 1.0 only for ``correct`` (else the Verdict's partial score).
        answer_template: how a right answer is written, ``{answer}`` marking the place (what
            ``referee audit`` writes its references in); default: the verifier's usual shape
            (``#### N`` for GSM8K, ``\\boxed{}`` for maths, none for code).
        backend: where ``verify_batch`` runs: ``"local"`` (this process's pools) or ``"ray"``
            (the Ray verifier host of the caller's node: :mod:`referee.verifiers.ray_host`).
        max_error_share: the circuit breaker on TRL's path: once more than this share of the last
            ``error_window`` completions scored in training calls (those TRL's trainer makes, with
            ``trainer_state``) were ``error`` (reward ``None``), every such call raises
            :class:`~referee.rewards.breaker.ErrorRateExceeded`, and the run stops instead of
            training on the other rewards alone; ``None`` turns it off. Other callers (the
            pre-filter, the audit, golden checks) are never stopped. Default 0.05.
        error_window: how many recent completions the breaker looks at (default 512).
        **options: the verifier's own options (e.g. ``mode="strict"`` for GSM8K).

    Example:
        >>> reward = VerifierReward("gsm8k_accuracy", "gsm8k", gold_column="answer")
        >>> reward(completions=["9 * 2 = 18\\n#### 18", "#### 17", [{"role": "assistant", "content": "18"}]],
        ...        answer=["#### 18", "#### 18", "18"])
        [1.0, 0.0, 1.0]
        >>> reward(completions=["#### 18"], answer=["not a number"])  # not the completion's fault
        [None]
        >>> VerifierReward("gsm8k_strict", "gsm8k", mode="strict").gold_columns  # the verifier's usual column
        ('answer',)
        >>> VerifierReward("math_ray", "math", backend="ray").backend
        'ray'
    """

    kind = "correctness"
    reward_range = (0.0, 1.0)

    def __init__(
        self,
        name: str,
        verifier: str,
        *,
        gold_column: str | Sequence[str] | None = None,
        all_or_nothing: bool = False,
        answer_template: str | None = None,
        backend: str = "local",
        max_error_share: float | None = 0.05,
        error_window: int = 512,
        **options: Any,
    ) -> None:
        self.__name__ = _checked_name(name)
        self.verifier = verifier
        self.breaker = _training_breaker(name, max_error_share, error_window)
        if backend_problem(backend):
            raise ValueError(f"Bad option for reward {name}: {backend_problem(backend)}.")
        self.backend = backend
        if gold_column is None:
            if verifier not in VERIFIER_NAMES:
                raise ValueError(f"Unknown verifier {verifier!r}; choose one of {', '.join(VERIFIER_NAMES)}.")
            gold_column = default_gold_field(verifier)
        columns = (gold_column,) if isinstance(gold_column, str) else tuple(gold_column)
        if not columns or not all(isinstance(column, str) and column for column in columns):
            raise ValueError(f"gold_column={gold_column!r} must name a dataset column, e.g. 'answer'.")
        self.gold_columns = columns
        self.all_or_nothing = bool(all_or_nothing)
        if answer_template is not None and (not isinstance(answer_template, str) or "{answer}" not in answer_template):
            raise ValueError(f"answer_template={answer_template!r} must be text with {{answer}} where the answer goes, "
                             """e.g. '{"answer": "{answer}"}'.""")
        self.answer_template = ANSWER_TEMPLATES.get(verifier) if answer_template is None else answer_template
        self.options = dict(options)
        _check_options(get_verifier(verifier).verify, self.options, f"the {verifier} verifier", "", "")
        problem = verifier_option_problem(verifier, self.options)
        if problem:
            raise ValueError(f"Bad option for the {verifier} verifier of reward {name}: {problem}.")

    def __repr__(self) -> str:
        return (f"VerifierReward({self.__name__!r}, {self.verifier!r}, gold_column={self.gold_columns!r}, "
                f"all_or_nothing={self.all_or_nothing!r}, options={self.options!r}"
                + (f", backend={self.backend!r})" if self.backend != "local" else ")"))

    def __call__(
        self,
        prompts: Sequence[Any] | None = None,
        completions: Sequence[Any] | None = None,
        completion_ids: Sequence[Sequence[int]] | None = None,
        **kwargs: Any,
    ) -> list[float | None]:
        """Score a batch the way TRL's ``GRPOTrainer`` calls reward functions (by keyword); a training
        call (with ``trainer_state``) is counted by the breaker, and raises once it has tripped."""
        if self.breaker is None or "trainer_state" not in kwargs:
            return score_verdicts(self.__name__, self.verdicts, completions, kwargs, all_or_nothing=self.all_or_nothing)
        self.breaker.check()
        judged: list[Verdict] = []

        def judge(batch: Sequence[Any], **columns: Any) -> list[Verdict]:
            judged.extend(self.verdicts(batch, **columns))
            return judged

        rewards = score_verdicts(self.__name__, judge, completions, kwargs, all_or_nothing=self.all_or_nothing)
        last = next((verdict.reason for verdict in reversed(judged) if verdict.status == "error"), "")
        self.breaker.record([reward is None for reward in rewards], last_reason=f"reward {self.__name__}: {last}" if last else "")
        return rewards

    def verdicts(self, completions: Sequence[Any], **columns: Any) -> list[Verdict]:
        """The verifier's Verdict for each completion, in order (``error`` ones for unusable input).

        Example:
            >>> reward = VerifierReward("gsm8k_accuracy", "gsm8k", gold_column="answer")
            >>> [v.status for v in reward.verdicts(["#### 18", "no idea"], answer=[18, 18])]
            ['correct', 'no_answer']
            >>> reward.verdicts(["#### 18"], question=["..."])[0].reason
            "no gold column 'answer' in the batch (columns: question); pass gold_column=... to the reward"

        For the code verifier, a ``language`` column names the language of each row's tests when
        the tests dict names none (datasets of C++ and Java solutions keep it beside the tests).
        """
        count = len(completions)
        present = [c for c in self.gold_columns if c in columns]
        if not present:
            names = ", ".join(sorted(k for k in columns if k not in ("trainer_state", "log_metric", "log_extra")))
            wanted = " or ".join(repr(c) for c in self.gold_columns)
            return [error_verdict("missing_column", f"no gold column {wanted} in the batch (columns: {names or 'none'}); "
                                                    "pass gold_column=... to the reward")] * count
        for column in present:
            values = columns[column]
            if isinstance(values, (str, bytes)) or not isinstance(values, Sequence) or len(values) != count:
                size = len(values) if isinstance(values, Sequence) else type(values).__name__
                return [error_verdict("bad_column", f"column {column!r} holds {size} values for {count} completions")] * count
        # Per row, the first gold column that has a value (mixed datasets leave the others None).
        golds = [next((columns[c][i] for c in present if columns[c][i] is not None), None) for i in range(count)]
        languages = columns.get(LANGUAGE_KEY)
        if self.verifier == "code" and isinstance(languages, Sequence) and not isinstance(languages, str) \
                and len(languages) == count:  # a dataset's language column names the language of tests that name none
            golds = [with_language(gold, {LANGUAGE_KEY: language}) if isinstance(gold, dict) else gold
                     for gold, language in zip(golds, languages)]
        texts = [completion_text(completion) for completion in completions]
        verdicts: list[Verdict] = [error_verdict("bad_completion", "the completion is neither text nor chat messages")] * count
        readable = [i for i, text in enumerate(texts) if text is not None]
        judged = self._judge([texts[i] for i in readable], [golds[i] for i in readable])
        for i, verdict in zip(readable, judged):
            verdicts[i] = verdict
        return verdicts

    def _judge(self, texts: list[str], golds: list[Any]) -> list[Verdict]:
        """``verify_batch`` (the verifier's parallel path); item by item if the batch call fails."""
        if not texts:
            return []
        module = get_verifier(self.verifier)
        try:
            verdicts = verify_batch_on(self.backend, self.verifier, texts, golds, self.options)
            if len(verdicts) == len(texts) and all(isinstance(v, Verdict) for v in verdicts):
                return list(verdicts)
            problem = f"returned {len(verdicts)} items for {len(texts)} completions"
        except Exception as exc:
            problem = f"raised {type(exc).__name__}: {exc}"
        warn_once(self.__name__, "batch", f"reward {self.__name__}: the {self.verifier} verifier's verify_batch {problem}; "
                                          "judging this batch one completion at a time.")
        return [self._judge_one(module, text, gold) for text, gold in zip(texts, golds)]

    def _judge_one(self, module: Any, text: str, gold: Any) -> Verdict:
        try:
            verdict = module.verify(text, gold, **self.options)
        except Exception as exc:
            return error_verdict("exception", f"the {self.verifier} verifier raised {type(exc).__name__}: {exc}")
        if not isinstance(verdict, Verdict):
            return error_verdict("exception", f"the {self.verifier} verifier returned {type(verdict).__name__}, not a Verdict")
        return verdict


def _training_breaker(name: str, max_error_share: float | None, error_window: int) -> ErrorBreaker | None:
    """The breaker a correctness reward keeps on TRL's path (``None``: none), its options checked."""
    if max_error_share is None:
        return None
    if isinstance(max_error_share, bool) or not isinstance(max_error_share, (int, float)) or not 0 <= max_error_share <= 1:
        raise ValueError(f"Bad option for reward {name}: max_error_share={max_error_share!r} must be a number in [0, 1], "
                         "or None for no breaker.")
    if isinstance(error_window, bool) or not isinstance(error_window, int) or error_window < 1:
        raise ValueError(f"Bad option for reward {name}: error_window={error_window!r} must be a positive whole number.")
    return ErrorBreaker(max_error_share, error_window, instead="training on the other rewards alone")


class FormatReward:
    """A shaping reward from one format check of :mod:`referee.verifiers.format`.

    Args:
        name: the reward's ``__name__``.
        check: a check name (``think``, ``answer_tags``, ``tag_counts``, ``answer_line``,
            ``code_block``, ``regex``).
        **options: the check's options (e.g. ``prefilled=True``, ``pattern=r"..."``).

    Example:
        >>> think = FormatReward("think_format", "think")
        >>> think(completions=["<think>9 * 2 = 18</think>\\n#### 18", "reasoning</think>\\n#### 18", "#### 18"])
        [1.0, 1.0, 0.0]
        >>> FormatReward("final_line", "regex", pattern=r"(?m)^Final: \\d+$")(completions=["Final: 18"])
        [1.0]
    """

    kind = "shaping"
    reward_range = (0.0, 1.0)

    def __init__(self, name: str, check: str, **options: Any) -> None:
        self.__name__ = _checked_name(name)
        self.check = check
        self.options = dict(options)
        _check_options(get_check(check), self.options, f"the {check} format check", "")

    def __repr__(self) -> str:
        return f"FormatReward({self.__name__!r}, {self.check!r}, options={self.options!r})"

    def __call__(
        self,
        prompts: Sequence[Any] | None = None,
        completions: Sequence[Any] | None = None,
        completion_ids: Sequence[Sequence[int]] | None = None,
        **kwargs: Any,
    ) -> list[float | None]:
        """Score a batch the way TRL's ``GRPOTrainer`` calls reward functions (by keyword)."""
        return score_verdicts(self.__name__, self.verdicts, completions, kwargs, all_or_nothing=False)

    def verdicts(self, completions: Sequence[Any], **columns: Any) -> list[Verdict]:
        """The format Verdict of each completion, in order.

        Example:
            >>> FormatReward("gsm8k_format", "answer_line").verdicts(["#### 17\\n#### 18"])[0].reason
            "2 '#### N' answer lines; write one"
        """
        check = get_check(self.check)
        return [self._check_one(check, completion_text(completion)) for completion in completions]

    def _check_one(self, check: Callable[..., Verdict], text: str | None) -> Verdict:
        if text is None:
            return error_verdict("bad_completion", "the completion is neither text nor chat messages")
        try:
            return check(text, **self.options)
        except Exception as exc:
            return error_verdict("exception", f"the {self.check} check raised {type(exc).__name__}: {exc}")
