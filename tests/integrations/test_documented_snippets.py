"""Every code block of docs/integrations.md is run as written by a named test, or is listed as exempt with why.

A block is found by a needle, a string only it contains; each test named for it must use that
needle (``documented.find`` / ``documented.run`` in it, or the block read from the page), so a
block that changes, appears or goes is caught here. This file needs no trainer: it runs in
``make test`` too.

How the blocks run: shell blocks in bash as written (``conftest.py``), the programs that start a
run or a server recorded instead (the trainers' launchers need GPUs and a cluster): their arguments
then go through the trainer's own code (verl's Hydra config and reward managers, OpenRLHF's
executor), and ``referee serve`` is started by the test with the recorded options (a free port for
5000). Python blocks are executed, then their objects are driven by the trainer's own code.
"""

import ast
from pathlib import Path

HERE = Path(__file__).resolve().parent
TESTS = HERE.parent

RUN_BY = {
    "reward.custom_reward_function.name=compute_score_async": [
        "integrations/test_verl.py::test_the_documented_command_line_through_verls_own_config"],
    "reward.sandbox_fusion.url=": [
        "integrations/test_verl.py::test_verls_sandbox_fusion_client_at_referee_serve"],
    "import referee.rewards.trainers.openrlhf as m": [
        "integrations/test_openrlhf.py::test_the_documented_reward_func_file_in_openrlhfs_executor",
        "integrations/test_openrlhf.py::test_an_outage_stops_openrlhfs_executor"],
    "import referee.recipes.serve.client as m": [
        "integrations/test_openrlhf.py::test_referee_serve_through_the_documented_client_file",
        "integrations/test_openrlhf.py::test_openrlhfs_own_http_client_at_referee_serve"],
    "rubric = vf.Rubric(funcs=funcs, weights=weights)": [
        "integrations/test_prime_verifiers_v0.py::test_the_documented_rubric_scores_rollouts_and_shows_referees_faults",
        "integrations/test_prime_verifiers_v0.py::test_rows_routed_by_info",
        "integrations/test_prime_verifiers_v0.py::test_an_outage_stops_the_rubric_instead_of_scoring_zeros"],
    "class MathTask(vf.Task[MathData]):": [
        "integrations/test_prime_verifiers_v1.py::test_the_documented_task_keeps_the_fault_signals_and_judges_each_rollout_once",
        "integrations/test_prime_verifiers_v1.py::test_an_outage_gets_past_verifiers_scoring_boundary"],
    'backend="ray"': ["verifiers/test_ray_host.py::test_the_documented_snippet_runs_as_written"],
}

EXEMPT = {
    "--custom-rm-path referee.rewards.trainers.slime.reward": (
        "slime is not on PyPI (THUDM/slime, installed from source on Megatron-LM and SGLang, GPUs only), so "
        "neither its launcher nor its rm_hub runs here; rewards/test_slime_adapter.py calls the three documented "
        "entry points as slime's async_rm and batched_async_rm call them (reproduced, not slime's own code)"),
}


def _load_conftest():
    """This folder's conftest.py as a module of its own (``code_blocks``, ``DOC``)."""
    import importlib.util
    import sys

    spec = importlib.util.spec_from_file_location("referee_integrations_conftest", HERE / "conftest.py")
    module = sys.modules[spec.name] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


CONFTEST = _load_conftest()


def test_every_block_is_run_by_a_test_or_exempt_with_a_reason():
    blocks = CONFTEST.code_blocks(CONFTEST.DOC.read_text(encoding="utf-8"))
    needles = [*RUN_BY, *EXEMPT]
    for language, code in blocks:
        claimed = [needle for needle in needles if needle in code]
        assert len(claimed) == 1, f"a {language} block of docs/integrations.md is claimed by {claimed} (one expected):\n{code}"
    for needle in needles:
        assert sum(needle in code for _, code in blocks) == 1, f"{needle!r} is in no block, or in several"
    assert all(len(reason) > 40 for reason in EXEMPT.values())


def _functions(path: Path) -> dict[str, ast.FunctionDef]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {node.name: node for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}


def _strings(node: ast.AST) -> set[str]:
    return {found.value for found in ast.walk(node) if isinstance(found, ast.Constant) and isinstance(found.value, str)}


def test_each_named_test_exists_and_reads_its_block():
    """The test (or a helper or fixture of its module that it calls) holds the needle that finds the block."""
    for needle, node_ids in RUN_BY.items():
        for node_id in node_ids:
            path, name = node_id.split("::")
            functions = _functions(TESTS / path)
            assert name in functions, f"{node_id} does not exist"
            test = functions[name]
            called = {call.func.id for call in ast.walk(test) if isinstance(call, ast.Call) and isinstance(call.func, ast.Name)}
            arguments = {arg.arg for arg in test.args.args}
            reached = [test, *(functions[helper] for helper in (called | arguments) & set(functions))]
            assert any(needle in string for node in reached for string in _strings(node)), \
                f"{node_id} does not read the block of {needle!r}"
