"""The trainer adapters' old paths (``referee.rewards.verl``, ...) work for one release after their
move to ``referee.rewards.trainers``: imported as modules (the very new module, with a
``DeprecationWarning`` naming the new path) and loaded as files the way verl and OpenRLHF load a
``.py`` path (``spec_from_file_location`` under a name of their own, where a relative import fails)."""

import asyncio
import subprocess
import importlib
import importlib.util
import sys
import warnings
from pathlib import Path
from types import SimpleNamespace

import pytest

from referee.rewards.trainers.old_paths import MOVED

REWARDS = Path(__file__).resolve().parents[2] / "rewards"

PROMPT = "<|im_start|>user\nWhat is 9 * 2?<|im_end|>\n<|im_start|>assistant\n"


def verl_entry_points(module):
    """Each of verl's entry points, called as verl calls it."""
    kwargs = {"data_source": "openai/gsm8k", "solution_str": "9 * 2 = 18\n#### 18", "ground_truth": "18", "extra_info": {}}
    batch = module.compute_score_batch(data_sources=["openai/gsm8k"], solution_strs=["#### 17"], ground_truths=["18"],
                                       extra_infos=[{}])
    return [module.compute_score(**kwargs)["score"], module.compute_score_float(**kwargs),
            asyncio.run(module.compute_score_async(**kwargs))["score"], batch[0]["score"]]


def openrlhf_entry_point(module):
    """OpenRLHF's SingleTurnAgentExecutor: one sample per ``reward_func`` call."""
    label = '{"data_source": "openai/gsm8k", "answer": "18"}'
    return [module.reward_func([PROMPT + "#### 18<|im_end|>"], [PROMPT], [label])["rewards"][0]]


# What each old path's users call through it, and what that gives.
ENTRY_POINTS = {
    "verl": (verl_entry_points, [1.0, 1.0, 1.0, 0.0]),
    "openrlhf": (openrlhf_entry_point, [1.0]),
    "slime": (lambda m: [asyncio.run(m.reward(SimpleNamespace(reward_key=None), SimpleNamespace(
        response="#### 18", label="18", metadata={"verifier": "gsm8k"})))], [1.0]),
    "prime_verifiers": (lambda m: [asyncio.run(m.score_completion("#### 18", "18", verifier="gsm8k")).score,
                                   m.rubric_functions("gsm8k")[1][0]], [1.0, 1.0]),
    "sandbox_fusion": (lambda m: [m.RUN_OPTIONS == importlib.import_module("referee.rewards.trainers.sandbox_fusion").RUN_OPTIONS,
                                  pytest.raises(m.RunCodeRequestError, m.handle_run_code, {"code": "print(1)", "run_timeout": 60},
                                                max_run_timeout=30) is not None], [True, True]),
    "adapters": (lambda m: [m.AdapterOptions().fallback, m.ErrorRateExceeded.__name__], [0.0, "ErrorRateExceeded"]),
    "routing": (lambda m: [m.verifier_for_source("openai/gsm8k"), m.referee_stop(ValueError()) is None], ["gsm8k", True]),
}


def test_every_moved_module_has_its_old_file_and_an_entry_point_here():
    assert sorted(MOVED) == sorted(ENTRY_POINTS)
    assert [name for name in MOVED if not (REWARDS / f"{name}.py").is_file()] == []


@pytest.mark.parametrize("old", sorted(MOVED))
def test_an_old_path_imports_as_the_new_module_with_a_deprecation_warning(old, monkeypatch):
    new = importlib.import_module(f"referee.rewards.trainers.{old}")
    monkeypatch.delitem(sys.modules, f"referee.rewards.{old}", raising=False)  # as in a fresh process
    with pytest.warns(DeprecationWarning, match=rf"referee\.rewards\.{old} has moved to referee\.rewards\.trainers\.{old};") as caught:
        __import__(f"referee.rewards.{old}")  # an import statement, as a user's
    module = sys.modules[f"referee.rewards.{old}"]
    assert module is new is getattr(importlib.import_module("referee.rewards"), old)
    assert caught[0].filename == __file__  # the warning points at the user's import, not at referee
    call, expected = ENTRY_POINTS[old]
    assert call(module) == expected


@pytest.mark.parametrize("old", sorted(MOVED))
def test_an_old_file_loads_by_its_path_as_trainers_load_a_reward_file(old):
    """verl's ``custom_reward_function.path`` (a file path before ``pkg://``) and OpenRLHF's
    ``reward_func`` path: ``spec_from_file_location`` under a name of the trainer's own."""
    spec = importlib.util.spec_from_file_location("custom_module", REWARDS / f"{old}.py")
    module = importlib.util.module_from_spec(spec)
    with pytest.warns(DeprecationWarning, match=rf"referee\.rewards\.trainers\.{old}"):
        spec.loader.exec_module(module)
    assert "custom_module" not in sys.modules or sys.modules["custom_module"] is not module
    call, expected = ENTRY_POINTS[old]
    assert call(module) == expected


@pytest.mark.parametrize("new", ["openrlhf", "prime_verifiers", "sandbox_fusion", "slime", "verl"])
def test_the_new_entry_files_load_by_path_too_and_the_package_warns_nothing(new):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        spec = importlib.util.spec_from_file_location("custom_module", REWARDS / "trainers" / f"{new}.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        call, expected = ENTRY_POINTS[new]
        assert call(module) == expected


def test_referee_itself_imports_no_old_path():
    """Only a user's import of an old path warns: referee's own modules use the new ones."""
    users = ["referee.rewards", *(f"referee.rewards.trainers.{name}" for name in MOVED), "referee.recipes.serve.judging",
             "referee.recipes.serve.client", "referee.recipes.commands.serve"]
    script = f"import {', '.join(users)}; import sys; print(sorted(m for m in sys.modules if m.startswith('referee.rewards.') and m.rpartition('.')[2] in {MOVED!r} and '.trainers.' not in m))"
    run = subprocess.run([sys.executable, "-W", "error::DeprecationWarning", "-c", script], capture_output=True, text=True, timeout=120)
    assert (run.returncode, run.stdout.strip()) == (0, "[]"), run.stderr
