"""PythonTool, the sandboxed interpreter TRL's environment_factory hands each rollout."""

from __future__ import annotations

import inspect
import os
import pickle
import uuid

import pytest
from transformers.utils import get_json_schema

from referee.rewards.tools import PythonTool
from referee.verifiers.code import CellLimits, resolve_isolation

try:
    resolve_isolation()
except ValueError:  # no level here holds untrusted code away from us: nothing runs in these tests
    pytest.skip("no isolation level here guards the caller", allow_module_level=True)

FAST = CellLimits(timeout=2.0, cpu_seconds=2.0, memory_mb=256, output_chars=100)


@pytest.fixture()
def tool():
    made = PythonTool(FAST, max_calls=4)
    yield made
    made._close()


def test_trl_sees_one_tool_with_a_schema_for_its_code():
    public = [name for name, _ in inspect.getmembers(PythonTool, predicate=inspect.isfunction) if not name.startswith("_")]
    assert public == ["python", "reset"]  # TRL offers every public method but reset and get_reward as a tool
    schema = get_json_schema(PythonTool(FAST).python)["function"]
    assert schema["name"] == "python"
    assert schema["parameters"] == {"type": "object", "required": ["code"],
                                    "properties": {"code": {"type": "string", "description": "The Python source to run."}}}


def test_a_rollout_keeps_its_variables_and_the_next_rollout_starts_clean(tool):
    tool.reset(prompt="p", answer="1")
    assert tool.python("import math\nx = math.factorial(20)") == "(no output)"
    assert tool.python("x % 1000003") == str(2432902008176640000 % 1000003)
    tool.reset(prompt="q", answer="2")
    assert tool.python("x").endswith("NameError: name 'x' is not defined")
    assert tool.python("'math' in dir()") == "False"
    assert [r.error for r in tool.results] == [True, False]  # results are this rollout's only


def test_whatever_a_cell_does_comes_back_as_text(tool):
    tool.reset()
    assert tool.python("1 / 0").splitlines()[-1] == "ZeroDivisionError: division by zero"
    assert tool.python("print('a' * 500)").endswith("[output truncated: 401 more characters]")
    assert tool.python(12345) == "the code must be a str, got int"  # arguments come from the model's JSON
    assert tool.python("print('three')") == "three"  # a call that was not code did not count
    assert tool.python("'four'") == "'four'"
    assert "budget of 4 calls is spent" in tool.python("print('too many')")
    assert [r.ok for r in tool.results] == [False, True, False, True, True, False]


def test_a_cell_past_its_limits_is_stopped_and_the_rollout_goes_on(tool):
    tool.reset()
    assert "did not finish within 2 s" in tool.python("while True: pass")
    assert tool.python("2 + 2") == "[the session was restarted: variables from earlier cells are gone]\n4"


def test_a_cell_cannot_read_the_row_or_the_trainers_environment(tool, monkeypatch):
    secret = uuid.uuid4().hex
    monkeypatch.setenv("REFEREE_GOLD", secret)  # set before the sandbox starts: a leak would show it
    fresh = PythonTool(FAST)
    fresh.reset(prompt="What is 6 * 7?", answer=secret)
    seen = fresh.python(
        "import glob, os\n"
        "found = [str(os.environ)]\n"
        "for path in glob.glob('/proc/*/environ') + glob.glob('/proc/*/cmdline'):\n"
        "    try:\n"
        "        found.append(open(path, 'rb').read().decode(errors='replace'))\n"
        "    except OSError:\n"
        "        pass\n"
        f"print({secret[:8]!r} + {secret[8:]!r} in ''.join(found), len(found) > 1)")
    fresh._close()
    assert seen == "False True"


def test_the_factory_and_the_tool_survive_pickling():
    make = pickle.loads(pickle.dumps(PythonTool.factory(FAST, max_calls=2)))
    tool = make()
    tool.reset()
    tool.python("y = 5")
    copy = pickle.loads(pickle.dumps(tool))  # a copy starts its own process: the variables stay behind
    assert copy.python("y").endswith("NameError: name 'y' is not defined")
    assert copy._settings == tool._settings
    tool._close()
    copy._close()


def test_a_weak_level_must_be_named():
    if os.geteuid() != 0:
        pytest.skip("as a non-root user 'basic' may be the only level")
    with pytest.raises(ValueError):
        PythonTool(isolation="basic")


def _rollouts_in_a_worker_process(factory, codes):
    """What TRL's AsyncGRPOTrainer does with an environment_factory: a spawned rollout process unpickles
    the factory, makes one environment per rollout and runs their tool calls on a thread pool."""
    from concurrent.futures import ThreadPoolExecutor

    tools = [factory() for _ in codes]
    for tool in tools:
        tool.reset()
    with ThreadPoolExecutor(max_workers=len(tools)) as pool:
        first = list(pool.map(lambda pair: pair[0].python(pair[1]), zip(tools, codes)))
    with ThreadPoolExecutor(max_workers=len(tools)) as pool:  # a new pool: the first one's threads are gone
        second = list(pool.map(lambda tool: tool.python("x * 2"), tools))
    for tool in tools:
        tool._close()
    return first, second


def test_the_factory_works_in_a_spawned_rollout_process_from_pool_threads():
    import multiprocessing

    with multiprocessing.get_context("spawn").Pool(1) as pool:
        first, second = pool.apply(_rollouts_in_a_worker_process,
                                   (PythonTool.factory(FAST), [f"x = {n}\nprint(x)" for n in range(4)]))
    assert first == ["0", "1", "2", "3"] and second == ["0", "2", "4", "6"]
