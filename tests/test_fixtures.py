"""No test module defines a fixture under the name of a conftest fixture it can see (it would
silently replace the shared one, with a different model, for that module only)."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def fixture_names(path: Path) -> set[str]:
    """Names of the functions in ``path`` decorated with ``pytest.fixture`` (called or not)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for decorator in node.decorator_list:
                target = decorator.func if isinstance(decorator, ast.Call) else decorator
                if isinstance(target, ast.Attribute) and target.attr == "fixture":
                    names.add(node.name)
    return names


def test_fixture_names_finds_the_shared_fixtures():
    assert {"model_dir", "tokenizer"} <= fixture_names(TESTS / "conftest.py")


def test_no_test_module_shadows_a_conftest_fixture():
    shadowed = []
    for module in sorted(TESTS.rglob("test_*.py")):
        visible = set()
        for folder in [module.parent, *module.parent.parents]:
            if folder == TESTS.parent:
                break
            if (folder / "conftest.py").is_file():
                visible |= fixture_names(folder / "conftest.py")
        shadowed += [f"{module.relative_to(TESTS)}: {name}" for name in sorted(fixture_names(module) & visible)]
    assert shadowed == []



def test_a_test_that_hangs_fails_with_a_reason(tmp_path):
    import os
    import subprocess
    import sys

    (tmp_path / "conftest.py").write_text(
        "import importlib.util\n"
        f"spec = importlib.util.spec_from_file_location('shared_conftest', {str(TESTS / 'conftest.py')!r})\n"
        "shared = importlib.util.module_from_spec(spec)\nspec.loader.exec_module(shared)\n"
        "no_test_hangs = shared.no_test_hangs\n")
    (tmp_path / "test_stuck.py").write_text("import threading\ndef test_waits_forever():\n    threading.Event().wait()\n")
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)],
                          capture_output=True, text=True, env={**os.environ, "REFEREE_TEST_HANG_LIMIT": "1"},
                          timeout=120)
    assert done.returncode == 1, done.stdout[-2000:]
    assert "TimeoutError: the test ran past 1 s" in done.stdout
