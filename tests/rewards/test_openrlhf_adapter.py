"""referee.rewards.trainers.openrlhf called exactly as OpenRLHF's SingleTurnAgentExecutor calls ``reward_func``.

OpenRLHF loads ``reward_func`` from a ``.py`` path, calls it with ``asyncio.to_thread(reward_func,
[query], [prompt], [label])`` (one sample per call; the query decoded with special tokens), and
catches any ``Exception`` (the reward is then left empty); the samples generator turns the
result into tensors with ``torch.tensor([reward])`` and each ``extra_logs`` value with
``torch.tensor([value])``.
"""

import asyncio
import importlib.util
import json

import pytest

from referee.rewards.trainers import openrlhf
from referee.rewards.trainers.adapters import ErrorRateExceeded
from referee.rewards.trainers.openrlhf import reward_func, reward_func_async, response_text

torch = pytest.importorskip("torch")

PROMPT = "<|im_start|>system\nAnswer as #### N.<|im_end|>\n<|im_start|>user\nWhat is 9 * 2?<|im_end|>\n<|im_start|>assistant\n"


def query(response):
    return PROMPT + response + "<|im_end|><|endoftext|>"


def load_like_openrlhf():
    """SingleTurnAgentExecutor.__init__: spec_from_file_location("reward_func", path) on the module's own file."""
    spec = importlib.util.spec_from_file_location("reward_func", openrlhf.__file__)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.reward_func


async def fetch_rewards_via_func(func, queries, prompts, labels):
    """SingleTurnAgentExecutor._fetch_rewards_via_func: one thread per sample."""
    tasks = [asyncio.to_thread(func, queries[i:i + 1], prompts[i:i + 1], labels[i:i + 1]) for i in range(len(queries))]
    return await asyncio.gather(*tasks)


def experience_info(rewards_info):
    """What the executor and samples generator keep of one result."""
    reward_val = rewards_info.get("rewards")
    score_val = rewards_info.get("scores")
    if score_val is None:
        score_val = reward_val
    info = {"reward": torch.tensor([reward_val]), "score": torch.tensor([score_val])}
    for key, value in (rewards_info.get("extra_logs") or {}).items():
        if isinstance(value, torch.Tensor):
            value = value.flatten()[0].item()
        info[key] = torch.tensor([value])
    return info


LABELS = [
    ('{"data_source": "openai/gsm8k", "answer": "18"}', "9 * 2 = 18\n#### 18", 1.0),
    ('{"verifier": "gsm8k", "answer": "18"}', "#### 17", 0.0),
    ({"verifier": "math", "answer": "18"}, "$\\boxed{18}$", 1.0),
    (json.dumps({"verifier": "code", "tests": {"fn_name": "f", "inputs": [[9]], "outputs": [18]}}),
     "```python\ndef f(x):\n    return 2 * x\n```", 1.0),
]


def test_the_file_loaded_reward_func_in_openrlhfs_threads():
    func = load_like_openrlhf()
    queries = [query(response) for _, response, _ in LABELS]
    results = asyncio.run(fetch_rewards_via_func(func, queries, [PROMPT] * len(LABELS), [label for label, _, _ in LABELS]))
    infos = [experience_info(result) for result in results]
    assert [info["reward"].flatten().item() for info in infos] == [expected for _, _, expected in LABELS]
    assert all(set(info) >= {"referee_error", "referee_timeout", "referee_no_answer", "referee_accuracy"} for info in infos)
    assert all(info["referee_error"].shape == (1,) for info in infos)  # scalars: one number per sample


def test_the_prompt_and_special_tokens_are_cut_before_judging():
    assert response_text(query("#### 18"), PROMPT) == "#### 18"
    assert response_text("<s>[INST] 9*2? [/INST] 18</s><pad><pad>", "[INST] 9*2? [/INST]") == " 18"
    result = reward_func([query("The answer is 17")], [PROMPT], ['{"verifier": "gsm8k", "answer": "17"}'])
    assert result["rewards"] == [1.0]


def test_a_prompt_with_numbers_does_not_leak_into_the_answer():
    prompt = "Q: 18 apples, then 18 more. How many?\nA:"
    result = reward_func([prompt + " I am not sure.</s>"], [prompt], ['{"verifier": "gsm8k", "answer": "18"}'])
    assert result["rewards"] == [0.0] and result["extra_logs"]["referee_no_answer"] == 1.0


def test_plain_labels_need_a_default_verifier(monkeypatch):
    from referee.rewards.trainers.routing import UnknownDataSource

    with pytest.raises(UnknownDataSource, match="default_verifier"):
        reward_func([query("#### 18")], [PROMPT], ["18"])
    monkeypatch.setenv(openrlhf.OPTIONS_ENV, json.dumps({"default_verifier": "gsm8k"}))
    assert reward_func([query("#### 18")], [PROMPT], ["18"])["rewards"] == [1.0]


def test_bad_options_in_the_environment_are_named(monkeypatch):
    from referee.rewards.trainers.routing import ConfigurationError

    monkeypatch.setenv(openrlhf.OPTIONS_ENV, "{default_verifier: gsm8k}")
    with pytest.raises(ConfigurationError, match="REFEREE_OPTIONS is not JSON"):
        reward_func([query("#### 18")], [PROMPT], ["18"])


def test_an_error_scores_the_fallback_and_is_logged():
    result = reward_func([query("#### 18")], [PROMPT], ['{"verifier": "gsm8k", "answer": "n/a"}'])
    assert result["rewards"] == [0.0] and result["extra_logs"]["referee_error"] == 1.0


def test_missing_code_tests_are_an_error_not_a_zero_for_the_model():
    result = reward_func([query("def f(x):\n    return x")], [PROMPT], ['{"verifier": "code"}'])
    assert result["extra_logs"]["referee_error"] == 1.0


def test_mismatched_lists_are_refused():
    with pytest.raises(ValueError, match="one prompt and one label per query"):
        reward_func([query("#### 18")], [PROMPT], [])


def test_the_async_twin():
    result = asyncio.run(reward_func_async([query("#### 18")], [PROMPT], ['{"verifier": "gsm8k", "answer": "18"}']))
    assert result["rewards"] == [1.0]


def test_an_outage_escapes_openrlhfs_except_exception(monkeypatch):
    """The executor logs any Exception and trains on with the reward left out: the breaker must get past it."""
    monkeypatch.setenv(openrlhf.OPTIONS_ENV, json.dumps({"max_error_share": 0.0, "error_window": 4}))
    func = load_like_openrlhf()

    async def execute():
        try:
            return await fetch_rewards_via_func(func, [query("#### 18")], [PROMPT], ['{"verifier": "gsm8k", "answer": "?"}'])
        except Exception:
            return "swallowed"

    with pytest.raises(ErrorRateExceeded):
        asyncio.run(execute())


def test_json_labels_without_a_verifier_use_the_default(monkeypatch):
    monkeypatch.setenv(openrlhf.OPTIONS_ENV, json.dumps({"default_verifier": "code"}))
    tests = json.dumps({"inputs": ["1 2\n"], "outputs": ["3\n"]})  # verl's stored shape as an OpenRLHF label
    program = "a, b = map(int, input().split())\nprint(a + b)"
    assert reward_func([query(program)], [PROMPT], [tests])["rewards"] == [1.0]
    monkeypatch.setenv(openrlhf.OPTIONS_ENV, json.dumps({"default_verifier": "gsm8k"}))
    assert reward_func([query("#### 18")], [PROMPT], ['{"answer": "18"}'])["rewards"] == [1.0]


def test_a_query_without_its_prompt_is_not_judged_prompt_and_all():
    """Issue 34: when the prompt was not found, referee judged prompt + response, and a worked answer
    in the prompt scored 1.0 for "I am not sure."."""
    prompt = "Example: 9 * 2 = 18\n#### 18\nNow: what is 9 * 2?\nA:"
    query = "<|im_start|>user\nExample: 9*2=18 #### 18 Now: what is 9 * 2?<|im_end|>\n<|im_start|>assistant\nI am not sure.<|im_end|>"
    result = reward_func([query], [prompt], ['{"verifier": "gsm8k", "answer": "18"}'])
    assert result["rewards"] == [0.0] and result["extra_logs"]["referee_error"] == 1.0


def test_a_prompt_whose_spaces_changed_on_the_way_is_still_cut():
    prompt = "Q: 18 apples, then 18 more.\nHow many?\nA:"
    query = "<s> Q: 18 apples,  then 18 more. How many?\nA: I am not sure.</s>"
    result = reward_func([query], [prompt], ['{"verifier": "gsm8k", "answer": "18"}'])
    assert result["rewards"] == [0.0] and result["extra_logs"]["referee_no_answer"] == 1.0


def test_a_typod_data_source_is_refused_even_with_a_default_verifier(monkeypatch):
    """Issue 34: a typo'd data_source silently went to the default verifier."""
    from referee.rewards.trainers.routing import UnknownDataSource

    monkeypatch.setenv(openrlhf.OPTIONS_ENV, json.dumps({"default_verifier": "math"}))
    with pytest.raises(UnknownDataSource, match="did you mean 'openai/gsm8k'"):
        reward_func([query("#### 18")], [PROMPT], ['{"data_source": "openai/gms8k", "answer": "18"}'])
    assert reward_func([query("#### 18")], [PROMPT], ['18'])["rewards"] == [1.0]  # a plain label: the default
    monkeypatch.setenv(openrlhf.OPTIONS_ENV, json.dumps({"default_verifier": "math", "data_sources": {"openai/gms8k": "gsm8k"}}))
    assert reward_func([query("#### 18")], [PROMPT], ['{"data_source": "openai/gms8k", "answer": "18"}'])["rewards"] == [1.0]
