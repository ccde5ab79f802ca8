"""benchmarks.tool_training at a toy size: both arms warm-started, evaluated, trained and written to JSON."""

from __future__ import annotations

import json

import pytest

from benchmarks import tool_training as bench
from referee.recipes.common.tiny_model import build_tool_tokenizer
from referee.rewards import completion_text
from referee.verifiers.code import resolve_isolation


def test_the_warm_start_trains_the_assistants_turns_only():
    tokenizer = build_tool_tokenizer()
    row = bench.sum_rows(1, 5, 3)[0]
    ids, mask = bench.assistant_tokens(tokenizer, bench.trace(row, with_tool=True))
    trained = tokenizer.decode([i for i, m in zip(ids, mask) if m])
    total = str(row["a"] + row["b"])
    assert trained.startswith('<tool_call>{"name": "python", "arguments": {"code": "print(')
    assert trained.endswith(f"</tool_call><eos>\n{total}<eos>\n")
    assert "t:" not in trained and "u:" not in trained  # the tool's output and the prompt are context only
    assert completion_text(bench.trace(row, with_tool=False)) == total


@pytest.mark.slow
def test_a_toy_run_writes_both_arms(tmp_path, monkeypatch):
    try:
        resolve_isolation()
    except ValueError:  # no level here holds untrusted code away from us: PythonTool runs nothing
        pytest.skip("no isolation level here guards the caller")
    out = tmp_path / "tool_training.json"
    assert bench.main(["--digits", "3", "--sft-steps", "2", "--grpo-steps", "1", "--train-rows", "40",
                       "--held-out", "4", "--output-dir", str(tmp_path / "runs"), "--json", str(out)]) == 0
    result = json.loads(out.read_text())
    assert set(result["arms"]) == set(bench.ARMS) and result["digits"] == 3
    for arm in result["arms"].values():
        for stage in ("after_warm_start", "after_grpo"):
            assert 0.0 <= arm[stage]["accuracy"] <= 1.0
    assert result["arms"]["without"]["after_grpo"]["tool_calls_per_row"] == 0.0
