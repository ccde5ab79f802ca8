"""Pre-filter hardening: whole-run failures exit non-zero, huge prompts are refused cheaply,
bad paths are one line, shards split the rows evenly."""

import json
from pathlib import Path

import pytest
import torch

from referee.recipes.cli import main
from referee.recipes.common.prompts import PromptError, PromptRenderer
from referee.recipes.prefilter import EngineOptions, KeepBounds, PrefilterConfig, Sample, SamplingOptions, run_prefilter
from referee.recipes.prefilter.run import open_run, rows_per_chunk

torch.set_num_threads(1)


def write_jsonl(path, rows):
    Path(path).write_text("".join(json.dumps(row) + "\n" for row in rows))
    return str(path)


class Echo:
    """A backend answering every prompt with "1"; records the prompts it was given."""

    def __init__(self, context_length=None):
        self.context_length = context_length
        self.prompts = 0

    def generate(self, prompt_ids, n, sampling, seed):
        self.prompts += len(prompt_ids)
        return [[Sample("1", (1,), False)] * n for _ in prompt_ids]


def one_error_line(err):
    """The command's own error line (progress bars of the libraries may come before it)."""
    lines = [line for line in err.splitlines() if "referee prefilter:" in line]
    assert len(lines) == 1 and err.rstrip("\n").endswith(lines[0]), err
    return lines[0]


def is_one(prompts, completions, **kwargs):
    return [float(text == "1") for text in completions]


class CountingTokenizer:
    """A character tokenizer that remembers the longest text it was asked to tokenise."""

    chat_template = None

    def __init__(self):
        self.longest = 0

    def __call__(self, text, add_special_tokens=True):
        self.longest = max(self.longest, len(text))
        return {"input_ids": [ord(c) % 50 for c in text]}

    def get_vocab(self):
        return {chr(i): i for i in range(50)}


def test_a_huge_prompt_is_refused_from_a_prefix_without_tokenising_it_all():
    tokenizer = CountingTokenizer()
    renderer = PromptRenderer(tokenizer, max_tokens=512, context_length=4096)
    huge = "word " * 10_000_000  # 50 MB: used to be tokenised whole (152 s, 19.6 GB on a real tokenizer)
    with pytest.raises(PromptError, match=r"prompt is 50,000,000 characters and its first [\d,]+ alone are"):
        renderer.render({"prompt": huge})
    assert tokenizer.longest <= 8 * 3584  # the work done: never more than a prefix was tokenised
    # a prompt that fits is tokenised whole, as before, and one just too long still gets the exact count
    assert len(renderer.render({"prompt": "x" * 3584}).token_ids) == 3584
    with pytest.raises(PromptError, match="prompt is 3585 tokens"):
        renderer.render({"prompt": "x" * 3585})


def test_a_tokenizer_packing_many_characters_per_token_still_gets_an_exact_answer():
    class Packing(CountingTokenizer):  # 100 characters a token: the prefix never proves the prompt too long
        def __call__(self, text, add_special_tokens=True):
            self.longest = max(self.longest, len(text))
            return {"input_ids": [1] * -(-len(text) // 100)}

    renderer = PromptRenderer(Packing(), max_tokens=10, context_length=110)
    assert len(renderer.render({"prompt": "y" * 10_000}).token_ids) == 100
    with pytest.raises(PromptError, match="prompt is 101 tokens"):
        renderer.render({"prompt": "y" * 10_001})


def test_a_huge_row_fails_alone_and_the_run_goes_on(tmp_path, tokenizer):
    data = write_jsonl(tmp_path / "rows.jsonl", [{"prompt": "1 + 0 = "}, {"prompt": "9 " * 2_000_000},
                                                 {"prompt": "0 + 1 = "}])
    config = PrefilterConfig(model="unused", data=data, rewards=(is_one,), out=str(tmp_path / "out"), num_generations=2,
                             progress=False, sampling=SamplingOptions(max_tokens=8))
    backend = Echo(context_length=256)
    report = run_prefilter(config, backend=backend, tokenizer=tokenizer)
    assert (report["rows"], report["rows_scored"], backend.prompts) == (3, 2, 2)
    rows = [json.loads(line) for line in (tmp_path / "out/all.jsonl").read_text().splitlines()]
    assert "prompt is 4,000,000 characters" in rows[1]["errors"][0] and rows[1]["pass_rate"] is None


def test_max_tokens_that_leave_no_room_for_a_prompt_stop_the_run_at_once(tmp_path, model_dir, capsys):
    data = write_jsonl(tmp_path / "rows.jsonl", [{"prompt": f"{i} + 1 = "} for i in range(3)])
    args = ["prefilter", "--model", model_dir, "--data", data, "--reward", "gsm8k_accuracy", "--keep", "0:1",
            "--num-generations", "2", "--out", str(tmp_path / "out"), "--backend", "transformers", "--no-progress",
            "--max-tokens", "512"]
    assert main(args) == 2  # --max-tokens 512 asked for against the tiny model's 256-token context
    err = one_error_line(capsys.readouterr().err)
    assert "--max-tokens 512 leaves no room" in err and "256" in err


def test_without_max_tokens_the_budget_is_the_context_less_the_longest_prompt(tmp_path, model_dir, capsys):
    rows = [{"prompt": f"{i} + 1 = ", "answer": i + 1} for i in range(3)] + [{"prompt": "12 + 100 = ", "answer": 112}]
    data = write_jsonl(tmp_path / "rows.jsonl", rows)
    args = ["prefilter", "--model", model_dir, "--data", data, "--reward", "gsm8k_accuracy", "--keep", "0:1",
            "--num-generations", "2", "--out", str(tmp_path / "out"), "--backend", "transformers", "--no-progress"]
    assert main(args) == 0  # the default of 512 new tokens failed every row of a 256-token model
    assert "max tokens 245: the model's context of 256 tokens less the longest prompt's 11" in capsys.readouterr().err
    manifest = json.loads((tmp_path / "out/state/run.json").read_text())
    assert manifest["settings"]["sampling"]["max_tokens"] == 245  # a rerun resolves the same budget and resumes
    assert main(args) == 0


def test_a_run_in_which_no_row_is_scored_exits_1_with_the_most_common_reason(tmp_path, model_dir, capsys):
    data = write_jsonl(tmp_path / "rows.jsonl", [{"prompt": "1 + 1 = " * 20}] * 3 + [{"question": "?"}])
    args = ["prefilter", "--model", model_dir, "--data", data, "--reward", "gsm8k_accuracy", "--keep", "0:1",
            "--num-generations", "2", "--out", str(tmp_path / "out"), "--backend", "transformers", "--no-progress",
            "--max-tokens", "200"]
    assert main(args) == 1  # used to exit 0 with an empty kept.jsonl and nothing on stderr
    err = one_error_line(capsys.readouterr().err)
    assert "no row of 4 could be scored; most often (3 rows): prompt is 160 tokens; with 200 new tokens" in err
    report = json.loads((tmp_path / "out/report.json").read_text())
    assert report["errors"]["unscored_reasons"][1]["rows"] == 1


@pytest.mark.parametrize("where, message", [
    ("out_proc", "--out /proc/referee-x cannot be written"),
    ("out_file", "is a file; give a folder"),
    ("data_empty_folder", "is an empty folder"),
    ("data_folder", "Cannot read the folder"),
    ("model_missing", "does not exist"),
    ("model_file", "--model"),
])
def test_bad_paths_are_one_line_exit_2(tmp_path, model_dir, capsys, where, message):
    data = write_jsonl(tmp_path / "rows.jsonl", [{"prompt": "1 + 1 = "}])
    (tmp_path / "a_file").write_text("x")
    (tmp_path / "empty").mkdir()
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "weights.xyz").write_bytes(b"\x00\x01 not data")
    paths = {"--model": model_dir, "--data": data, "--out": str(tmp_path / "out")}
    paths.update({
        "out_proc": {"--out": "/proc/referee-x"}, "out_file": {"--out": str(tmp_path / "a_file")},
        "data_empty_folder": {"--data": str(tmp_path / "empty")}, "data_folder": {"--data": str(tmp_path / "notes")},
        "model_missing": {"--model": str(tmp_path / "no_model")}, "model_file": {"--model": str(tmp_path / "a_file")},
    }[where])
    args = ["prefilter", "--reward", "gsm8k_accuracy", "--keep", "0:1", "--num-generations", "2", "--max-tokens", "4",
            "--backend", "transformers", "--no-progress"] + [item for pair in paths.items() for item in pair]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert message in one_error_line(err) and "Traceback" not in err


def test_shards_split_the_rows_evenly_whatever_the_chunk_size(tmp_path):
    data = write_jsonl(tmp_path / "rows.jsonl", [{"prompt": f"{i} + 1 = "} for i in range(12)])
    taken = []
    for index in (0, 1):
        config = PrefilterConfig(model="unused", data=data, rewards=(is_one,), out=str(tmp_path / f"shard{index}"),
                                 shard_index=index, num_shards=2, progress=False)
        run = open_run(config)  # the default 64-row chunks used to give shard 0 all 12 rows and shard 1 none
        taken.append(run.rows_in(run.assigned))
    assert taken == [6, 6]
    assert [rows_per_chunk(1000, 64, 3), rows_per_chunk(13, 3, 3), rows_per_chunk(12, 64, 1)] == [56, 3, 64]


def test_sharded_small_runs_merge_and_rerun_as_one(tmp_path, tokenizer, capsys):
    data = write_jsonl(tmp_path / "rows.jsonl", [{"prompt": f"{i} + 1 = "} for i in range(12)])

    def config(out, **more):
        return PrefilterConfig(model="unused", data=data, rewards=(is_one,), out=str(tmp_path / out), progress=False,
                               num_generations=2, keep=KeepBounds(0.0, 1.0), **more)

    for index in (0, 1):
        report = run_prefilter(config(f"shard{index}", shard_index=index, num_shards=2), backend=Echo(),
                               tokenizer=tokenizer)
        assert report["rows"] == 6
    assert main(["prefilter", "--merge", str(tmp_path / "shard0"), str(tmp_path / "shard1"), "--out",
                 str(tmp_path / "merged")]) == 0
    assert "rows              12" in capsys.readouterr().out
    backend = Echo()
    again = run_prefilter(config("merged"), backend=backend, tokenizer=tokenizer)  # resumes: nothing to generate
    assert again["rows"] == 12 and backend.prompts == 0


@pytest.mark.parametrize("option, message", [
    (["--reward", "math_accuracy", "-O", "timeout=-1"], "timeout=-1 must be a positive number"),
    (["--reward", "gsm8k_accuracy", "--threshold", "nan"], "threshold nan"),
    (["--reward", "gsm8k_accuracy", "--temperature", "nan"], "temperature nan"),
])
def test_option_values_are_checked_before_the_run(tmp_path, model_dir, capsys, option, message):
    data = write_jsonl(tmp_path / "rows.jsonl", [{"prompt": "1 + 1 = ", "answer": "2"}])
    args = ["prefilter", "--model", model_dir, "--data", data, "--keep", "0:1", "--num-generations", "2",
            "--out", str(tmp_path / "out"), "--backend", "transformers", "--no-progress", "--max-tokens", "4", *option]
    assert main(args) == 2  # -O timeout=-1 used to run and exit 0 with every sample an error
    assert message in one_error_line(capsys.readouterr().err)
    assert not (tmp_path / "out" / "kept.jsonl").exists()


def test_prefilter_never_writes_over_its_own_input(tmp_path, model_dir, capsys):
    out = tmp_path / "out"
    out.mkdir()
    data = write_jsonl(out / "kept.jsonl", [{"prompt": "1 + 1 = "}])  # the kept rows of an earlier run, filtered again
    before = Path(data).read_bytes()
    args = ["prefilter", "--model", model_dir, "--data", data, "--reward", "gsm8k_accuracy", "--keep", "0:1",
            "--num-generations", "2", "--out", str(out), "--backend", "transformers", "--no-progress",
            "--max-tokens", "4"]
    assert main(args) == 2
    assert "rewrites" in one_error_line(capsys.readouterr().err)
    assert Path(data).read_bytes() == before
