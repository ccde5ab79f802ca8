"""OpenRLHF 0.11.2's own reward code calling referee (``make test-integrations``).

What runs is OpenRLHF's: ``openrlhf.utils.agent.SingleTurnAgentExecutor`` (what each rollout actor,
``RolloutRayActor``, runs per prompt: it loads ``reward_func`` from the ``.py`` file given as
``--reward.remote_url`` or posts to the URL with its own aiohttp client, catches any ``Exception``),
then ``SamplesGenerator._process_response_into_experience`` and ``make_experience_batch`` (the
rewards, scores and ``extra_logs`` as tensors). The launcher's arguments come from the documented
commands in docs/integrations.md, run in bash as written (see ``conftest.py``).

What does not: vLLM. ``openrlhf.trainer.ray.vllm_engine`` and ``samples_generator`` import vLLM
and Ray at module level, so they are not imported: the executor is imported from its own module
(``openrlhf.utils.agent``, which needs torch, transformers, sympy, pylatexenc and aiohttp only),
``_process_response_into_experience`` is compiled from OpenRLHF's installed source file on its own
(it uses torch and ``Experience``, not vLLM), and the engine that answers ``generate`` is a scripted
one returning fixed token ids (the model's part). The tokenizer is a transformers tokenizer
(OpenRLHF's pin, 5.15.0) with Qwen's chat special tokens, so queries are decoded with them as in a run.
"""

import ast
import asyncio
import importlib.util
import json
from pathlib import Path
from types import SimpleNamespace

import pytest

pytest.importorskip("openrlhf")
torch = pytest.importorskip("torch")
pytest.importorskip("fastapi", reason="the serve extra")
from openrlhf.trainer.ppo_utils.experience import Experience, make_experience_batch  # noqa: E402
from openrlhf.utils.agent import SingleTurnAgentExecutor  # noqa: E402

from referee.recipes.common.tiny_model import TOOL_CHARSET, build_char_tokenizer  # noqa: E402
from referee.rewards.trainers.adapters import ErrorRateExceeded  # noqa: E402
from referee.rewards.trainers.routing import RefereeStop, UnknownDataSource  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def _load(path: Path):
    """A sibling test module's helpers (``--import-mode=importlib`` puts no test folder on ``sys.path``)."""
    spec = importlib.util.spec_from_file_location(f"referee_integrations_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


SERVE = _load(ROOT / "tests" / "recipes" / "test_serve.py")  # start_server, call, stop: referee serve as a subprocess

TOKENIZER = build_char_tokenizer(TOOL_CHARSET)
TOKENIZER.add_special_tokens({"additional_special_tokens": ["<|im_start|>", "<|im_end|>", "<|endoftext|>"]})


def prompt(question):
    """The prompt as OpenRLHF's dataset leaves it: the chat template applied (Qwen's)."""
    return f"<|im_start|>user\n{question}<|im_end|>\n<|im_start|>assistant\n"


class ScriptedEngine:
    """vLLM's place in ``RolloutRayActor``: ``generate`` answers each prompt with the response scripted for it,
    ending in the end-of-turn token as a chat model's does (``token_ids`` keep it; OpenRLHF decodes them)."""

    def __init__(self, responses):
        self.responses = responses

    async def generate(self, prompt_token_ids, sampling_params, multi_modal_data=None):
        text = self.responses[TOKENIZER.decode(prompt_token_ids, skip_special_tokens=False)]
        ids = TOKENIZER(text=text + "<|im_end|>", add_special_tokens=False)["input_ids"]
        return SimpleNamespace(outputs=[SimpleNamespace(token_ids=ids, text=text, finish_reason="stop", logprobs=None)])


def engine_for(rows):
    responses = {prompt(question): response for question, response, _ in rows}
    assert len(responses) == len(rows), "one question per row: the engine answers by prompt"
    return ScriptedEngine(responses)


def process_response_into_experience():
    """``SamplesGenerator._process_response_into_experience`` from OpenRLHF's installed source (its module
    imports vLLM at the top, so the method is compiled alone, with the two names it uses)."""
    path = Path(importlib.util.find_spec("openrlhf").submodule_search_locations[0]) / "trainer" / "ppo_utils" / "samples_generator.py"
    tree = ast.parse(path.read_text(encoding="utf-8"))
    generator = next(node for node in tree.body if isinstance(node, ast.ClassDef) and node.name == "SamplesGenerator")
    method = next(node for node in generator.body if isinstance(node, ast.FunctionDef)
                  and node.name == "_process_response_into_experience")
    namespace = {"torch": torch, "Experience": Experience}
    exec(compile(ast.Module(body=[method], type_ignores=[]), str(path), "exec"), namespace)
    return namespace[method.name]


def rollouts(remote_url, rows):
    """What the rollout actor does for a batch of prompts: one ``execute`` per prompt, all at once, then the
    samples generator's Experience for each and the batch. ``rows``: (question, response, label)."""
    executor = SingleTurnAgentExecutor(remote_url)
    engine = engine_for(rows)
    params = SimpleNamespace(max_tokens=256, logprobs=None)  # vLLM's SamplingParams: what execute reads

    async def execute_all():
        return await asyncio.gather(*(executor.execute(prompt(question), label, params, 1024, TOKENIZER, engine)
                                      for question, _, label in rows))

    outputs = asyncio.run(execute_all())
    to_experience = process_response_into_experience()
    return outputs, [to_experience(None, output, max_len=1024) for output in outputs]


CODE_LABEL = json.dumps({"verifier": "code", "tests": {"fn_name": "double", "inputs": [[9]], "outputs": [18]}})
# (question, response, label, reward, extra_logs key that must be 1)
GOOD_ROWS = [
    ("What is 9 * 2?", "9 * 2 = 18, so the answer is $\\boxed{18}$.", "18", 1.0, "referee_accuracy"),  # plain: math
    ("Nine times two? Answer as #### N.", "9 * 2 = 17\n#### 17", '{"data_source": "openai/gsm8k", "answer": "18"}', 0.0, None),
    ("Write double(x) in Python.", "```python\ndef double(x):\n    return 2 * x\n```", CODE_LABEL, 1.0, "referee_accuracy"),
    # the worked answer is in the prompt, never judged: the response says nothing
    ("Worked example: 9 * 2 = 18\n#### 18\nNow: what is 9 * 2?", "I am not sure.", '{"verifier": "gsm8k", "answer": "18"}',
     0.0, "referee_no_answer"),
]
BROKEN_GOLD = ("What is 9 * 3?", "#### 27", '{"verifier": "gsm8k", "answer": "n/a"}', 0.0, "referee_error")
TYPO = ("How much is 9 * 2?", "#### 18", '{"data_source": "openai/gms8k", "answer": "18"}')  # an unknown data_source
# An error the verifier cannot decide from the label alone (a sentence gold against another answer): for the
# server it is not the label's fault (an empty completion would not fail), so it counts against the breaker.
UNJUDGED = ("What colour is the ball?", "The ball is $\\boxed{blue}$.", '{"verifier": "math", "answer": "the ball is red and the cube is green"}')


def check_good_rows(outputs, experiences, rows):
    for output, experience, (question, response, label, reward, flag) in zip(outputs, experiences, rows):
        assert output["reward"] == [reward] and output["scores"] == [reward], (question, output)
        if flag is not None:
            assert output["extra_logs"][flag] == 1.0, (question, output["extra_logs"])
        assert experience.rewards.flatten().tolist() == [reward] and experience.info["referee_error"].shape == (1,)
    batch = make_experience_batch(experiences)
    assert batch.rewards.flatten().tolist() == [row[3] for row in rows]
    assert set(batch.info) >= {"reward", "score", "referee_accuracy", "referee_error", "referee_timeout", "referee_no_answer"}


def documented_reward_func_file(documented, tmp_path):
    """The documented command (a reward function file): its REFEREE_OPTIONS and --reward.remote_url, from bash."""
    [train] = documented.run("import referee.rewards.trainers.openrlhf as m", tmp_path)
    assert train.program == "openrlhf.cli.train_ppo_ray" and train.option("--data.label_key") == "answer"
    return train.option("--reward.remote_url"), train.env


def test_the_documented_reward_func_file_in_openrlhfs_executor(documented, tmp_path, monkeypatch):
    path, env = documented_reward_func_file(documented, tmp_path)
    import referee.rewards.trainers.openrlhf as module

    assert Path(path).samefile(module.__file__)  # `python -c 'import ... as m; print(m.__file__)'`, as documented
    monkeypatch.setenv("REFEREE_OPTIONS", env["REFEREE_OPTIONS"])  # {"default_verifier": "math"}, as documented
    rows = [*GOOD_ROWS, BROKEN_GOLD]
    outputs, experiences = rollouts(path, [row[:3] for row in rows])
    check_good_rows(outputs, experiences, rows)  # the broken gold: the fallback, flagged referee_error
    # an unknown data_source stops the run at the first sample: past the executor's `except Exception`
    with pytest.raises(UnknownDataSource, match="did you mean 'openai/gsm8k'"):
        rollouts(path, [GOOD_ROWS[0][:3], TYPO])


def test_an_outage_stops_openrlhfs_executor(documented, tmp_path, monkeypatch):
    path, _ = documented_reward_func_file(documented, tmp_path)
    monkeypatch.setenv("REFEREE_OPTIONS", json.dumps({"default_verifier": "math", "max_error_share": 0.0, "error_window": 4}))
    with pytest.raises(ErrorRateExceeded, match="referee errors"):  # not a reward left out, logged at info level
        rollouts(path, [BROKEN_GOLD[:3]])


@pytest.fixture(scope="module")
def documented_server(documented, tmp_path_factory):
    """``referee serve`` and the trainer's side as the documented block has them (the token from openssl,
    the options as written; the port a free one instead of 5000, HOST this machine)."""
    serve, train = documented.run("import referee.recipes.serve.client as m", tmp_path_factory.mktemp("doc"))
    assert serve.program == "referee" and serve.argv[:2] == ["serve", "--host"] and train.program == "openrlhf.cli.train_ppo_ray"
    token = serve.env["REFEREE_SERVE_TOKEN"]
    assert len(token) == 64 and train.env["REFEREE_SERVE_TOKEN"] == token
    at = serve.argv.index("--port")
    process, url = SERVE.start_server(*serve.argv[1:at], *serve.argv[at + 2:], env={"REFEREE_SERVE_TOKEN": token})
    port = url.rsplit(":", 1)[1]
    client_env = {**train.env, "REFEREE_SERVE_URL": train.env["REFEREE_SERVE_URL"].replace("HOST:5000", f"127.0.0.1:{port}")}
    yield SimpleNamespace(url=url, token=token, client=train.option("--reward.remote_url"), env=client_env)
    SERVE.stop(process)


def test_referee_serve_through_the_documented_client_file(documented_server, monkeypatch):
    for key, value in documented_server.env.items():
        monkeypatch.setenv(key, value)  # REFEREE_SERVE_URL, REFEREE_SERVE_TOKEN on the trainer's nodes
    outputs, experiences = rollouts(documented_server.client, [row[:3] for row in GOOD_ROWS])
    check_good_rows(outputs, experiences, GOOD_ROWS)
    with pytest.raises(RefereeStop, match=r"HTTP 400\): label 0 \(.*did you mean 'openai/gsm8k'") as caught:
        rollouts(documented_server.client, [TYPO])  # the server's sentence, out of the executor
    assert type(caught.value).__name__ == "RewardServerRefused"
    with pytest.raises(RefereeStop, match=r"HTTP 503\): 1 of the 1 samples of this request were referee errors") as caught:
        rollouts(documented_server.client, [UNJUDGED])
    assert "is a sentence" in str(caught.value) and type(caught.value).__name__ == "RewardServerRefused"


def test_openrlhfs_own_http_client_at_referee_serve(documented_server):
    """``--reward.remote_url http://HOST:5000/get_reward?token=...``: OpenRLHF's aiohttp client posts the rows.
    A refusal is retried five times and the reward left ``None``, the reason only in the server's log and
    /health: the limitation docs/integrations.md states, for which the client file exists."""
    url = f"{documented_server.url}/get_reward?token={documented_server.token}"
    outputs, experiences = rollouts(url, [row[:3] for row in GOOD_ROWS])
    check_good_rows(outputs, experiences, GOOD_ROWS)
    outputs, experiences = rollouts(url, [TYPO])
    assert outputs[0]["reward"] is None and experiences[0].rewards is None
    status, health = SERVE.call(f"{documented_server.url}/health")
    assert status == 200 and "did you mean 'openai/gsm8k'" in health["refused"]["last"]
