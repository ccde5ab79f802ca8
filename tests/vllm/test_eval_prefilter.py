"""`referee eval` and `referee prefilter --backend vllm` through a real vLLM engine on the CPU, each
killed part-way (SIGKILL) and resumed by the same command: the rerun samples only the chunks that
were not saved, keeps the saved ones byte for byte, and ends with what an uninterrupted run gives."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow
HERE = Path(__file__).parent
REWARD = "counting_reward:digit_reward"


@pytest.fixture
def reward_env(engine_env, tmp_path):
    """The engine's environment with the counting reward importable."""
    return {**engine_env, "PYTHONPATH": os.pathsep.join([str(HERE), engine_env.get("PYTHONPATH", "")])}


def run(run_referee, env, log, kill_at, *args):
    env.update(REFEREE_TEST_LOG=str(log), REFEREE_TEST_KILL_AT=str(kill_at))
    return run_referee(*args, env=env)


def logged_calls(path: Path) -> list[list[str]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def chunk_files(state: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(state.glob("chunk-*.json"))}


def test_eval_through_vllm_resumes_after_a_kill(tmp_path, model_dir, sums_jsonl, run_referee, reward_env):
    def eval_args(out):
        return ["eval", "--model", model_dir, "--data", str(sums_jsonl), "--prompt-column", "question",
                "--reward", REWARD, "-k", "4", "--max-tokens", "8", "--chunk-size", "4", "--out", str(out),
                "--backend", "vllm", "--no-progress"]

    killed = run(run_referee, reward_env, tmp_path / "killed.log", 2, *eval_args(tmp_path / "out"))
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-3000:]
    saved = chunk_files(tmp_path / "out" / "state")
    assert list(saved) == ["chunk-00000000.json"]  # killed while scoring chunk 1: chunk 0 is whole
    resumed = run(run_referee, reward_env, tmp_path / "resumed.log", 0, *eval_args(tmp_path / "out"))
    assert resumed.returncode == 0 and "Traceback" not in resumed.stderr, resumed.stderr[-3000:]
    assert len(logged_calls(tmp_path / "resumed.log")) == 3  # chunks 1, 2, 3 only
    assert chunk_files(tmp_path / "out" / "state")["chunk-00000000.json"] == saved["chunk-00000000.json"]
    rows = [json.loads(line) for line in (tmp_path / "out" / "all.jsonl").read_text().splitlines()]
    assert [row["row_index"] for row in rows] == list(range(16)) and all(len(row["samples"]) == 4 for row in rows)
    whole = run(run_referee, reward_env, tmp_path / "whole.log", 0, *eval_args(tmp_path / "whole"))
    assert whole.returncode == 0, whole.stderr[-3000:]
    assert (tmp_path / "out" / "all.jsonl").read_text() == (tmp_path / "whole" / "all.jsonl").read_text()
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["rows"] == 16 and 0.0 < report["metrics"]["pass@1"] < 1.0


def test_prefilter_through_vllm_resumes_after_a_kill(tmp_path, model_dir, run_referee, reward_env):
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps({"prompt": f"{i} + {i} = "}) + "\n" for i in range(11)))

    def prefilter_args(out):
        return ["prefilter", "--model", model_dir, "--data", str(data), "--reward", REWARD, "--num-generations", "4",
                "--keep", "0.25:0.75", "--out", str(out), "--max-tokens", "8", "--chunk-size", "2",
                "--backend", "vllm", "--no-progress"]

    killed = run(run_referee, reward_env, tmp_path / "killed.log", 3, *prefilter_args(tmp_path / "out"))
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-3000:]
    saved = chunk_files(tmp_path / "out" / "state")
    assert list(saved) == ["chunk-00000000.json", "chunk-00000001.json"]
    resumed = run(run_referee, reward_env, tmp_path / "resumed.log", 0, *prefilter_args(tmp_path / "out"))
    assert resumed.returncode == 0 and "Traceback" not in resumed.stderr, resumed.stderr[-3000:]
    chunks = [sorted(f"{i} + {i} = " for i in range(start, min(start + 2, 11))) for start in range(0, 11, 2)]
    assert logged_calls(tmp_path / "resumed.log") == chunks[2:]
    assert all(chunk_files(tmp_path / "out" / "state")[name] == content for name, content in saved.items())
    rows = [json.loads(line) for line in (tmp_path / "out" / "all.jsonl").read_text().splitlines()]
    assert [row["row_index"] for row in rows] == list(range(11))
    kept = [json.loads(line) for line in (tmp_path / "out" / "kept.jsonl").read_text().splitlines()]
    assert len(kept) == sum(0.25 <= row["pass_rate"] <= 0.75 for row in rows)
