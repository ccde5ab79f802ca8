"""Tool calls through TRL's own GRPOTrainer loop: PythonTool cells parsed, run in the sandbox, masked out of the loss.

Generation is scripted (the tiny model cannot write tool calls); everything after it is TRL's and
referee's code as users run it: the Qwen3 chat template and TRL's response parser, TRL's tool loop
(serial in ``GRPOTrainer``, run ahead concurrently in ``RefereeGRPOTrainer``), the tool mask and the loss.
"""

from __future__ import annotations

import json
import re
import string

import pytest
import torch
from datasets import Dataset
from trl import GRPOTrainer

from referee.recipes.common.tiny_model import build_char_tokenizer, build_tiny_model
from referee.recipes.train.config import build_grpo_config
from referee.recipes.train.tool_calls import python_calls
from referee.recipes.train.trainer import RefereeGRPOTrainer
from referee.rewards import completion_text, get_reward
from referee.rewards.tools import PythonTool
from referee.verifiers.code import CellLimits

pytest.importorskip("trl.chat_template_utils")
from trl.chat_template_utils import qwen3_chat_template  # noqa: E402


def qwen_tool_tokenizer():
    """A character tokenizer with Qwen3's chat template and its tool-call tokens, so TRL parses tool calls."""
    tokenizer = build_char_tokenizer("".join(c for c in string.printable if c not in "\r\x0b\x0c"))
    tokenizer.add_special_tokens({"eos_token": "<|im_end|>", "pad_token": "<|endoftext|>",
                                  "additional_special_tokens": ["<|im_start|>"]})
    tokenizer.add_tokens(["<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>", "<think>", "</think>"])
    tokenizer.chat_template = qwen3_chat_template
    return tokenizer


def call(code: str) -> str:
    return f"<tool_call>\n{json.dumps({'name': 'python', 'arguments': {'code': code}})}\n</tool_call><|im_end|>"


def scripted_reply(history: str) -> str:
    """Two cells (the second reads the first's variable), then an answer that quotes the last tool output,
    unless the user asked to leave the answer in the tool output."""
    a, b = re.findall(r"Multiply (\d+) by (\d+)", history)[-1]
    responses = re.findall(r"<tool_response>\n(.*?)\n</tool_response>", history, re.S)
    if not responses:
        if "Time it" in history:  # the cell's start and end, to see whether rollouts' cells overlap
            return call(f"import time\nstarted = time.time()\ntime.sleep(0.3)\nx = {a} * {b}\n"
                        "print(started, time.time())")
        return call(f"x = {a} * {b}\nprint('x is set')")
    if len(responses) == 1:
        return call("print(x)")
    if "Only print it" in history:
        return "I printed it above.<|im_end|>"
    return f"The answer is \\boxed{{{responses[-1].strip()}}}.<|im_end|>"


@pytest.fixture
def scripted(monkeypatch):
    """Replace the model's generation (below referee's hook) by :func:`scripted_reply`."""
    replies = []

    def generate(self, prompt_ids, images, multimodal_fields, num_generations, has_tool_images=False):
        out = []
        for ids in prompt_ids:
            reply = scripted_reply(self.processing_class.decode(ids))
            replies.append(reply)
            out.append(self.processing_class.encode(reply, add_special_tokens=False))
        return out, None

    monkeypatch.setattr(GRPOTrainer, "_generate_single_turn", generate)
    return replies


def run_trainer(trainer_class, tmp_path, prompts, *, reward=None):
    """A trainer with :class:`PythonTool` environments; ``seen`` records what the reward was given and gave."""
    tokenizer = qwen_tool_tokenizer()
    args = build_grpo_config(str(tmp_path), profile="cpu", per_device_train_batch_size=4, num_generations=2,
                             max_completion_length=400, max_steps=1, report_to="none", save_strategy="no", seed=0,
                             disable_tqdm=True)
    score = reward or (lambda completions, **kwargs: [float("\\boxed{" in (completion_text(c) or "")) for c in completions])
    seen = {"completions": [], "rewards": []}

    def recorded(completions, **kwargs):
        values = score(completions=completions, **kwargs)
        seen["completions"].extend(completions)
        seen["rewards"].extend(values)
        return values

    recorded.__name__ = getattr(score, "__name__", "boxed")
    dataset = Dataset.from_dict({"prompt": [[{"role": "user", "content": p}] for p in prompts],
                                 "answer": [str(eval("*".join(re.findall(r"\d+", p)))) for p in prompts]})
    trainer = trainer_class(
        model=build_tiny_model(tokenizer, hidden_size=32, num_layers=1, num_heads=2, num_kv_heads=1,
                               intermediate_size=64, max_positions=4096),
        reward_funcs=recorded, args=args, processing_class=tokenizer, train_dataset=dataset,
        environment_factory=PythonTool.factory(CellLimits(timeout=10.0)))
    return trainer, seen


PROMPTS = ["Multiply 1234 by 5678.", "Multiply 999 by 1001."]


def generated_batch(trainer):
    """One batch of generated, scored completions (the path a training step takes)."""
    trainer.model.train()
    inputs = [row for row in trainer.train_dataset for _ in range(trainer.num_generations)]
    return trainer._generate_and_score_completions(inputs)


def test_python_calls_are_read_only_from_python_tool_calls():
    message = {"role": "assistant", "tool_calls": [
        {"type": "function", "function": {"name": "python", "arguments": {"code": "a = 1"}}},
        {"type": "function", "function": {"name": "python", "arguments": {"code": "a"}}}]}
    assert python_calls(message) == ["a = 1", "a"]
    other = {"type": "function", "function": {"name": "search", "arguments": {"query": "x"}}}
    assert python_calls({"role": "assistant", "tool_calls": [*message["tool_calls"], other]}) is None
    assert python_calls({"role": "assistant", "tool_calls": [
        {"type": "function", "function": {"name": "python", "arguments": {"code": "1", "timeout": 99}}}]}) is None
    assert python_calls({}) == [] and python_calls(None) == []


def test_referee_runs_a_turn_with_the_results_and_order_of_trls_serial_loop(tmp_path, scripted):
    serial, serial_seen = run_trainer(GRPOTrainer, tmp_path / "serial", PROMPTS)
    concurrent, concurrent_seen = run_trainer(RefereeGRPOTrainer, tmp_path / "referee", PROMPTS)
    batches = [generated_batch(trainer) for trainer in (serial, concurrent)]
    for name in ("completion_ids", "tool_mask", "completion_mask", "advantages"):
        assert torch.equal(batches[0][name], batches[1][name]), name
    assert serial_seen == concurrent_seen and concurrent_seen["rewards"] == [1.0] * 4
    # each rollout ran two cells, the second reading the first's variable: 1234 * 5678, 999 * 1001
    assert [[r.text for r in tool.results] for tool in concurrent.environments] == [
        ["x is set", "7006652"], ["x is set", "7006652"], ["x is set", "999999"], ["x is set", "999999"]]
    metrics = concurrent._metrics["train"]
    assert metrics["tools/calls"] == [2.0] and metrics["tools/error_share"] == [0.0]
    assert metrics["tools/timeouts"] == [0.0] and metrics["tools/truncated_share"] == [0.0]
    assert metrics["tools/seconds"][0] > 0


def test_referee_runs_the_rollouts_cells_side_by_side(tmp_path, scripted):
    """Behaviour, not speed: in TRL's loop one rollout's cell starts after the last one ended; in referee's they overlap."""
    spans = []
    for trainer_class in (GRPOTrainer, RefereeGRPOTrainer):
        trainer, _ = run_trainer(trainer_class, tmp_path / trainer_class.__name__, [p + " Time it." for p in PROMPTS])
        generated_batch(trainer)
        spans.append([tuple(map(float, tool.results[0].text.split())) for tool in trainer.environments])
    overlapping = [sum(a[0] < b[1] and b[0] < a[1] for i, a in enumerate(s) for b in s[i + 1:]) for s in spans]
    assert overlapping[0] == 0 and overlapping[1] > 0


def test_tool_tokens_never_reach_the_loss(tmp_path, scripted):
    trainer, _ = run_trainer(RefereeGRPOTrainer, tmp_path, PROMPTS)
    batch = generated_batch(trainer)
    tokenizer = trainer.processing_class
    for ids, mask in zip(batch["completion_ids"].tolist(), batch["tool_mask"].tolist()):
        masked = tokenizer.decode([i for i, m in zip(ids, mask) if m == 0])
        kept = tokenizer.decode([i for i, m in zip(ids, mask) if m == 1 and i != tokenizer.pad_token_id])
        assert "<tool_response>" in masked and "7006652" in masked or "999999" in masked
        assert "<tool_response>" not in kept and "<tool_call>" in kept and "\\boxed{" in kept
    batch["advantages"] = torch.ones_like(batch["advantages"])  # every kept token would carry a gradient
    captured = {}
    original = trainer._get_per_token_logps_and_entropies

    def capture(*args, **kwargs):
        logps, entropies, *rest = original(*args, **kwargs)
        logps.retain_grad()
        captured["logps"] = logps
        return (logps, entropies, *rest)

    trainer._get_per_token_logps_and_entropies = capture
    trainer.current_gradient_accumulation_steps = 1  # what Trainer's loop sets before compute_loss
    tool_tokens = batch["tool_mask"] == 0
    trainer.compute_loss(trainer.model, batch).backward()
    grad = captured["logps"].grad
    assert tool_tokens.any() and torch.all(grad[tool_tokens] == 0)
    assert torch.all(grad[(batch["tool_mask"] == 1) & (batch["completion_mask"] == 1)] != 0)


def test_an_answer_only_in_tool_output_earns_nothing(tmp_path, scripted):
    trainer, seen = run_trainer(RefereeGRPOTrainer, tmp_path, ["Multiply 1234 by 5678. Only print it."] * 2,
                                reward=get_reward("math_accuracy"))
    generated_batch(trainer)
    assert [tool.results[-1].text for tool in trainer.environments] == ["7006652"] * 4  # the tool printed the gold
    assert [m["role"] for m in seen["completions"][0]] == ["assistant", "tool", "assistant", "tool", "assistant"]
    assert seen["rewards"] == [0.0] * 4


def test_a_recipe_with_python_tool_gives_the_trainer_its_interpreters(tmp_path):
    from referee.recipes.common.tiny_model import build_tiny_model as tiny
    from referee.recipes.train.recipe import build_trainer, parse_recipe, write_recipe

    tokenizer = qwen_tool_tokenizer()
    tiny(tokenizer, hidden_size=32, num_layers=1, num_heads=2, num_kv_heads=1, intermediate_size=64,
         max_positions=4096).save_pretrained(tmp_path / "model")
    tokenizer.save_pretrained(tmp_path / "model")
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps({"problem": p, "solution": f"\\boxed{{{eval('*'.join(re.findall(r'[0-9]+', p)))}}}"})
                            + "\n" for p in PROMPTS), encoding="utf-8")
    path = write_recipe(tmp_path / "r.yaml", model_name_or_path=str(tmp_path / "model"), dataset_name=str(data),
                        dataset_format="math", output_dir=str(tmp_path / "out"), use_cpu=True, bf16=False,
                        use_vllm=False, activation_checkpointing=False, per_device_train_batch_size=4,
                        num_generations=2, max_completion_length=64, report_to="none", reward_funcs=["math_accuracy"],
                        python_tool={"timeout": 2, "max_calls": 3, "output_chars": 50}, max_tool_calling_iterations=2)
    trainer = build_trainer(parse_recipe(str(path)))
    tool = trainer.environment_factories[None]()
    assert isinstance(tool, PythonTool) and [t.__name__ for t in trainer.tools] == ["python"]
    assert (tool._session.limits.timeout, tool._session.max_calls, tool._session.limits.output_chars) == (2, 3, 50)
    assert trainer.max_tool_calling_iterations == 2
    tool._close()


@pytest.mark.parametrize("settings, message", [
    ('{"timout": 2}', "python_tool has no key 'timout'; did you mean 'timeout'?"),
    ('{"max_calls": 0}', "python_tool: max_calls=0 must be a whole number >= 1"),
    ('{"timeout": -1}', "python_tool: CellLimits(timeout=-1)"),
])
def test_bad_python_tool_settings_are_refused_in_one_line(settings, message, capsys):
    from referee.recipes.cli import main

    assert main(["train", "--dry-run", "tir_qwen2.5-1.5b_lora", "--python_tool", settings]) == 2
    assert message in capsys.readouterr().err
