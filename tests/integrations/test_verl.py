"""verl's own reward managers call referee on a fabricated DataProto (``make test-integrations``).

These run only where verl is installed (its own virtualenv, .venv-integrations: verl pins a
transformers release TRL does not accept); in the main suite they are skipped. The reward
function is loaded the way verl's trainer loads it (``get_custom_reward_fn`` on a
``custom_reward_function`` config with ``pkg://referee.rewards.trainers.verl`` and ``reward_kwargs``).
"""

import asyncio

import pytest

verl = pytest.importorskip("verl")
np = pytest.importorskip("numpy")
torch = pytest.importorskip("torch")
from omegaconf import OmegaConf  # noqa: E402
from verl import DataProto  # noqa: E402
from verl.trainer.ppo.reward import get_custom_reward_fn  # noqa: E402

from referee.rewards.trainers.adapters import METRIC_KEYS, ErrorRateExceeded  # noqa: E402

PAD = 0


class CharTokenizer:
    """Characters as token ids (offset by 10); id 0 is padding, a special token."""

    def encode(self, text):
        return [ord(c) + 10 for c in text]

    def decode(self, ids, skip_special_tokens=True):
        ids = ids.tolist() if hasattr(ids, "tolist") else list(ids)
        return "".join(chr(i - 10) for i in ids if not (skip_special_tokens and i == PAD))

    def batch_decode(self, batch, skip_special_tokens=True):
        return [self.decode(ids, skip_special_tokens) for ids in batch]


# (data_source, response, ground_truth, extra_info, expected score, expected status key)
ROWS = [
    ("openai/gsm8k", "9 * 2 = 18\n#### 18", "18", {}, 1.0, "acc"),
    ("openai/gsm8k", "#### 17", "18", {}, 0.0, None),
    ("lighteval/MATH", "so $\\boxed{\\frac{1}{2}}$", "0.5", {}, 1.0, "acc"),
    ("my/dataset", "#### 7", "7", {"verifier": "gsm8k"}, 1.0, "acc"),
    ("openai/gsm8k", "no idea", "18", {}, 0.0, "referee_no_answer"),
    ("openai/gsm8k", "#### 18", "not a number", {}, -1.0, "referee_error"),  # the fallback
]


def make_batch(rows, tokenizer, prompt_len=8, response_len=40):
    """A DataProto shaped as verl's rollout leaves it: left-padded prompts, right-padded responses."""
    prompts, responses, masks = [], [], []
    for i, (_, response, *_rest) in enumerate(rows):
        prompt = tokenizer.encode(f"Q{i}?")[-prompt_len:]
        answer = tokenizer.encode(response)[:response_len]
        prompts.append([PAD] * (prompt_len - len(prompt)) + prompt)
        responses.append(answer + [PAD] * (response_len - len(answer)))
        masks.append([0] * (prompt_len - len(prompt)) + [1] * len(prompt) + [1] * len(answer) + [0] * (response_len - len(answer)))
    prompts, responses = torch.tensor(prompts), torch.tensor(responses)
    return DataProto.from_dict(
        tensors={"prompts": prompts, "responses": responses, "input_ids": torch.cat([prompts, responses], dim=1),
                 "attention_mask": torch.tensor(masks)},
        non_tensors={"data_source": np.array([r[0] for r in rows], dtype=object),
                     "reward_model": np.array([{"ground_truth": r[2]} for r in rows], dtype=object),
                     "extra_info": np.array([dict(r[3]) for r in rows], dtype=object)},
    )


def reward_fn(name, **reward_kwargs):
    # verl >= 0.7 keeps it under `reward.` (earlier releases: top-level custom_reward_function)
    config = OmegaConf.create({"reward": {"custom_reward_function": {"path": "pkg://referee.rewards.trainers.verl", "name": name,
                                                                     "reward_kwargs": reward_kwargs}}})
    return get_custom_reward_fn(config)


def check_rewards(reward_tensor, extra, rows, data):
    prompt_len = data.batch["prompts"].shape[-1]
    lengths = data.batch["attention_mask"][:, prompt_len:].sum(dim=-1)
    for i, row in enumerate(rows):
        assert reward_tensor[i, lengths[i] - 1].item() == pytest.approx(row[4]), row
        assert reward_tensor[i].sum().item() == pytest.approx(row[4]), row  # one reward, on the last token
        if row[5] is not None:
            assert extra[row[5]][i] == 1.0, (row, {k: v[i] for k, v in extra.items()})
    assert set(extra) >= set(METRIC_KEYS)
    assert all(len(extra[key]) == len(rows) for key in METRIC_KEYS)


def test_naive_reward_manager():
    from verl.workers.reward_manager.naive import NaiveRewardManager

    tokenizer = CharTokenizer()
    data = make_batch(ROWS, tokenizer)
    manager = NaiveRewardManager(tokenizer=tokenizer, num_examine=0, compute_score=reward_fn("compute_score", fallback=-1.0))
    result = manager(data, return_dict=True)
    check_rewards(result["reward_tensor"], result["reward_extra_info"], ROWS, data)


def test_batch_reward_manager():
    from verl.workers.reward_manager.batch import BatchRewardManager

    tokenizer = CharTokenizer()
    data = make_batch(ROWS, tokenizer)
    manager = BatchRewardManager(tokenizer=tokenizer, num_examine=0,
                                 compute_score=reward_fn("compute_score_batch", fallback=-1.0))
    result = manager(data, return_dict=True)
    check_rewards(result["reward_tensor"], result["reward_extra_info"], ROWS, data)


def test_prime_reward_manager_reads_the_score_from_worker_processes():
    from verl.workers.reward_manager.prime import PrimeRewardManager

    rows = [r for r in ROWS if r[0] == "openai/gsm8k" and r[4] >= 0]  # prime passes no reward_kwargs: fallback 0
    tokenizer = CharTokenizer()
    data = make_batch(rows, tokenizer)
    manager = PrimeRewardManager(tokenizer=tokenizer, num_examine=0, compute_score=reward_fn("compute_score"))
    assert manager.verify(data) == [row[4] for row in rows]


def reward_loop_scores(data, name, manager="naive", **reward_kwargs):
    """What verl's RewardLoopWorker and RewardLoopManager do with a batch (without Ray actors):
    the registered `naive` manager from load_reward_manager, one run_single task per sample,
    then rm_scores and the reward_extra_info columns, whose keys come from sample 0."""
    from verl.trainer.ppo.reward import load_reward_manager

    config = OmegaConf.create({
        "reward": {"reward_manager": {"source": "register", "name": manager},
                   "custom_reward_function": {"path": "pkg://referee.rewards.trainers.verl", "name": name,
                                              "reward_kwargs": reward_kwargs}},
        "actor_rollout_ref": {"rollout": {"multi_turn": {}}},
    })
    asyncio.set_event_loop(asyncio.new_event_loop())  # verl's prime manager closes the loop it set
    manager = load_reward_manager(config, CharTokenizer())

    async def compute_score_batch():
        tasks = [asyncio.create_task(manager.run_single(data[i:i + 1])) for i in range(len(data))]
        return await asyncio.gather(*tasks)

    outputs = manager.loop.run_until_complete(compute_score_batch())
    rm_scores = type(manager).assemble_rm_scores(data, [item["reward_score"] for item in outputs])
    infos = [output.get("reward_extra_info", {}) for output in outputs]
    columns = {key: np.array([info[key] for info in infos]) for key in infos[0]}  # KeyError if a key goes missing
    return manager, rm_scores, columns


@pytest.mark.parametrize("name", ["compute_score_async", "compute_score"])
def test_reward_loop(name):
    tokenizer = CharTokenizer()
    data = make_batch(ROWS, tokenizer)
    manager, rm_scores, columns = reward_loop_scores(data, name, fallback=-1.0)
    assert manager.is_async_reward_score == (name == "compute_score_async")
    check_rewards(rm_scores, columns, ROWS, data)


def test_an_outage_stops_verl_instead_of_training_on_fallbacks():
    from verl.workers.reward_manager.naive import NaiveRewardManager

    rows = [("openai/gsm8k", "#### 18", "broken gold", {}, 0.0, "referee_error")] * 8
    tokenizer = CharTokenizer()
    data = make_batch(rows, tokenizer)
    with pytest.raises(ErrorRateExceeded):  # the reward loop: out of asyncio.gather, past any `except Exception`
        reward_loop_scores(data, "compute_score_async", max_error_share=0.25, error_window=8)
    manager = NaiveRewardManager(tokenizer=tokenizer, num_examine=0,
                                 compute_score=reward_fn("compute_score", max_error_share=0.25, error_window=8))
    with pytest.raises(ErrorRateExceeded):  # the legacy managers
        manager(data, return_dict=True)


def test_reward_kwargs_from_hydra_dotlist_overrides():
    """`+reward.custom_reward_function.reward_kwargs.verifier_options.gsm8k.mode=strict` on verl's command line."""
    config = OmegaConf.merge(
        OmegaConf.create({"reward": {"custom_reward_function": {"path": "pkg://referee.rewards.trainers.verl", "name": "compute_score"}}}),
        OmegaConf.from_dotlist(["reward.custom_reward_function.reward_kwargs.verifier_options.gsm8k.mode=strict",
                                "reward.custom_reward_function.reward_kwargs.fallback=-1"]))
    fn = get_custom_reward_fn(config)
    assert fn(data_source="openai/gsm8k", solution_str="The answer is 18.", ground_truth="18", extra_info={})["referee_no_answer"] == 1.0
    assert fn(data_source="openai/gsm8k", solution_str="#### 18", ground_truth="?", extra_info={})["score"] == -1.0


@pytest.mark.parametrize("manager", ["dapo", "rate_limited"])
def test_the_reward_loops_other_managers_take_compute_score(manager):
    tokenizer = CharTokenizer()
    data = make_batch(ROWS, tokenizer)
    _, rm_scores, columns = reward_loop_scores(data, "compute_score", manager=manager, fallback=-1.0)
    check_rewards(rm_scores, columns, ROWS, data)


def test_main_eval_on_ray_gets_floats_and_referees_stop_through_ray():
    """verl.trainer.main_eval.process_item (a Ray task) with `+reward.custom_reward_function.*`: np.mean of
    compute_score_float's floats; compute_score's dicts cannot be added; a stop arrives as a RayTaskError."""
    ray = pytest.importorskip("ray")
    from verl.trainer.main_eval import process_item

    from referee.rewards.trainers.routing import UnknownDataSource, referee_stop

    def config(name):
        return OmegaConf.create({"reward": {"custom_reward_function": {"path": "pkg://referee.rewards.trainers.verl", "name": name}}})

    ray.init(num_cpus=1, include_dashboard=False, ignore_reinit_error=True)
    try:
        source, score = ray.get(process_item.remote(config("compute_score_float"), "openai/gsm8k", ["#### 18", "#### 17"],
                                                    {"ground_truth": "18"}))
        assert (source, float(score)) == ("openai/gsm8k", 0.5)
        with pytest.raises(Exception, match="unsupported operand"):
            ray.get(process_item.remote(config("compute_score"), "openai/gsm8k", ["#### 18", "#### 17"], {"ground_truth": "18"}))
        with pytest.raises(Exception) as caught:  # an Exception: `except Exception` in a caller would swallow it
            ray.get(process_item.remote(config("compute_score_float"), "openai/gms8k", ["#### 18"], {"ground_truth": "18"}))
        assert isinstance(caught.value, ray.exceptions.RayTaskError)
        assert isinstance(referee_stop(caught.value), UnknownDataSource)
    finally:
        ray.shutdown()
