"""One tool turn of all rollouts at once: TRL's tool loop, with referee's Python tool calls run ahead concurrently.

TRL 1.16's ``GRPOTrainer._tool_call_loop`` calls each rollout's tools one rollout after another in
the trainer process: 64 rollouts whose cells take 0.3 s wait about 19 s per tool turn. Every
rollout has its own :class:`referee.rewards.tools.PythonTool` session, so their cells can run side
by side. :class:`ConcurrentToolCalls` (mixed into :class:`RefereeGRPOTrainer`) keeps TRL's loop,
and before each of its tool turns runs every rollout's ``python`` calls of that turn on a thread
pool (one thread per rollout, its calls in order); TRL's loop then finds each result waiting. The
turns' calls are the ones TRL will make: the first turn's are parsed by TRL before the loop, each
later turn's are parsed here from the same tokens, cut to the same completion budget, by the same
``parse_response``, and none is run past ``max_tool_calling_iterations``. Results and their order
are those of the serial loop; a rollout's cells never overlap.

It also logs ``tools/calls`` (cells per rollout), ``tools/error_share``, ``tools/timeouts``,
``tools/truncated_share``, ``tools/restarts`` and ``tools/seconds`` (wall time of the step's tool
turns, summed over turns).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from referee.rewards.tools import PythonTool

MAX_THREADS = 64  # rollouts whose cells run at once; each is a wait on a sandboxed process, not Python work


def python_calls(message: dict[str, Any] | None) -> list[str] | None:
    """The code of a parsed assistant message's ``python`` tool calls, in order; ``None`` when any
    of its calls is something else (another tool, odd arguments), which then all run TRL's way.

    Example:
        >>> python_calls({"role": "assistant", "tool_calls": [
        ...     {"type": "function", "function": {"name": "python", "arguments": {"code": "1 + 1"}}}]})
        ['1 + 1']
        >>> python_calls({"role": "assistant", "content": "done"})
        []
        >>> python_calls({"tool_calls": [{"type": "function", "function": {"name": "python", "arguments": {}}}]}) is None
        True
    """
    codes = []
    for call in (message or {}).get("tool_calls") or []:
        function = call.get("function") if isinstance(call, dict) and call.get("type") == "function" else None
        arguments = function.get("arguments") if isinstance(function, dict) else None
        if (not isinstance(function, dict) or function.get("name") != "python" or not isinstance(arguments, dict)
                or set(arguments) != {"code"} or not isinstance(arguments["code"], str)):
            return None
        codes.append(arguments["code"])
    return codes


class ConcurrentToolCalls:
    """Mixin for a TRL ``GRPOTrainer``: runs each tool turn's :class:`PythonTool` cells concurrently."""

    _tool_turn: dict[str, Any] | None = None

    def _python_tools(self) -> list[PythonTool | None]:
        return [env if isinstance(env, PythonTool) else None for env in (getattr(self, "environments", None) or [])]

    def _tool_call_loop(self, prompts, prompt_ids, completion_ids, completions, logprobs, images, multimodal_fields):
        tools = self._python_tools()
        if not any(tools):
            return super()._tool_call_loop(prompts, prompt_ids, completion_ids, completions, logprobs, images,
                                           multimodal_fields)
        self._tool_turn = {"tools": tools, "prompt_ids": prompt_ids, "completion_ids": completion_ids, "turns": 1,
                           "seconds": 0.0}
        self._run_ahead({i: python_calls(completion[0]) for i, completion in enumerate(completions)})
        try:
            result = super()._tool_call_loop(prompts, prompt_ids, completion_ids, completions, logprobs, images,
                                             multimodal_fields)
        finally:
            turn, self._tool_turn = self._tool_turn, None
        self._log_tool_metrics(tools, turn["seconds"])
        return result

    def _generate_single_turn(self, prompt_ids, images, multimodal_fields, num_generations, has_tool_images=False):
        ids, logprobs = super()._generate_single_turn(prompt_ids, images, multimodal_fields, num_generations,
                                                      has_tool_images)
        turn = self._tool_turn
        if turn is not None and turn["turns"] < self.max_tool_calling_iterations:
            turn["turns"] += 1
            self._run_ahead(self._next_calls(prompt_ids, ids))
        return ids, logprobs

    def _next_calls(self, rows: Sequence[list[int]], generated: Sequence[list[int]]) -> dict[int, list[str] | None]:
        """Each regenerated row's next calls, keyed by its rollout, parsed as TRL's loop will parse them."""
        from trl.chat_template_utils import parse_response

        turn = self._tool_turn
        assert turn is not None
        calls: dict[int, list[str] | None] = {}
        start = 0
        for row, ids in zip(rows, generated, strict=True):
            rollout = self._rollout_of(row, start)
            start = rollout + 1
            budget = self.max_completion_length - (len(row) - len(turn["prompt_ids"][rollout]))
            ids = list(ids)[:max(budget, 0)]
            if ids:
                tools = (self._env_tools[self._batch_environments[rollout]] if self.environment_factories is not None
                         else self.tools)
                calls[rollout] = python_calls(parse_response(self._tokenizer, ids, prefix=row, tools=tools))
        return calls

    def _rollout_of(self, row: Sequence[int], start: int) -> int:
        """The rollout a regenerated row continues: TRL's loop keeps rollouts in order, and each row
        starts with its rollout's prompt and completion so far (rollouts with equal histories have
        equal next calls, so the first match is right)."""
        turn = self._tool_turn
        assert turn is not None
        for rollout in range(start, len(turn["prompt_ids"])):
            head = turn["prompt_ids"][rollout] + turn["completion_ids"][rollout]
            if len(row) > len(head) and list(row[:len(head)]) == head:
                return rollout
        raise RuntimeError("a regenerated row matches no rollout of the tool loop; the pinned TRL changed its loop")

    def _run_ahead(self, calls: dict[int, list[str] | None]) -> None:
        turn = self._tool_turn
        assert turn is not None
        jobs = [(turn["tools"][i], codes) for i, codes in calls.items() if codes and turn["tools"][i] is not None]
        if not jobs:
            return
        started = time.monotonic()
        with ThreadPoolExecutor(max_workers=min(MAX_THREADS, len(jobs)), thread_name_prefix="referee-tool") as pool:
            for future in [pool.submit(tool._run_ahead, codes) for tool, codes in jobs]:
                future.result()
        turn["seconds"] += time.monotonic() - started

    def _log_tool_metrics(self, tools: list[PythonTool | None], seconds: float) -> None:
        import torch

        results = [result for tool in tools if tool is not None for result in tool.results]
        counts = torch.tensor([len(tools), len(results), sum(r.error for r in results), sum(r.timeout for r in results),
                               sum(r.truncated for r in results), sum(r.restarted for r in results)],
                              dtype=torch.float64, device=self.accelerator.device)
        rollouts, cells, errors, timeouts, truncated, restarts = self.accelerator.reduce(counts, "sum").tolist()
        metrics = self._metrics["train" if self.model.training else "eval"]
        metrics["tools/calls"].append(cells / max(rollouts, 1))
        metrics["tools/error_share"].append(errors / cells if cells else 0.0)
        metrics["tools/timeouts"].append(timeouts)
        metrics["tools/truncated_share"].append(truncated / cells if cells else 0.0)
        metrics["tools/restarts"].append(restarts)
        metrics["tools/seconds"].append(seconds)
