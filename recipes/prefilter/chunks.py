"""One chunk of rows end to end: render prompts, generate G samples each, score, assemble rows."""

from __future__ import annotations

import hashlib
import time
from typing import Any

from ..common.data import BadRow, Row, Rows
from ..common.generation import GenerationBackend, Sample
from ..common.prompts import PromptError, PromptRenderer, RenderedPrompt
from .config import PrefilterConfig
from .scoring import RowScores, Scorer, pass_counts
from .unread import UNREAD_METRIC, unread_detail, unread_shares


def chunk_seed(seed: int, index: int) -> int:
    """The sampling seed of chunk ``index``: fixed by the run's seed and the chunk alone, so
    a chunk gets the same samples in a resumed run, in any shard and in any worker.

    Example:
        >>> chunk_seed(0, 5) == chunk_seed(0, 5), chunk_seed(0, 5) == chunk_seed(0, 6)
        (True, False)
    """
    return int(hashlib.sha256(f"{seed}:{index}".encode()).hexdigest()[:8], 16) % (2**31 - 1)


def chunk_rows(num_rows: int, chunk_size: int, index: int) -> range:
    """Positions of the rows in chunk ``index``.

    Example:
        >>> chunk_rows(10, 4, 2)
        range(8, 10)
    """
    return range(index * chunk_size, min(num_rows, (index + 1) * chunk_size))


def _empty_record(position: int, row: Row, errors: list[str], reward_names: tuple[str, ...],
                  save_samples: bool) -> dict[str, Any]:
    record = {} if isinstance(row, BadRow) else dict(row)
    record.update(row_index=position, pass_rate=None, num_correct=0, num_samples=0, num_unscored=0,
                  num_truncated=0, reward_means={name: None for name in reward_names}, errors=errors)
    if save_samples:
        record["samples"] = []
    return record


class ChunkRunner:
    """Produces the result rows of a chunk (see :class:`PrefilterConfig` for the fields).

    Each result row is the dataset row plus ``row_index``, ``pass_rate`` (``num_correct /
    num_samples``, ``None`` when no sample was scored), ``num_correct``, ``num_samples`` (the
    samples the success reward scored), ``num_unscored`` (samples it returned ``None`` for),
    ``num_truncated``, ``reward_means`` (each reward's mean over its scored samples),
    ``errors`` (one line per problem) and, with ``save_samples``, ``samples``.

    Example:
        >>> from referee.recipes.common.tiny_model import build_char_tokenizer
        >>> from referee.recipes.common.data import Rows
        >>> from referee.recipes.common.generation import Sample
        >>> class Canned:  # a backend that always answers "7" and "8"
        ...     context_length = None
        ...     def generate(self, prompt_ids, n, sampling, seed):
        ...         return [[Sample("7", (1,), False), Sample("8", (2,), False)] for _ in prompt_ids]
        >>> def is_seven(prompts, completions, **kwargs):
        ...     return [float(c == "7") for c in completions]
        >>> config = PrefilterConfig(model="-", data="-", rewards=(is_seven,), out="-", num_generations=2)
        >>> runner = ChunkRunner(config, Rows([{"prompt": "3 + 4 = "}, {"question": "?"}]), build_char_tokenizer(),
        ...                      Canned(), Scorer(config.rewards))
        >>> first, second = runner.run(0)["rows"]
        >>> first["pass_rate"], first["num_correct"], first["num_samples"]
        (0.5, 1, 2)
        >>> second["pass_rate"], second["errors"]
        (None, ["row has no 'prompt' column (choose the prompt column with --prompt-column)"])
    """

    def __init__(self, config: PrefilterConfig, rows: Rows, tokenizer: Any, backend: GenerationBackend,
                 scorer: Scorer, *, chunk_size: int | None = None, check_unread: bool = False) -> None:
        self.config = config
        self.check_unread = check_unread  # record UNREAD_METRIC (the pre-filter: a reward that reads no answer)
        self._unread_explained = False  # the first chunk the reward paid nothing in says what the model wrote
        self.chunk_size = chunk_size or config.chunk_size
        self.rows = rows
        self.backend = backend
        self.scorer = scorer
        self.renderer = PromptRenderer(
            tokenizer, max_tokens=config.sampling.max_tokens, context_length=backend.context_length,
            prompt_column=config.prompt_column, chat_template=config.chat_template,  # type: ignore[arg-type]
            system_prompt=config.system_prompt, chat_template_kwargs=dict(config.chat_template_kwargs),
        )

    def run(self, index: int) -> dict[str, Any]:
        """The saved form of chunk ``index``: its rows, timing and the rewards' logged metrics."""
        positions = chunk_rows(len(self.rows), self.chunk_size, index)
        rows = self.rows.slice(positions.start, positions.stop)
        records: list[dict[str, Any] | None] = [None] * len(rows)
        rendered: dict[int, RenderedPrompt] = {}
        for offset, row in enumerate(rows):
            if isinstance(row, BadRow):
                records[offset] = self._empty(positions[offset], row, [row.reason])
                continue
            try:
                rendered[offset] = self.renderer.render(row)
            except PromptError as exc:
                records[offset] = self._empty(positions[offset], row, [str(exc)])
        started = time.perf_counter()
        samples, failures = self._generate(index, rendered)
        generated = time.perf_counter()
        for offset, message in failures.items():
            records[offset] = self._empty(positions[offset], rows[offset], [message])
        ready = sorted(samples)
        batch = ([rendered[o].prompt for o in ready],
                 [[_completion(s, rendered[o].conversational) for s in samples[o]] for o in ready],
                 [[s.token_ids for s in samples[o]] for o in ready],
                 [_columns(rows[o], self.config.prompt_column) for o in ready])
        scores, metrics = self.scorer.score(*batch)
        unread = unread_shares(self.scorer, *batch, scores) if self.check_unread else []
        if unread:
            metrics = {**metrics, UNREAD_METRIC: unread}
        detail = None
        paid = any(value is not None and value >= self.scorer.threshold
                   for score in scores for value in score.rewards[self.scorer.success_reward])
        if unread and min(unread) == 1.0 and not paid and not self._unread_explained:
            self._unread_explained = True
            detail = unread_detail(self.scorer, batch[0], batch[1], batch[3], self.config.prompt_column)
        for offset, score in zip(ready, scores):
            records[offset] = self._record(positions[offset], rows[offset], samples[offset], score)
        return {
            "chunk": index,
            "rows": records,
            "timing": {"generate_s": generated - started, "score_s": time.perf_counter() - generated},
            "reward_metrics": metrics,
            **({"unread_detail": detail} if detail else {}),
        }

    def _generate(
        self, index: int, rendered: dict[int, RenderedPrompt]
    ) -> tuple[dict[int, list[Sample]], dict[int, str]]:
        """Samples per row offset, and a one-line error per row that could not be generated.

        A failed batch is retried row by row to find the rows at fault. A failure that is
        not a row's fault (out of memory, or every row of a several-row chunk failing) is
        raised: the chunk is not saved and a rerun tries it again.
        """
        order = sorted(rendered)
        if not order:
            return {}, {}
        seed = chunk_seed(self.config.sampling.seed, index)
        try:
            return dict(zip(order, self._checked_generate([rendered[o] for o in order], seed))), {}
        except Exception as exc:
            if _is_systemic(exc):
                raise
            if len(order) == 1:
                return {}, {order[0]: f"generation failed ({type(exc).__name__}: {exc})"}
            first_failure = exc
        samples: dict[int, list[Sample]] = {}
        failures: dict[int, str] = {}
        for offset in order:
            try:
                samples[offset] = self._checked_generate([rendered[offset]], seed + offset)[0]
            except Exception as exc:
                if _is_systemic(exc):
                    raise
                failures[offset] = f"generation failed ({type(exc).__name__}: {exc})"
        if not samples:
            raise first_failure
        return samples, failures

    def _checked_generate(self, prompts: list[RenderedPrompt], seed: int) -> list[list[Sample]]:
        count = self.config.num_generations
        groups = self.backend.generate([p.token_ids for p in prompts], count, self.config.sampling, seed)
        if len(groups) != len(prompts) or any(len(group) != count for group in groups):
            raise RuntimeError(f"the backend returned {[len(g) for g in groups]} samples for {len(prompts)} "
                               f"prompts x {count}")
        return groups

    def _empty(self, position: int, row: Row, errors: list[str]) -> dict[str, Any]:
        return _empty_record(position, row, errors, self.scorer.names, self.config.save_samples)

    def _record(self, position: int, row: dict[str, Any], samples: list[Sample], score: RowScores) -> dict[str, Any]:
        success = score.rewards[self.scorer.success_reward]
        num_correct, num_samples, num_unscored = pass_counts(success, self.scorer.threshold)
        errors = list(score.errors)
        for name, values in score.rewards.items():
            missing = sum(v is None for v in values)
            if missing and name not in score.failed:
                errors.append(f"reward {name} gave no score to {missing} of {len(values)} samples (None: not the "
                              "completion's fault, e.g. an unusable gold); they are left out of the pass rate"
                              if name == self.scorer.success_reward else
                              f"reward {name} gave no score to {missing} of {len(values)} samples")
        record = dict(row)
        record.update(
            row_index=position,
            pass_rate=num_correct / num_samples if num_samples else None,
            num_correct=num_correct,
            num_samples=num_samples,
            num_unscored=num_unscored,
            num_truncated=sum(s.truncated for s in samples),
            reward_means={name: _mean(values) for name, values in score.rewards.items()},
            errors=errors,
        )
        if self.config.save_samples:
            record["samples"] = [self._sample(j, sample, score) for j, sample in enumerate(samples)]
        return record

    def _sample(self, j: int, sample: Sample, score: RowScores) -> dict[str, Any]:
        value = score.rewards[self.scorer.success_reward][j]
        saved: dict[str, Any] = {
            "text": sample.text,
            "tokens": len(sample.token_ids),
            "truncated": sample.truncated,
            "passed": None if value is None else value >= self.scorer.threshold,
            "rewards": {name: values[j] for name, values in score.rewards.items()},
        }
        if score.extras[j]:
            saved["logged"] = score.extras[j]
        return saved


def _is_systemic(exc: Exception) -> bool:
    return isinstance(exc, MemoryError) or "out of memory" in str(exc).lower()


def _completion(sample: Sample, conversational: bool) -> Any:
    """A completion as TRL hands it to reward functions: text, or one assistant message."""
    return [{"role": "assistant", "content": sample.text}] if conversational else sample.text


def _columns(row: Row, prompt_column: str) -> dict[str, Any]:
    """The row's columns as reward keywords: all but the prompt (passed as ``prompts``)."""
    return {} if isinstance(row, BadRow) else {key: value for key, value in row.items() if key != prompt_column}


def _mean(values: list[float | None]) -> float | None:
    scored = [v for v in values if v is not None]
    return sum(scored) / len(scored) if scored else None
