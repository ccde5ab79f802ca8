"""A stopped pre-filter run resumes without redoing or losing rows."""

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from referee.recipes.cli import main
from referee.recipes.prefilter import EngineOptions, KeepBounds, PrefilterConfig, SamplingOptions, run_prefilter
from referee.recipes.prefilter.store import RunMismatchError

torch.set_num_threads(1)
HERE = Path(__file__).parent
REWARD = "test_prefilter_resume:logged_reward"


def logged_reward(prompts, completions, **kwargs):
    """Passes samples containing a "1"; logs each call's prompts and, when asked through the
    environment, kills its own process (SIGKILL: nothing gets to clean up) on the Nth call."""
    log = Path(os.environ["PREFILTER_TEST_LOG"])
    with log.open("a") as handle:
        handle.write(json.dumps(sorted(set(prompts))) + "\n")
    if len(log.read_text().splitlines()) == int(os.environ.get("PREFILTER_TEST_KILL_AT", "0")):
        os.kill(os.getpid(), signal.SIGKILL)
    if len(log.read_text().splitlines()) == int(os.environ.get("PREFILTER_TEST_INTERRUPT_AT", "0")):
        raise KeyboardInterrupt
    return [float("1" in text) for text in completions]


@pytest.fixture(autouse=True)
def one_thread(monkeypatch):
    """Runs compared with each other use one torch thread, whatever other tests set."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(autouse=True)
def reward_importable(monkeypatch):
    monkeypatch.syspath_prepend(str(HERE))  # so REWARD resolves as module:attribute in this process


@pytest.fixture
def data(tmp_path):
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps({"prompt": f"{i} + {i} = "}) + "\n" for i in range(11)))
    return str(path)


def cli_args(model_dir, data, out):
    return ["prefilter", "--model", model_dir, "--data", data, "--reward", REWARD, "--num-generations", "3",
            "--keep", "0.3:1", "--out", str(out), "--max-tokens", "10", "--chunk-size", "2", "--backend",
            "transformers", "--no-progress"]


def logged_calls(path):
    return [json.loads(line) for line in Path(path).read_text().splitlines()]


def test_a_killed_run_resumes_without_redoing_or_losing_rows(tmp_path, model_dir, data, monkeypatch):
    out = tmp_path / "out"
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]),
                   "OMP_NUM_THREADS": "1", "PREFILTER_TEST_LOG": str(tmp_path / "killed.log"),
                   "PREFILTER_TEST_KILL_AT": "3"}
    command = [sys.executable, "-m", "referee.recipes.cli", *cli_args(model_dir, data, out)]
    killed = subprocess.run(command, env=environment, capture_output=True, text=True, timeout=120)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    state = out / "state"
    # killed while scoring chunk 2: chunks 0 and 1 are whole, nothing else is there
    assert sorted(p.name for p in state.iterdir()) == ["chunk-00000000.json", "chunk-00000001.json", "run.json"]
    saved = {name: (state / name).read_bytes() for name in ("chunk-00000000.json", "chunk-00000001.json")}
    assert not (out / "all.jsonl").exists()

    environment.update(PREFILTER_TEST_LOG=str(tmp_path / "resumed.log"), PREFILTER_TEST_KILL_AT="0")
    resumed = subprocess.run(command, env=environment, capture_output=True, text=True, timeout=120)
    assert resumed.returncode == 0, resumed.stderr
    # the rerun scored chunks 2..5 only, once each
    chunks = [[f"{i} + {i} = " for i in range(start, min(start + 2, 11))] for start in range(0, 11, 2)]
    assert logged_calls(tmp_path / "resumed.log") == [sorted(c) for c in chunks[2:]]
    assert all((state / name).read_bytes() == content for name, content in saved.items())

    rows = [json.loads(line) for line in (out / "all.jsonl").read_text().splitlines()]
    assert [row["row_index"] for row in rows] == list(range(11))

    # the same run without the kill gives the very same rows (each chunk has its own seed)
    monkeypatch.setenv("PREFILTER_TEST_LOG", str(tmp_path / "reference.log"))
    assert main(cli_args(model_dir, data, tmp_path / "reference")) == 0
    assert (out / "all.jsonl").read_text() == (tmp_path / "reference/all.jsonl").read_text()
    assert (out / "kept.jsonl").read_text() == (tmp_path / "reference/kept.jsonl").read_text()


def test_ctrl_c_keeps_the_finished_chunks_and_the_same_command_resumes(tmp_path, model_dir, data, monkeypatch,
                                                                        capsys):
    monkeypatch.setenv("PREFILTER_TEST_LOG", str(tmp_path / "first.log"))
    monkeypatch.setenv("PREFILTER_TEST_INTERRUPT_AT", "2")
    assert main(cli_args(model_dir, data, tmp_path / "out")) == 130
    assert "Run the same command again to resume" in capsys.readouterr().err
    assert [p.name for p in sorted((tmp_path / "out/state").glob("chunk-*"))] == ["chunk-00000000.json"]

    monkeypatch.setenv("PREFILTER_TEST_LOG", str(tmp_path / "second.log"))
    monkeypatch.delenv("PREFILTER_TEST_INTERRUPT_AT")
    assert main(cli_args(model_dir, data, tmp_path / "out")) == 0
    assert len(logged_calls(tmp_path / "second.log")) == 5  # chunks 1..5
    rows = (tmp_path / "out/all.jsonl").read_text().splitlines()
    assert [json.loads(row)["row_index"] for row in rows] == list(range(11))


class NoGeneration:
    context_length = None

    def generate(self, *args, **kwargs):
        raise AssertionError("a finished run must not generate again")


def test_a_finished_run_is_only_rewritten_and_other_settings_are_refused(tmp_path, model_dir, data, monkeypatch):
    monkeypatch.setenv("PREFILTER_TEST_LOG", str(tmp_path / "calls.log"))
    config = PrefilterConfig(model=model_dir, data=data, rewards=(REWARD,), out=str(tmp_path / "out"),
                             keep=KeepBounds(0.3, 1.0), num_generations=3, chunk_size=4, progress=False,
                             sampling=SamplingOptions(max_tokens=6), engine=EngineOptions(backend="transformers"))
    first = run_prefilter(config)
    # a stray temporary file from a write cut short is ignored
    (tmp_path / "out/state/.chunk-00000009.json.abc.tmp").write_text("{partial")

    wider = run_prefilter(PrefilterConfig(**{**config.__dict__, "keep": KeepBounds(0.0, 1.0)}),
                          backend=NoGeneration())
    assert wider["rows"] == first["rows"] == 11 and wider["kept"] == first["rows_scored"] >= first["kept"]
    assert len((tmp_path / "out/kept.jsonl").read_text().splitlines()) == wider["kept"]

    with pytest.raises(RunMismatchError, match=r"sampling.seed: 0 -> 1"):
        run_prefilter(PrefilterConfig(**{**config.__dict__, "sampling": SamplingOptions(max_tokens=6, seed=1)}),
                      backend=NoGeneration())
    with pytest.raises(RunMismatchError, match=r"num_generations: 3 -> 4"):
        run_prefilter(PrefilterConfig(**{**config.__dict__, "num_generations": 4}), backend=NoGeneration())
