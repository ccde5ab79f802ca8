"""The command line of a config dataclass is derived from its fields: names, defaults, help, types."""

from __future__ import annotations

import argparse
import dataclasses
from typing import Literal

import pytest

from referee.recipes.commands.prefilter import add_parser, run_config
from referee.recipes.common.config_flags import add_flags, flag, from_flags, missing_flags
from referee.recipes.prefilter import EngineOptions, KeepBounds, PrefilterConfig, SamplingOptions

REQUIRED = ["--model", "m", "--data", "d.jsonl", "--reward", "gsm8k_accuracy", "--out", "o", "--keep", "0.125:0.875"]


def prefilter_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser()
    add_parser(parser.add_subparsers())
    return parser


def config_fields(cls):
    for item in dataclasses.fields(cls):
        if dataclasses.is_dataclass(item.default) and "flag" in item.metadata and item.metadata["flag"].type is None:
            yield from config_fields(type(item.default))
        else:
            yield item


def test_every_config_field_is_one_flag_with_the_fields_help():
    actions = {action.dest: action for action in prefilter_parser()._subparsers._group_actions[0].choices[
        "prefilter"]._actions}
    fields = list(config_fields(PrefilterConfig))
    assert len(fields) == 39  # and --merge, the one flag that is no field: 40 options
    for item in fields:
        assert actions[item.name].help == item.metadata["flag"].help, item.name
    assert set(actions) == {item.name for item in fields} | {"help", "merge"}


def _config(args: argparse.Namespace) -> PrefilterConfig:
    return run_config(PrefilterConfig, args)


def test_a_bare_command_line_gives_the_configs_own_defaults():  # --max-tokens given: no model is read for a budget
    built = _config(prefilter_parser().parse_args(["prefilter", *REQUIRED, "--max-tokens", "512"]))
    assert built == PrefilterConfig(model="m", data="d.jsonl", rewards=("gsm8k_accuracy",), out="o",
                                    keep=KeepBounds(0.125, 0.875))


def test_every_flag_reaches_its_field():
    argv = ["prefilter", *REQUIRED, "-O", "mode=strict", "--num-generations", "4", "--success-reward", "gsm8k_accuracy",
            "--threshold", "0.5", "--split", "test", "--data-config", "main", "--prompt-column", "question",
            "--chat-template", "always", "--system-prompt", "Be brief.", "--chat-template-kwargs",
            '{"enable_thinking": false}', "--temperature", "0.7", "--top-p", "0.9", "--top-k", "50", "--min-p", "0.1",
            "--max-tokens", "64", "--seed", "3", "--backend", "transformers", "--device", "cpu", "--dtype", "float32",
            "--batch-size", "2", "--tensor-parallel-size", "2", "--data-parallel-size", "3",
            "--gpu-memory-utilization", "0.5", "--max-model-len", "1024", "--no-prefix-caching", "--chunk-size", "5",
            "--shard-index", "1", "--num-shards", "2", "--group-size", "16", "--save-samples", "--format", "parquet",
            "--no-progress"]
    assert _config(prefilter_parser().parse_args(argv)) == PrefilterConfig(
        model="m", data="d.jsonl", rewards=("gsm8k_accuracy",), out="o", keep=KeepBounds(0.125, 0.875),
        reward_options={"gsm8k_accuracy": {"mode": "strict"}}, num_generations=4, success_reward="gsm8k_accuracy",
        threshold=0.5, split="test", data_config="main", prompt_column="question", chat_template="always",
        system_prompt="Be brief.", chat_template_kwargs={"enable_thinking": False},
        sampling=SamplingOptions(temperature=0.7, top_p=0.9, top_k=50, min_p=0.1, max_tokens=64, seed=3),
        engine=EngineOptions(backend="transformers", device="cpu", dtype="float32", batch_size=2,
                             tensor_parallel_size=2, data_parallel_size=3, gpu_memory_utilization=0.5,
                             max_model_len=1024, enable_prefix_caching=False),
        chunk_size=5, shard_index=1, num_shards=2, group_size=16, save_samples=True, output_format="parquet",
        progress=False)


def test_help_shows_the_fields_defaults():
    text = prefilter_parser()._subparsers._group_actions[0].choices["prefilter"].format_help()
    assert "samples per prompt (default 8)" in " ".join(text.split())
    assert "rows per saved chunk (default 64)" in " ".join(text.split())


@dataclasses.dataclass(frozen=True)
class Inner:
    width: int = flag(3, help="how wide")


@dataclasses.dataclass(frozen=True)
class Toy:
    name: str = flag(group="main", help="a name")
    mode: Literal["fast", "slow"] = flag("fast", group="main")
    ratio: float | None = flag(None, group="main", metavar="R")
    bounds: KeepBounds = flag(KeepBounds(), type=KeepBounds.parse, cli_default=None, needed=True)
    verbose: bool = flag(False)
    cache: bool = flag(True, flags=("--no-cache",))
    inner: Inner = flag(Inner(), group="inner")
    hidden: int = 7


def test_a_new_field_brings_its_flag_type_choices_and_group(capsys):
    parser = argparse.ArgumentParser(prog="toy")
    groups = add_flags(parser, Toy)
    assert sorted(groups) == ["inner", "main"]
    args = parser.parse_args(["--name", "x", "--mode", "slow", "--ratio", "0.5", "--bounds", "0:0.5", "--verbose",
                              "--no-cache", "--width", "9"])
    assert from_flags(Toy, args) == Toy("x", "slow", 0.5, KeepBounds(0, 0.5), True, False, Inner(9))
    assert from_flags(Toy, parser.parse_args(["--name", "x"]), hidden=8) == Toy("x", hidden=8)
    assert missing_flags(Toy, parser.parse_args([])) == ["--name", "--bounds"]
    assert not hasattr(args, "hidden")
    with pytest.raises(SystemExit):
        parser.parse_args(["--bounds", "0.9:0.1"])
    assert "argument --bounds: Keep bounds 0.9:0.1 are reversed" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        parser.parse_args(["--mode", "medium"])
    assert "invalid choice: 'medium'" in capsys.readouterr().err
