"""Every ``referee.recipes`` import path the docs, examples, benchmarks and tests use resolves,
``recipes/`` keeps its layout by capability (few top-level modules, no import circles), and
``verifiers/`` keeps its house: no circles, a plain-text floor that imports nothing above it,
answer domains that do not import each other, no verifier that imports a runner, and old
module paths that still import for one release."""

from __future__ import annotations

import ast
import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

from referee.recipes import MOVED_MODULES
from referee.verifiers import MOVED_MODULES as MOVED_VERIFIER_MODULES

ROOT = Path(__file__).resolve().parents[1]
RECIPES = ROOT / "recipes"
PACKAGES = {"referee.verifiers": ROOT / "verifiers", "referee.rewards": ROOT / "rewards", "referee.recipes": RECIPES}

# The import paths the docs, README, examples and benchmarks show, written out so that a move
# that breaks one fails here by name (test_every_cited_path_resolves finds new ones by itself).
DOCUMENTED_IMPORTS = {
    "referee.recipes": ["RefereeGRPOConfig", "RefereeGRPOTrainer", "DiagnosticsCallback", "build_grpo_config",
                        "load_tokenizer", "holding_process_group", "register_aggregation", "get_aggregation",
                        "parse_recipe", "build_trainer", "train_and_save", "run_recipe", "recipe_path",
                        "RecipeError"],
    "referee.recipes.cli": ["main", "build_parser"],
    "referee.recipes.errors": ["RecipeError"],
    "referee.recipes.train.config": ["RefereeGRPOConfig", "build_grpo_config", "CPU_PROFILE"],
    "referee.recipes.train.trainer": ["RefereeGRPOTrainer"],
    "referee.recipes.train.loss": ["register_aggregation", "get_aggregation", "BUILTIN_AGGREGATIONS"],
    "referee.recipes.train.recipe": ["parse_recipe", "build_trainer", "train_and_save", "run_recipe"],
    "referee.recipes.train.datasets": ["get_dataset_format", "load_training_dataset"],
    "referee.recipes.train.teardown": ["holding_process_group"],
    "referee.recipes.train.shipped": ["recipe_path", "shipped_recipes"],
    "referee.recipes.train.trl_version": ["PINNED_TRL_VERSION", "check_trl_version"],
    "referee.recipes.plan": ["plan_run", "RunPlan", "degenerate_group_share", "GB", "VLLM_WEIGHT_BYTES",
                             "StateBytes", "trainable_state_bytes", "weight_bytes", "DEFAULT_PASS_RATES"],
    "referee.recipes.plan.inputs": ["RecipeSettings"],
    "referee.recipes.plan.model_params": ["model_shape", "read_model_config", "count_parameters"],
    "referee.recipes.plan.sharding": ["read_accelerate_config"],
    "referee.recipes.diagnostics": ["DiagnosticsCallback", "SAMPLES_FILE", "sample_rows"],
    "referee.recipes.diagnostics.monitor": ["DiagnosticsConfig", "DiagnosticsMonitor"],
    "referee.recipes.demo": ["run_demo", "DemoSettings"],
    "referee.recipes.demo.arithmetic": ["Sum", "grpo_rows", "split_sums"],
    "referee.recipes.demo.warm_start": ["warm_start"],
    "referee.recipes.demo.evaluation": ["greedy_completions", "reward_accuracy"],
    "referee.recipes.demo.reward_curve": ["plot_reward_curve"],
    "referee.recipes.prefilter": ["PrefilterConfig", "KeepBounds", "EngineOptions", "SamplingOptions", "Sample",
                                  "GenerationBackend", "Scorer", "run_prefilter", "merge_runs",
                                  "degenerate_share"],
    "referee.recipes.prefilter.run": ["open_run", "process_chunks", "rows_per_chunk"],
    "referee.recipes.prefilter.parallel": ["WorkerError", "run_workers"],
    "referee.recipes.prefilter.worker": ["main"],
    "referee.recipes.common.loading": ["load_tokenizer"],
    "referee.recipes.common.tiny_model": ["build_char_tokenizer", "build_tiny_model", "save_tiny_model"],
    "referee.recipes.common.data": ["load_rows", "BadRow", "Rows"],
    "referee.recipes.common.prompts": ["PromptRenderer", "PromptError"],
    "referee.recipes.common.generation": ["SamplingOptions", "EngineOptions", "resolve_backend"],
    "referee.recipes.common.backends": ["build_backend"],
    "referee.recipes.common.transformers_backend": ["TransformersBackend"],
    "referee.recipes.common.config_flags": ["add_flags", "from_flags"],
}

# `python -m ...` entry points the docs, the Makefile and the code run.
DOCUMENTED_MAINS = ["referee.recipes.cli", "referee.recipes.prefilter.worker"]

CITING = [ROOT / "README.md", ROOT / "Makefile", ROOT / "pyproject.toml", *sorted((ROOT / "docs").glob("*.md")),
          *sorted((ROOT / "examples").rglob("*.py")), *sorted((ROOT / "examples").rglob("*.sh")),
          *sorted((ROOT / "examples").rglob("*.md")), *sorted((ROOT / "benchmarks").rglob("*.py")),
          *sorted((ROOT / "benchmarks").rglob("*.sh")), *sorted((ROOT / "tests").rglob("*.py"))]
DOTTED = re.compile(r"\breferee\.recipes(?:\.[A-Za-z_]\w*)*")
FROM_IMPORT = re.compile(r"from[ \t]+(referee\.recipes(?:\.\w+)*)[ \t]+import[ \t]+([\w \t,]+)")


def resolve(dotted: str) -> object:
    """The module or attribute ``dotted`` names: the longest importable prefix, then attributes."""
    parts = dotted.split(".")
    for split in range(len(parts), 0, -1):
        try:
            target = importlib.import_module(".".join(parts[:split]))
        except ModuleNotFoundError:
            continue
        for name in parts[split:]:
            target = getattr(target, name)
        return target
    raise ModuleNotFoundError(dotted)


def cited_paths() -> dict[str, set[str]]:
    """Every ``referee.recipes...`` name the citing files use, with the files that use it."""
    found: dict[str, set[str]] = {}
    for path in CITING:
        if path == Path(__file__).resolve() or not path.is_file():
            continue
        text = path.read_text(encoding="utf-8")
        names = set(DOTTED.findall(text))
        if path.suffix == ".py":
            for node in ast.walk(ast.parse(text)):
                if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("referee.recipes"):
                    names.update(f"{node.module}.{alias.name}" for alias in node.names)
        for module, imported in FROM_IMPORT.findall(text):  # docs, and doctests in strings
            names.update(f"{module}.{item.split()[0]}" for item in imported.split(",") if item.strip())
        for name in names:
            found.setdefault(name, set()).add(str(path.relative_to(ROOT)))
    return found


@pytest.mark.parametrize("module", sorted(DOCUMENTED_IMPORTS))
def test_documented_imports(module):
    imported = importlib.import_module(module)
    assert [name for name in DOCUMENTED_IMPORTS[module] if not hasattr(imported, name)] == []


def test_every_cited_path_resolves():
    cited = cited_paths()
    assert "referee.recipes.cli" in cited and "referee.recipes.train.loss" in cited
    unresolved = {}
    for name, files in sorted(cited.items()):
        try:
            resolve(name)
        except (ImportError, AttributeError) as error:
            unresolved[name] = (sorted(files), repr(error))
    assert unresolved == {}


@pytest.mark.parametrize("module", DOCUMENTED_MAINS)
def test_documented_module_entry_points_run(module):
    command = [sys.executable, "-m", module] + (["--help"] if module.endswith("cli") else [])
    result = subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert "Traceback" not in result.stderr, result.stderr
    assert "No module named" not in result.stderr, result.stderr


def test_the_console_script_target_resolves():
    script = re.search(r'^referee = "([\w.]+):(\w+)"', (ROOT / "pyproject.toml").read_text(), re.M)
    assert script is not None
    assert callable(getattr(importlib.import_module(script.group(1)), script.group(2)))


def _subpackages_on_disk() -> set[str]:
    return {package + "".join(f".{part}" for part in path.parent.relative_to(folder).parts)
            for package, folder in PACKAGES.items() for path in folder.rglob("__init__.py")}


def test_the_package_list_holds_every_subpackage():
    listed = set(re.findall(r'"(referee\.(?:recipes|verifiers|rewards)[\w.]*)"', (ROOT / "pyproject.toml").read_text()))
    on_disk = _subpackages_on_disk()
    assert {"referee.verifiers.math", "referee.verifiers.text", "referee.verifiers.code"} <= on_disk
    assert on_disk - listed == set()


def test_a_built_wheel_holds_every_subpackage(tmp_path):
    import zipfile

    build = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                            "-w", str(tmp_path), str(ROOT)], capture_output=True, text=True, timeout=300)
    assert build.returncode == 0, build.stderr
    (wheel,) = tmp_path.glob("referee-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    missing = {package for package in _subpackages_on_disk()
               if f"{package.replace('.', '/')}/__init__.py" not in names}
    assert missing == set()
    assert "referee/verifiers/math/sympy_worker.py" in names and "referee/verifiers/text/prose.py" in names
    assert "referee/verifiers/math/parser_tables.bin" in names  # package data: the LaTeX parser's tables


def test_recipes_is_split_by_capability():
    top = sorted(path.name for path in RECIPES.glob("*.py"))
    assert len(top) <= 8, top
    assert {"__init__.py", "cli.py"} <= set(top)


def test_pickled_classes_keep_importable_names():
    # TRL's async trainer, and worker processes, find classes again by module and qualified name.
    import pickle

    from referee.recipes import RefereeGRPOConfig, RefereeGRPOTrainer
    from referee.recipes.diagnostics import DiagnosticsCallback
    from referee.recipes.prefilter import EngineOptions, KeepBounds, SamplingOptions

    for cls in (RefereeGRPOConfig, RefereeGRPOTrainer, DiagnosticsCallback, EngineOptions, SamplingOptions,
                KeepBounds):
        assert resolve(f"{cls.__module__}.{cls.__qualname__}") is cls
    assert pickle.loads(pickle.dumps(SamplingOptions(max_tokens=8))) == SamplingOptions(max_tokens=8)


def _module_name(path: Path, folder: Path = RECIPES, package: str = "referee.recipes") -> str:
    parts = path.relative_to(folder).with_suffix("").parts
    parts = parts[:-1] if parts[-1] == "__init__" else parts
    return ".".join((package, *parts))


def recipes_import_graph() -> dict[str, set[str]]:
    """Which ``referee.recipes`` modules each module imports (at any level, doctests aside)."""
    return import_graph("referee.recipes")


def import_graph(*packages: str) -> dict[str, set[str]]:
    """Which modules of ``packages`` each of their modules imports (at any level, doctests aside)."""
    modules = {_module_name(path, PACKAGES[package], package): path
               for package in packages for path in PACKAGES[package].rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        targets = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join(anchor + ([base] if base else []))
                targets.add(base)
                targets.update(f"{base}.{alias.name}" for alias in node.names)
        graph[name] = {target for target in targets if target in modules and target != name}
    return graph


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    # A package importing its own submodules (to re-export them) is not a circle.
    edges = {name: {t for t in targets if not (t.startswith(name + ".") or name.startswith(t + "."))}
             for name, targets in graph.items()}
    circles = []
    for start in sorted(edges):
        stack = [(start, [start])]
        seen = set()
        while stack:
            node, trail = stack.pop()
            for target in sorted(edges.get(node, ())):
                if target == start:
                    circles.append(trail + [start])
                elif target not in seen:
                    seen.add(target)
                    stack.append((target, trail + [target]))
    return circles


def test_recipes_has_no_import_circles():
    assert _circles(recipes_import_graph()) == []


def test_verifiers_and_rewards_have_no_import_circles():
    graph = import_graph("referee.verifiers", "referee.rewards")
    assert "referee.verifiers.math.pipeline" in graph and "referee.rewards.verdict_rewards" in graph
    assert _circles(graph) == []


def test_the_circles_test_can_fail():
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c", "a"], ["b", "c", "a", "b"],
                                                                          ["c", "a", "b", "c"]]


def _reaching(graph: dict[str, set[str]], sources: str, allowed: tuple[str, ...]) -> dict[str, list[str]]:
    """The modules under ``sources`` that import a ``referee.verifiers`` module outside ``allowed``."""
    found = {name: sorted(t for t in targets if t.startswith("referee.verifiers") and not t.startswith(allowed))
             for name, targets in graph.items() if name == sources or name.startswith(sources + ".")}
    return {name: targets for name, targets in found.items() if targets}


def test_the_text_floor_imports_nothing_else_of_verifiers():
    graph = import_graph("referee.verifiers")
    assert "referee.verifiers.text.prose" in graph
    assert _reaching(graph, "referee.verifiers.text", ("referee.verifiers.text",)) == {}


def test_the_sandbox_imports_nothing_else_of_verifiers():
    # The judge and the Python tool both stand on the sandbox; it stands on nothing of theirs.
    graph = import_graph("referee.verifiers")
    assert "referee.verifiers.sandbox.forkserver" in graph and "referee.verifiers.sandbox.cell_session" in graph
    assert _reaching(graph, "referee.verifiers.sandbox", ("referee.verifiers.sandbox",)) == {}


def test_answer_domains_do_not_import_each_other():
    from referee.verifiers import VERIFIER_NAMES, get_verifier

    graph = import_graph("referee.verifiers")
    domains = [get_verifier(name).__name__ for name in VERIFIER_NAMES]
    assert set(domains) == {"referee.verifiers.math", "referee.verifiers.code", "referee.verifiers.gsm8k"}
    crossing = {}
    for domain in domains:
        others = tuple(o for other in domains if other != domain for o in (other + ".", other))
        reached = {name: sorted(t for t in targets if t.startswith(others) and not t.startswith(domain + "."))
                   for name, targets in graph.items() if name == domain or name.startswith(domain + ".")}
        crossing.update({name: targets for name, targets in reached.items() if targets})
    assert crossing == {}


def test_rewards_and_recipes_import_only_the_faces_of_the_answer_domains():
    graph = import_graph("referee.verifiers", "referee.rewards", "referee.recipes")
    insides = ("referee.verifiers.math.", "referee.verifiers.code.", "referee.verifiers.sandbox.")
    past = {name: sorted(t for t in targets if t.startswith(insides))
            for name, targets in graph.items() if name.startswith(("referee.rewards", "referee.recipes"))}
    assert "referee.rewards.audit" in graph and {name: t for name, t in past.items() if t} == {}


def test_no_verifier_or_reward_imports_a_runner():
    graph = import_graph("referee.verifiers", "referee.rewards")
    importing = sorted(name for name, targets in graph.items() if "referee.verifiers.ray_host" in targets)
    assert importing == []


@pytest.mark.parametrize("old", sorted(MOVED_VERIFIER_MODULES))
def test_a_moved_verifier_module_still_imports_under_its_old_name(old):
    new = MOVED_VERIFIER_MODULES[old]
    module = importlib.import_module(f"referee.verifiers.{old}")
    if isinstance(new, str):
        assert module is importlib.import_module(f"referee.verifiers.{new}")
    assert [name for name in OLD_PUBLIC_NAMES[old] if not hasattr(module, name)] == []


# The public names of the flat maths modules before verifiers/ became a house (math.py's
# on_backend, the dispatch hook, is gone with the dispatch).
OLD_PUBLIC_NAMES = {
    "math_answers": ["BOXED_RE", "CompareOptions", "ExactNumber", "Extraction", "MAX_GOLD_CHARS", "PERCENT_MODES",
                     "Percent", "Source", "UnusableGold", "assignment_value", "balanced", "base_number",
                     "brace_depth", "canonical", "exact_elements", "exact_matrix", "exact_number", "extract_answer",
                     "first_number", "for_sympy", "format_number", "gold_answer", "has_decimals", "is_bare_answer",
                     "last_boxed", "may_end_in_unit", "never_a_number", "number_words_only", "numbers_match",
                     "strip_math_delimiters", "top_level_parts"],
    "math_extract": ["CUT_OFF_REASON", "Extraction", "HEDGE", "Source", "after_reasoning", "before_modifier",
                     "boxed_spans", "extract_answer", "is_bare_answer", "is_mention", "last_boxed",
                     "last_prose_number", "looks_cut_off", "math_spans", "prose_number", "prose_words",
                     "strip_math_delimiters", "without_closing_remark"],
    "math_forms": ["balanced", "comparable", "has_relation", "is_mention", "number_words_only", "right_hand_side",
                   "top_level_parts", "union_of_alternatives"],
    "math_values": ["CompareOptions", "canonical", "closed_form_value", "definition", "far_apart", "is_simple_maths",
                    "may_end_in_unit", "ordered_values", "surely_parses", "top_level_parts", "union_values",
                    "unordered_values", "value_at_point"],
    "math_sympy": ["CompareOptions", "equivalent", "gold_problem", "judge"],
    "latex": ["BOXED_RE", "boxed_spans", "closing_braces"],
    "numeric": ["Exact", "NumberMatch", "exact", "first_number", "format_number", "iter_numbers", "last_number",
                "parse_number"],
    "math": ["CUT_OFF_REASON", "CompareOptions", "ExactNumber", "Extraction", "HEDGE", "MAX_NESTING", "NamedFunction",
             "Outcome", "Percent", "UnusableGold", "Verdict", "after_reasoning", "base_number", "brace_depth",
             "canonical", "closed_form_value", "comparable", "definition", "exact_elements", "exact_matrix",
             "exact_number", "extract_answer", "far_apart", "for_sympy", "gold_answer", "has_decimals",
             "looks_cut_off", "never_a_number", "numbers_match", "ordered_values", "shared_pool",
             "strip_math_delimiters", "surely_parses", "top_level_parts", "union_of_alternatives", "union_values",
             "unordered_values", "value_at_point", "verify", "verify_batch"],
}


def test_the_old_flat_math_module_names_still_resolve():
    from referee.verifiers import math as maths

    assert [name for name in OLD_PUBLIC_NAMES["math"] if not hasattr(maths, name)] == []
    assert maths.__all__ == ["CompareOptions", "Verdict", "exact_number", "gold_answer", "verify", "verify_batch"]


def test_a_maths_worker_imports_none_of_the_reading_pipeline():
    """The maths package's face is imported on first use: a worker template (sympy_worker, the
    parser tables) starts without the caller-side modules, and the face knows every module."""
    from referee.verifiers import math as maths

    assert maths._MODULES == {path.stem for path in (ROOT / "verifiers" / "math").glob("*.py")} - {"__init__"}
    script = ("import sys; import referee.verifiers.math.sympy_worker, referee.verifiers.math.parser_tables; "
              "print(sorted(m for m in sys.modules if m.startswith('referee.verifiers.math.')))")
    loaded = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    assert eval(loaded) == ["referee.verifiers.math.antlr_closure", "referee.verifiers.math.options",
                            "referee.verifiers.math.parser_tables",
                            "referee.verifiers.math.sympy_worker"]


def test_the_maths_face_starts_the_pool_before_it_loads_the_reading_pipeline():
    """``referee.verifiers.math.verify_batch`` takes the pipeline's options exactly, and in a fresh
    process its worker pool starts before the reading modules are imported (their imports overlap)."""
    import inspect

    from referee.verifiers import math as maths
    from referee.verifiers.math import pipeline

    assert inspect.signature(maths.verify_batch) == inspect.signature(pipeline.verify_batch)
    script = """
import sys
from referee.verifiers.deadline_pool import DeadlinePool
started = DeadlinePool.start
seen = []
def start(pool):
    seen.append("referee.verifiers.math.extract" in sys.modules)
    return started(pool)
DeadlinePool.start = start
from referee.verifiers import math
print([v.status for v in math.verify_batch(["so \\\\boxed{2}"], ["2"], workers=1)], seen)
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["['correct']", "[False,", "True]"]  # the face's start, then the pipeline's


def test_old_verifier_paths_and_pickles_work_in_a_fresh_process():
    # A pickle written before the split names referee.verifiers.math_answers.CompareOptions.
    script = ("import pickle; from referee.verifiers.math import CompareOptions; "
              "data = pickle.dumps(CompareOptions(percent='divide'), protocol=0); "
              "old = data.replace(b'referee.verifiers.math.options', b'referee.verifiers.math_answers'); "
              "assert old != data and pickle.loads(old) == CompareOptions(percent='divide'); "
              "assert pickle.loads(data) == CompareOptions(percent='divide'); "
              "from referee.verifiers.math_extract import looks_cut_off; import referee.verifiers.text.prose as p; "
              "assert looks_cut_off is p.looks_cut_off; import referee.verifiers.numeric as n, referee.verifiers.text.numbers as m; "
              "assert n is m and n.__spec__.name == n.__name__ == 'referee.verifiers.text.numbers'; print('ok')")
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert run.stdout.strip() == "ok", run.stderr


def test_the_old_backend_keyword_warns_and_still_dispatches():
    from referee.verifiers import gsm8k

    with pytest.warns(DeprecationWarning, match="verify_batch_on"):
        verdicts = gsm8k.verify_batch(["#### 3"], [3], backend="dask")
    assert [v.reason for v in verdicts] == ["backend='dask' is not one of local, ray"]


def test_what_the_capabilities_share_lives_below_them():
    graph = recipes_import_graph()
    common = {name: targets for name, targets in graph.items() if name.startswith("referee.recipes.common")}
    assert "referee.recipes.common.backends" in common
    reaching_up = {name: sorted(t for t in targets
                                if not t.startswith(("referee.recipes.common", "referee.recipes.errors")))
                   for name, targets in common.items()}
    assert {name: targets for name, targets in reaching_up.items() if targets} == {}
    # The trainer, the demo and the pre-filter take rows, prompts and backends from common, not from each other.
    for user in ("referee.recipes.train", "referee.recipes.demo"):
        crossing = {name: sorted(t for t in targets if t.startswith("referee.recipes.prefilter"))
                    for name, targets in graph.items() if name.startswith(user)}
        assert {name: targets for name, targets in crossing.items() if targets} == {}



@pytest.mark.parametrize("old", sorted(MOVED_MODULES))
def test_a_moved_module_still_imports_under_its_old_name(old):
    new = importlib.import_module(f"referee.recipes.{MOVED_MODULES[old]}")
    assert importlib.import_module(f"referee.recipes.{old}") is new
    assert new.__name__ == new.__spec__.name == f"referee.recipes.{MOVED_MODULES[old]}"


def test_an_old_path_imported_first_in_a_fresh_process_is_the_new_module():
    script = ("import referee.recipes.teardown as old, pickle; from referee.recipes.loading import load_tokenizer; "
              "import referee.recipes.train.teardown as new; assert old is new and new.__spec__.name == new.__name__; "
              "assert pickle.loads(pickle.dumps(old.holding_process_group)) is new.holding_process_group; print('ok')")
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert run.stdout.strip() == "ok", run.stderr
