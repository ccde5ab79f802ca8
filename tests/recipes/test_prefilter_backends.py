"""Generation backends: the vLLM wiring (with a stand-in vllm module) and transformers generate."""

import importlib.machinery
import json
import sys
import types
from types import SimpleNamespace

import pytest
import torch

from referee.recipes.common import generation
from referee.recipes.common.backends import build_backend
from referee.recipes.common.generation import resolve_backend
from referee.recipes.common.transformers_backend import TransformersBackend
from referee.recipes.prefilter import EngineOptions, KeepBounds, PrefilterConfig, SamplingOptions, run_prefilter

torch.set_num_threads(1)


@pytest.fixture
def fake_vllm(monkeypatch, tokenizer):
    """A stand-in ``vllm`` module: LLM records how it was built and called; sample j of a
    prompt is the digit (seed + j) % 10 then end-of-sequence, except the last sample, which
    repeats the digit up to max_tokens and stops for length."""
    eos = tokenizer.eos_token_id

    class LLM:
        built = []

        def __init__(self, **kwargs):
            self.kwargs, self.calls = kwargs, []
            self.llm_engine = SimpleNamespace(model_config=SimpleNamespace(max_model_len=kwargs["max_model_len"] or 64))
            LLM.built.append(self)

        def generate(self, prompts, params, use_tqdm=True):
            self.calls.append((prompts, params, use_tqdm))
            results = []
            for param in params:
                outputs = []
                for j in range(param.n):
                    digit = tokenizer.convert_tokens_to_ids(str((param.seed + j) % 10))
                    if j == param.n - 1:
                        outputs.append(SimpleNamespace(token_ids=[digit] * param.max_tokens, finish_reason="length"))
                    else:
                        outputs.append(SimpleNamespace(token_ids=[digit, eos], finish_reason="stop"))
                results.append(SimpleNamespace(outputs=outputs))
            return results

    class SamplingParams:
        def __init__(self, **kwargs):
            self.__dict__.update(kwargs)

    module = types.ModuleType("vllm")
    module.__spec__ = importlib.machinery.ModuleSpec("vllm", None)
    module.LLM, module.SamplingParams = LLM, SamplingParams
    monkeypatch.setitem(sys.modules, "vllm", module)
    return module


def test_the_vllm_engine_gets_the_tensor_parallel_memory_context_and_prefix_caching_options(
        fake_vllm, model_dir, tokenizer):
    engine = EngineOptions(backend="vllm", tensor_parallel_size=2, gpu_memory_utilization=0.5, max_model_len=128,
                           enable_prefix_caching=False, dtype="bfloat16")
    backend = build_backend(model_dir, tokenizer, engine)
    assert fake_vllm.LLM.built[-1].kwargs == {
        "model": model_dir, "tensor_parallel_size": 2, "gpu_memory_utilization": 0.5, "max_model_len": 128,
        "enable_prefix_caching": False, "dtype": "bfloat16",
    }
    assert backend.context_length == 128
    build_backend(model_dir, tokenizer, EngineOptions(backend="vllm"))
    assert fake_vllm.LLM.built[-1].kwargs["enable_prefix_caching"] is True  # on by default


def test_vllm_gets_token_ids_n_samples_and_one_seed_per_prompt(fake_vllm, model_dir, tokenizer):
    backend = build_backend(model_dir, tokenizer, EngineOptions(backend="vllm"))
    sampling = SamplingOptions(temperature=0.7, top_p=0.9, top_k=20, min_p=0.05, max_tokens=4)
    groups = backend.generate([[5, 6], [7]], 3, sampling, seed=100)
    prompts, params, use_tqdm = fake_vllm.LLM.built[-1].calls[-1]
    assert prompts == [{"prompt_token_ids": [5, 6]}, {"prompt_token_ids": [7]}] and use_tqdm is False
    for position, param in enumerate(params):
        assert param.__dict__ == {"n": 3, "temperature": 0.7, "top_p": 0.9, "top_k": 20, "min_p": 0.05,
                                  "max_tokens": 4, "seed": 100 + position, "stop_token_ids": [tokenizer.eos_token_id]}
    assert [[s.text for s in group] for group in groups] == [["0", "1", "2222"], ["1", "2", "3333"]]
    assert [[s.truncated for s in group] for group in groups] == [[False, False, True]] * 2
    assert groups[0][0].token_ids == (tokenizer.convert_tokens_to_ids("0"), tokenizer.eos_token_id)


def test_vllm_also_stops_at_the_generation_configs_end_of_sequence_tokens(fake_vllm, tmp_path, tokenizer):
    (tmp_path / "generation_config.json").write_text(json.dumps({"eos_token_id": [tokenizer.eos_token_id, 42]}))
    backend = build_backend(str(tmp_path), tokenizer, EngineOptions(backend="vllm"))
    backend.generate([[5]], 2, SamplingOptions(), seed=0)
    assert fake_vllm.LLM.built[-1].calls[-1][1][0].stop_token_ids == [tokenizer.eos_token_id, 42]


def test_the_whole_run_works_on_the_vllm_path(fake_vllm, model_dir, tmp_path):
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps({"prompt": p}) + "\n" for p in ("1 + 1 = ", "2 + 2 = ", "9" * 70)))

    def is_even_digit(prompts, completions, **kwargs):
        return [float(int(text[0]) % 2 == 0) for text in completions]

    report = run_prefilter(PrefilterConfig(
        model=model_dir, data=str(data), rewards=(is_even_digit,), out=str(tmp_path / "out"), num_generations=4,
        keep=KeepBounds(0, 1), progress=False, sampling=SamplingOptions(max_tokens=3),
        engine=EngineOptions(backend="vllm")))
    rows = [json.loads(line) for line in (tmp_path / "out/all.jsonl").read_text().splitlines()]
    assert [row["num_truncated"] for row in rows] == [1, 1, 0]
    assert all(row["pass_rate"] == 0.5 for row in rows[:2])  # digits s, s+1, s+2, s+3: two are even
    assert "exceeds the model's context of 64 tokens" in rows[2]["errors"][0]
    assert json.loads((tmp_path / "out/state/run.json").read_text())["settings"]["backend"] == "vllm"
    assert report["rows_scored"] == 2


def test_auto_takes_vllm_only_when_cuda_and_vllm_are_both_there(monkeypatch, fake_vllm):
    monkeypatch.setattr(generation, "cuda_available", lambda: True)
    assert resolve_backend("auto") == "vllm"
    monkeypatch.setattr(generation, "cuda_available", lambda: False)
    assert resolve_backend("auto") == "transformers"
    monkeypatch.setattr(generation, "cuda_available", lambda: True)
    monkeypatch.setitem(sys.modules, "vllm", None)
    assert resolve_backend("auto") == "transformers"
    assert resolve_backend("vllm") == "vllm"  # asked for explicitly


def test_the_vllm_backend_without_vllm_says_how_to_get_it(monkeypatch, model_dir, tokenizer):
    monkeypatch.setitem(sys.modules, "vllm", None)
    with pytest.raises(ValueError, match=r"pip install 'referee\[vllm\]' or pass --backend transformers"):
        build_backend(model_dir, tokenizer, EngineOptions(backend="vllm"))


@pytest.fixture(scope="module")
def transformers_backend(model_dir, tokenizer):
    return build_backend(model_dir, tokenizer, EngineOptions(backend="transformers", batch_size=3))


def test_transformers_samples_depend_on_the_seed_only(transformers_backend, tokenizer):
    prompts = [tokenizer(f"{i} + 4 = ")["input_ids"] for i in range(4)]
    sampling = SamplingOptions(max_tokens=10)
    first = transformers_backend.generate(prompts, 3, sampling, seed=1)
    assert first == transformers_backend.generate(prompts, 3, sampling, seed=1)
    assert first != transformers_backend.generate(prompts, 3, sampling, seed=2)
    assert [len(group) for group in first] == [3, 3, 3, 3]
    # an untrained model rarely stops: samples without end-of-sequence are cut at max_tokens
    for sample in (s for group in first for s in group):
        assert len(sample.token_ids) <= 10
        assert sample.truncated == (tokenizer.eos_token_id not in sample.token_ids)


def test_left_padding_gives_each_prompt_what_it_gets_alone(transformers_backend, tokenizer):
    prompts = [tokenizer(text)["input_ids"] for text in ("7 = ", "12 + 30 = ", "1 + 1 + 1 + 1 = ")]
    greedy = SamplingOptions(temperature=0, max_tokens=8)
    together = transformers_backend.generate(prompts, 2, greedy, seed=0)
    alone = [transformers_backend.generate([ids], 2, greedy, seed=0)[0] for ids in prompts]
    assert [[s.text for s in g] for g in together] == [[s.text for s in g] for g in alone]
    assert all(group[0] == group[1] for group in together)  # greedy: the G samples agree


def test_transformers_output_is_cut_at_end_of_sequence_and_grouped_by_prompt(tokenizer):
    eos, pad = tokenizer.eos_token_id, tokenizer.pad_token_id
    digit = tokenizer.convert_tokens_to_ids
    # per prompt (known by its last token): its 2 completions, padded to max_new_tokens=3
    script = {7: [[digit("1"), eos, pad], [digit("2"), digit("2"), digit("2")]],
              8: [[digit("3"), eos, pad], [eos, pad, pad]]}

    class Scripted(torch.nn.Module):
        config = SimpleNamespace(max_position_embeddings=32)
        generation_config = SimpleNamespace(eos_token_id=eos)
        device = torch.device("cpu")

        def generate(self, input_ids, attention_mask, **options):
            self.options = options
            completions = [row for ids in input_ids.tolist() for row in script[ids[-1]]]
            return torch.cat([input_ids.repeat_interleave(2, dim=0), torch.tensor(completions)], dim=1)

    model = Scripted()
    backend = TransformersBackend(model, tokenizer, batch_size=8)
    # the longer prompt comes first: batching by length must not shuffle the results
    groups = backend.generate([[5, 6, 7], [8]], 2, SamplingOptions(max_tokens=3, top_k=4), seed=0)
    assert [[(s.text, s.truncated) for s in g] for g in groups] == [[("1", False), ("222", True)],
                                                                     [("3", False), ("", False)]]
    assert model.options["num_return_sequences"] == 2 and model.options["top_k"] == 4
    assert model.options["max_new_tokens"] == 3 and model.options["do_sample"] is True
    assert backend.context_length == 32
