"""Shards and data-parallel workers give the result of one run; outputs in every format and input."""

import dataclasses
import json
from pathlib import Path

import pytest
import torch

from referee.recipes.cli import main
from referee.recipes.common.loading import load_tokenizer
from referee.recipes.prefilter import (
    EngineOptions,
    KeepBounds,
    PrefilterConfig,
    SamplingOptions,
    merge_runs,
    run_prefilter,
)
from referee.recipes.common.transformers_backend import TransformersBackend

torch.set_num_threads(1)
HERE = Path(__file__).parent


def has_one(prompts, completions, **kwargs):
    return [float("1" in text) for text in completions]


def has_two(prompts, completions, **kwargs):
    return [float("2" in text) for text in completions]


@pytest.fixture(autouse=True)
def one_thread(monkeypatch):
    """Runs compared with each other use one torch thread, whatever other tests set."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    monkeypatch.setenv("OMP_NUM_THREADS", "1")  # worker processes too
    yield
    torch.set_num_threads(threads)


@pytest.fixture(autouse=True)
def reward_importable(monkeypatch):
    # rewards are given as module:attribute, which worker processes import too
    monkeypatch.syspath_prepend(str(HERE))
    monkeypatch.setenv("PYTHONPATH", str(HERE))


@pytest.fixture(scope="module")
def backend(model_dir):
    from transformers import AutoModelForCausalLM

    return TransformersBackend(AutoModelForCausalLM.from_pretrained(model_dir), load_tokenizer(model_dir), batch_size=4)


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    path = tmp_path_factory.mktemp("data") / "rows.jsonl"
    path.write_text("".join(json.dumps({"prompt": f"{i} * 3 = ", "id": i}) + "\n" for i in range(13)))
    return str(path)


def base_config(model_dir, data, out, **overrides):
    settings = dict(model=model_dir, data=data, out=str(out), keep=KeepBounds(0.2, 0.8), num_generations=4,
                    rewards=("test_prefilter_shards:has_one", "test_prefilter_shards:has_two"),
                    sampling=SamplingOptions(max_tokens=12, seed=7), chunk_size=3, progress=False,
                    engine=EngineOptions(backend="transformers"), save_samples=True)
    settings.update(overrides)
    return PrefilterConfig(**settings)


def without_timing(report):
    return {key: value for key, value in report.items() if key != "timing"}


def test_shards_merge_to_the_same_result_as_one_run(tmp_path, model_dir, data, backend):
    single = run_prefilter(base_config(model_dir, data, tmp_path / "single"), backend=backend)
    shard_reports = [
        run_prefilter(base_config(model_dir, data, tmp_path / f"shard{k}", shard_index=k, num_shards=3),
                      backend=backend)
        for k in (2, 0, 1)
    ]
    assert sorted(r["rows"] for r in shard_reports) == [3, 4, 6]  # chunks 0,3,(4) / 1 / 2 of 5 chunks of 3 rows
    merged = merge_runs([tmp_path / f"shard{k}" for k in range(3)], tmp_path / "merged")

    for name in ("all.jsonl", "kept.jsonl"):
        assert (tmp_path / "merged" / name).read_text() == (tmp_path / "single" / name).read_text()
    assert without_timing(merged) == without_timing(single)
    assert single["kept"] > 0 and single["rows"] == 13
    # the merged folder is a finished run: the unsharded command only rewrites its results
    again = run_prefilter(base_config(model_dir, data, tmp_path / "merged", keep=KeepBounds(0.0, 1.0)),
                          backend=backend)
    assert again["kept"] == single["rows_scored"]


def test_merge_refuses_missing_duplicate_and_foreign_shards(tmp_path, model_dir, data, backend):
    for k in (0, 1):
        run_prefilter(base_config(model_dir, data, tmp_path / f"shard{k}", shard_index=k, num_shards=2),
                      backend=backend)
    with pytest.raises(ValueError, match=r"2 of 5 chunks are missing \(first: \[1, 3\]\)"):
        merge_runs([tmp_path / "shard0"], tmp_path / "merged")
    run_prefilter(base_config(model_dir, data, tmp_path / "other", shard_index=1, num_shards=2,
                              sampling=SamplingOptions(max_tokens=12, seed=8)), backend=backend)
    with pytest.raises(ValueError, match=r"other settings .*sampling.seed: 7 -> 8"):
        merge_runs([tmp_path / "shard0", tmp_path / "other"], tmp_path / "merged")
    run_prefilter(base_config(model_dir, data, tmp_path / "whole"), backend=backend)
    with pytest.raises(ValueError, match="Chunk 0 is in both"):
        merge_runs([tmp_path / "shard0", tmp_path / "whole"], tmp_path / "merged")
    with pytest.raises(ValueError, match="not a prefilter output folder"):
        merge_runs([tmp_path / "shard0", tmp_path / "nothing"], tmp_path / "merged")


def test_merge_through_the_command_line(tmp_path, model_dir, data, backend, capsys):
    for k in (0, 1):
        run_prefilter(base_config(model_dir, data, tmp_path / f"shard{k}", shard_index=k, num_shards=2),
                      backend=backend)
    code = main(["prefilter", "--merge", str(tmp_path / "shard0"), str(tmp_path / "shard1"), "--out",
                 str(tmp_path / "merged"), "--keep", "0:1", "--format", "parquet"])
    assert code == 0 and "rows              13" in capsys.readouterr().out
    from datasets import Dataset

    kept = Dataset.from_parquet(str(tmp_path / "merged/kept.parquet"))
    assert sorted(kept["row_index"]) == list(range(13))


def test_data_parallel_workers_give_the_same_rows_as_one_process(tmp_path, model_dir, data, backend):
    single = run_prefilter(base_config(model_dir, data, tmp_path / "single"), backend=backend)
    config = base_config(model_dir, data, tmp_path / "parallel",
                         engine=EngineOptions(backend="transformers", data_parallel_size=2))
    parallel = run_prefilter(config)
    assert (tmp_path / "parallel/all.jsonl").read_text() == (tmp_path / "single/all.jsonl").read_text()
    assert without_timing(parallel) == without_timing(single)
    specs = [json.loads(p.read_text()) for p in sorted((tmp_path / "parallel/state/workers").glob("rank-*.json"))]
    assert [spec["chunks"] for spec in specs] == [[0, 2, 4], [1, 3]]
    assert all(spec["config"]["engine"]["data_parallel_size"] == 1 for spec in specs)


def test_a_failed_worker_is_reported_with_its_log(tmp_path, model_dir, data):
    config = base_config(model_dir, data, tmp_path / "out", rewards=("test_prefilter_shards:has_one",),
                         engine=EngineOptions(backend="transformers", data_parallel_size=2, dtype="float7"))
    with pytest.raises(RuntimeError, match=r"(?s)worker\(s\) \[0, 1\] failed.*Unknown dtype 'float7'"):
        run_prefilter(config)


def test_parquet_and_datasets_inputs_and_outputs_give_the_same_rows(tmp_path, model_dir, data, backend):
    from datasets import Dataset, DatasetDict, load_from_disk

    reference = run_prefilter(base_config(model_dir, data, tmp_path / "jsonl"), backend=backend)
    reference_rows = [json.loads(line) for line in (tmp_path / "jsonl/all.jsonl").read_text().splitlines()]
    rows = [json.loads(line) for line in Path(data).read_text().splitlines()]
    Dataset.from_list(rows).to_parquet(str(tmp_path / "rows.parquet"))
    DatasetDict({"test": Dataset.from_list(rows)}).save_to_disk(str(tmp_path / "rows_folder"))

    as_parquet = run_prefilter(base_config(model_dir, str(tmp_path / "rows.parquet"), tmp_path / "parquet",
                                           output_format="parquet"), backend=backend)
    table = Dataset.from_parquet(str(tmp_path / "parquet/all.parquet")).to_list()
    assert [r["pass_rate"] for r in table] == [r["pass_rate"] for r in reference_rows]
    assert [r["samples"][0]["text"] for r in table] == [r["samples"][0]["text"] for r in reference_rows]
    assert without_timing(as_parquet)["kept"] == reference["kept"]

    run_prefilter(base_config(model_dir, str(tmp_path / "rows_folder"), tmp_path / "datasets", split="test",
                              output_format="datasets"), backend=backend)
    kept = load_from_disk(str(tmp_path / "datasets/kept")).to_list()
    in_band = [r["row_index"] for r in reference_rows if r["pass_rate"] is not None and 0.2 <= r["pass_rate"] <= 0.8]
    assert [r["row_index"] for r in kept] == in_band

    with pytest.raises(ValueError, match="has no split 'validation'; pass --split with one of test"):
        run_prefilter(base_config(model_dir, str(tmp_path / "rows_folder"), tmp_path / "bad", split="validation"),
                      backend=backend)


def test_the_cli_runs_end_to_end_and_explains_bad_arguments(tmp_path, model_dir, data, capsys):
    args = ["prefilter", "--model", model_dir, "--data", data, "--reward", "test_prefilter_shards:has_one",
            "--num-generations", "2", "--out", str(tmp_path / "out"), "--max-tokens", "4", "--backend",
            "transformers", "--no-progress"]
    assert main(args) == 2
    assert "--keep is required" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main([*args, "--keep", "0.9:0.1"])
    assert "reversed" in capsys.readouterr().err
    assert main([*args, "--keep", "0:1", "-O", "nothing.mode=strict"]) == 2
    assert "does not name one of the rewards" in capsys.readouterr().err
    assert main([*args, "--keep", "0:1"]) == 0
    printed = capsys.readouterr().out
    assert "rows              13 (13 scored, 0 with errors)" in printed and "kept              13" in printed
    report = json.loads((tmp_path / "out/report.json").read_text())
    assert report["rewards"] == ["has_one"] and report["num_generations"] == 2


def test_config_survives_the_trip_to_a_worker():
    config = PrefilterConfig(model="m", data="d", rewards=("a", "b:c"), out="o", keep=KeepBounds(0.1, 0.2),
                             reward_options={"a": {"mode": "strict"}}, chat_template_kwargs={"x": True},
                             sampling=SamplingOptions(top_k=5), engine=EngineOptions(batch_size=3))
    assert PrefilterConfig.from_dict(json.loads(json.dumps(config.to_dict()))) == config
    with pytest.raises(ValueError, match="worker processes"):
        dataclasses.replace(config, rewards=(has_one,)).to_dict()


def test_each_worker_gets_its_own_group_of_gpus(tmp_path, model_dir, data, monkeypatch):
    from referee.recipes.prefilter import parallel
    from referee.recipes.prefilter.run import open_run

    launched = []

    class Launched:
        returncode = 0

        def __init__(self, command, env, stdout, stderr):
            launched.append((command, env["CUDA_VISIBLE_DEVICES"]))

        def poll(self):
            return 0

    monkeypatch.setattr(parallel, "visible_gpus", lambda: ["0", "1", "2", "3", "4"])
    monkeypatch.setattr(parallel.subprocess, "Popen", Launched)
    run = open_run(base_config(model_dir, data, tmp_path / "out",
                               engine=EngineOptions(backend="vllm", tensor_parallel_size=2, data_parallel_size=2)))
    parallel.run_workers(run, lambda rows: None, poll_seconds=0)
    assert [devices for _, devices in launched] == ["0,1", "2,3"]
    assert [command[1:3] for command, _ in launched] == [["-m", "referee.recipes.prefilter.worker"]] * 2
    specs = [json.loads(Path(command[-1]).read_text()) for command, _ in launched]
    assert [spec["chunks"] for spec in specs] == [[0, 2, 4], [1, 3]]
    assert specs[0]["config"]["engine"]["tensor_parallel_size"] == 2
