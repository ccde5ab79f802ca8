"""verl's own reward managers call referee on a fabricated DataProto (``make test-integrations``).

These run only where verl is installed (its own virtualenv, .venv-integrations: verl pins a
transformers release TRL does not accept); in the main suite they are skipped. The reward
function is loaded the way verl's trainer loads it (``get_custom_reward_fn`` on a
``custom_reward_function`` config with ``pkg://referee.rewards.trainers.verl`` and ``reward_kwargs``);
the documented command lines of docs/integrations.md run in bash as written (``conftest.py``) and
their Hydra overrides are composed onto verl's own ``ppo_trainer`` and ``evaluation`` configs.
"""

import asyncio
import importlib.util
from pathlib import Path

import pytest

verl = pytest.importorskip("verl")
np = pytest.importorskip("numpy")
torch = pytest.importorskip("torch")
from omegaconf import OmegaConf  # noqa: E402
from verl import DataProto  # noqa: E402
from verl.trainer.ppo.reward import get_custom_reward_fn  # noqa: E402

from referee.rewards.trainers.adapters import METRIC_KEYS, ErrorRateExceeded  # noqa: E402

PAD = 0
ROOT = Path(__file__).resolve().parents[2]


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


def reward_loop_config(name, manager="naive", **reward_kwargs):
    return OmegaConf.create({
        "reward": {"reward_manager": {"source": "register", "name": manager}, "num_workers": 1,
                   "custom_reward_function": {"path": "pkg://referee.rewards.trainers.verl", "name": name,
                                              "reward_kwargs": reward_kwargs}},
        "actor_rollout_ref": {"rollout": {"multi_turn": {}}},
    })


def reward_loop_scores(data, name, manager="naive", config=None, **reward_kwargs):
    """What verl's RewardLoopWorker and RewardLoopManager do with a batch (without Ray actors):
    the registered manager from load_reward_manager (``config``: verl's own, composed; else the
    reward section alone), one run_single task per sample, then rm_scores and the
    reward_extra_info columns, whose keys come from sample 0."""
    from verl.trainer.ppo.reward import load_reward_manager

    config = reward_loop_config(name, manager, **reward_kwargs) if config is None else config
    asyncio.set_event_loop(asyncio.new_event_loop())  # verl's prime manager closes the loop it set
    manager = load_reward_manager(config, CharTokenizer())

    async def compute_score_batch():
        tasks = [asyncio.create_task(manager.run_single(data[i:i + 1])) for i in range(len(data))]
        return await asyncio.gather(*tasks)

    try:
        outputs = manager.loop.run_until_complete(compute_score_batch())
    except BaseException:  # the other samples' tasks are cancelled, not left pending on a loop that is dropped
        pending = asyncio.all_tasks(manager.loop)
        for task in pending:
            task.cancel()
        manager.loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
        raise
    rm_scores = type(manager).assemble_rm_scores(data, [item["reward_score"] for item in outputs])
    infos = [output.get("reward_extra_info", {}) for output in outputs]
    columns = {key: np.array([info[key] for info in infos]) for key in infos[0]}  # KeyError if a key goes missing
    return manager, rm_scores, columns


def verl_config(overrides, name="ppo_trainer"):
    """verl's own Hydra config ``name`` with command-line ``overrides``, composed as its launcher composes it."""
    from hydra import compose, initialize_config_dir

    with initialize_config_dir(config_dir=str(Path(verl.__file__).parent / "trainer" / "config"), version_base=None):
        return compose(config_name=name, overrides=list(overrides))


def _load(path):
    """A sibling test module's helpers (``--import-mode=importlib`` puts no test folder on ``sys.path``)."""
    spec = importlib.util.spec_from_file_location(f"referee_integrations_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def ray_cluster():
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, include_dashboard=False, ignore_reinit_error=True)
    yield ray
    ray.shutdown()


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


def test_main_eval_on_ray_gets_floats_and_referees_stop_through_ray(ray_cluster):
    """verl.trainer.main_eval.process_item (a Ray task) with the documented `+reward.custom_reward_function.*`
    composed onto verl's `evaluation` config: np.mean of compute_score_float's floats; compute_score's dicts
    cannot be added; a stop arrives as a RayTaskError."""
    ray = ray_cluster
    from verl.trainer.main_eval import process_item

    from referee.rewards.trainers.routing import UnknownDataSource, referee_stop

    documented = "+reward.custom_reward_function.path=pkg://referee.rewards.trainers.verl +reward.custom_reward_function.name=compute_score_float"
    assert documented in (ROOT / "docs" / "integrations.md").read_text(encoding="utf-8")

    def config(name):
        return verl_config(documented.replace("compute_score_float", name).split(), name="evaluation")

    source, score = ray.get(process_item.remote(config("compute_score_float"), "openai/gsm8k", ["#### 18", "#### 17"],
                                                {"ground_truth": "18"}))
    assert (source, float(score)) == ("openai/gsm8k", 0.5)
    with pytest.raises(Exception, match="unsupported operand"):
        ray.get(process_item.remote(config("compute_score"), "openai/gsm8k", ["#### 18", "#### 17"], {"ground_truth": "18"}))
    with pytest.raises(Exception) as caught:  # an Exception: `except Exception` in a caller would swallow it
        ray.get(process_item.remote(config("compute_score_float"), "openai/gms8k", ["#### 18"], {"ground_truth": "18"}))
    assert isinstance(caught.value, ray.exceptions.RayTaskError)
    assert isinstance(referee_stop(caught.value), UnknownDataSource)


def test_the_remote_manager_scores_in_verls_ray_workers(ray_cluster):
    """verl 0.9.1's `remote` reward-loop manager: compute_score (sync only: it refuses an async one) runs in its
    RewardComputeWorker actors, called by keyword with num_turns and rollout_reward_scores added to extra_info;
    referee's stop comes back from the actor as a RayTaskError holding it."""
    from referee.rewards.trainers.routing import referee_stop

    tokenizer = CharTokenizer()
    data = make_batch(ROWS, tokenizer)
    manager, rm_scores, columns = reward_loop_scores(data, "compute_score", manager="remote", fallback=-1.0)
    assert type(manager).__name__ == "RemoteRewardManager"
    check_rewards(rm_scores, columns, ROWS, data)
    with pytest.raises(AssertionError, match="Async reward score is not supported"):
        reward_loop_scores(data, "compute_score_async", manager="remote")
    broken = make_batch([("openai/gsm8k", "#### 18", "broken gold", {}, 0.0, "referee_error")] * 8, tokenizer)
    with pytest.raises(Exception) as caught:
        reward_loop_scores(broken, "compute_score", manager="remote", max_error_share=0.25, error_window=8)
    assert isinstance(caught.value, ray_cluster.exceptions.RayTaskError)
    assert isinstance(referee_stop(caught.value), ErrorRateExceeded)


# The documented reward configuration (docs/integrations.md, "verl"), with its fallback of 0.0.
DOC_ROWS = [row if row[5] != "referee_error" else (*row[:4], 0.0, row[5]) for row in ROWS]


def test_the_documented_command_line_through_verls_own_config(documented, tmp_path):
    [launch] = documented.run("reward.custom_reward_function.name=compute_score_async", tmp_path)
    assert launch.program == "verl.trainer.main_ppo"
    overrides = [arg for arg in launch.argv if arg != "..."]
    config = verl_config(overrides)  # a key verl does not have would fail here, as on the command line
    assert config.reward.custom_reward_function.reward_kwargs.verifier_options.math.timeout == 5
    data = make_batch(DOC_ROWS, CharTokenizer())
    manager, rm_scores, columns = reward_loop_scores(data, None, config=config)  # verl's default manager: naive
    assert type(manager).__name__ == "NaiveRewardManager" and manager.is_async_reward_score
    check_rewards(rm_scores, columns, DOC_ROWS, data)
    # verl 0.6's top-level keys compose too, and are ignored: the documented warning
    old_style = [arg.replace("reward.custom_reward_function", "custom_reward_function") for arg in overrides]
    assert get_custom_reward_fn(verl_config(old_style)) is None


def test_verls_sandbox_fusion_client_at_referee_serve(documented, tmp_path):
    """No custom reward function and `reward.sandbox_fusion.url` at `referee serve`'s /run_code: verl's own
    default_compute_score posts each test of a `codecontests` row with its Sandbox Fusion client (the token in
    the URL, as documented) and compares the output itself."""
    pytest.importorskip("fastapi", reason="the serve extra")
    serve_helpers = _load(ROOT / "tests" / "recipes" / "test_serve.py")
    serve, launch = documented.run("reward.sandbox_fusion.url=", tmp_path)
    assert serve.program == "referee" and launch.program == "verl.trainer.main_ppo"
    token = serve.env["REFEREE_SERVE_TOKEN"]
    at = serve.argv.index("--port")  # 5000 in the docs: a free port here
    process, url = serve_helpers.start_server(*serve.argv[1:at], *serve.argv[at + 2:], env={"REFEREE_SERVE_TOKEN": token})
    try:
        port = url.rsplit(":", 1)[1]
        overrides = [arg.replace("HOST:5000", f"127.0.0.1:{port}") for arg in launch.argv if arg != "..."]
        config = verl_config(overrides)
        assert config.reward.sandbox_fusion.url == f"http://127.0.0.1:{port}/run_code?token={token}"
        tests = '{"inputs": ["1 2\\n", "5 7\\n"], "outputs": ["3\\n", "12\\n"]}'
        add = "```python\na, b = map(int, input().split())\nprint(a + b)\n```"
        rows = [("codecontests", add, tests, {}, 1.0, None),
                ("codecontests", add.replace("a + b", "a * b"), tests, {}, 0.0, None),
                ("codecontests", add.replace("a + b", "3 if a == 1 else a * b"), tests, {}, 0.5, None)]
        data = make_batch(rows, CharTokenizer(), response_len=80)
        manager, rm_scores, _ = reward_loop_scores(data, None, config=config)
        prompt_len = data.batch["prompts"].shape[-1]
        lengths = data.batch["attention_mask"][:, prompt_len:].sum(dim=-1)
        assert [rm_scores[i, lengths[i] - 1].item() for i in range(len(rows))] == [1.0, 0.0, 0.5]
        status, health = serve_helpers.call(f"{url}/health")
        assert status == 200 and health["status"] == "ok"
        assert serve_helpers.call(f"{url}/run_code", {"code": "print(1)", "language": "python"})[0] == 401  # the token holds
    finally:
        serve_helpers.stop(process)
