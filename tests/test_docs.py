"""The README and the pages in docs/ hold what they say: every link to a file or a heading of the
repository resolves, every block marked runnable runs, and the stage boundaries of
docs/architecture.md hold in the source.

A block is marked runnable by an HTML comment on the line before its opening fence:

    <!-- runnable -->
    ```bash
    referee check my_rewards:accuracy examples/golden/accuracy.jsonl
    ```

Only ```python and ```bash blocks can be marked. They run from the repository root, with no
network needed, with this interpreter's folder (the venv's python, pip and referee) first on PATH,
and each must finish in seconds on a CPU.
"""

from __future__ import annotations

import ast
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "examples" / "README.md"]
MARKER = "<!-- runnable -->"
FENCE = re.compile(r"^(`{3,}|~{3,})(.*)$")
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
RUN_TIMEOUT = 120


def relative(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def prose_lines(text: str, blank_code: bool = True) -> list[str]:
    """The lines outside fenced code blocks, with inline code spans blanked out unless told."""
    lines, fence = [], None
    for line in text.splitlines():
        opening = FENCE.match(line.strip())
        if fence is None and opening:
            fence = opening.group(1)
            continue
        if fence is not None:
            if line.strip().startswith(fence) and line.strip().strip(fence[0]) == "":
                fence = None
            continue
        lines.append(re.sub(r"(`+).*?\1", "", line) if blank_code else line)
    return lines


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, each space a hyphen."""
    text = re.sub(r"<[^>]+>", "", heading.strip().lower())
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"[^\w\- ]", "", text.replace("`", ""))
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    found, seen = set(), {}
    for line in prose_lines(path.read_text(encoding="utf-8"), blank_code=False):
        heading = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if heading:
            base = slug(heading.group(1))
            count = seen.get(base, 0)
            seen[base] = count + 1
            found.add(base if count == 0 else f"{base}-{count}")
        found.update(re.findall(r"<a\s+(?:id|name)=\"([^\"]+)\"", line))
    return found


def links(path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8")
    return [target for line in prose_lines(text) for target in LINK.findall(line)]


def test_the_pages_exist_and_the_readme_is_a_short_guide():
    names = {relative(page) for page in PAGES}
    expected = {"docs/architecture.md", "docs/verifiers.md", "docs/rewards.md", "docs/training.md",
                "docs/planning_and_diagnostics.md", "docs/prefilter.md", "docs/benchmarks.md",
                "docs/integrations.md", "docs/cli.md", "docs/cpu_training.md", "docs/gpu_check.md"}
    assert expected <= names
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 250
    # Every docs page is reachable from the README.
    linked = {os.path.normpath(target.split("#")[0]) for target in links(ROOT / "README.md")}
    assert sorted(name for name in expected if name not in linked) == []


@pytest.mark.parametrize("page", PAGES, ids=relative)
def test_every_link_to_a_file_or_heading_resolves(page):
    broken = []
    for target in links(page):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # https:, mailto:: not a repository file
            continue
        file_part, _, anchor = target.partition("#")
        resolved = (page.parent / file_part).resolve() if file_part else page
        if not resolved.exists() or ROOT not in (resolved, *resolved.parents):
            broken.append(f"{target}: no such file")
        elif anchor and resolved.suffix == ".md" and anchor not in anchors(resolved):
            broken.append(f"{target}: no heading #{anchor} in {relative(resolved)}")
    assert broken == []


def runnable_blocks() -> list[tuple[str, str, str]]:
    blocks = []
    for page in PAGES:
        lines = page.read_text(encoding="utf-8").splitlines()
        for index, line in enumerate(lines):
            if line.strip() != MARKER:
                continue
            opening = FENCE.match(lines[index + 1].strip()) if index + 1 < len(lines) else None
            language = opening.group(2).strip().split()[0] if opening and opening.group(2).strip() else ""
            assert language in ("python", "bash"), f"{relative(page)}:{index + 1}: {MARKER} must precede a ```python or ```bash block"
            body = []
            for code in lines[index + 2:]:
                if code.strip().startswith(opening.group(1)) and code.strip().strip(opening.group(1)[0]) == "":
                    break
                body.append(code)
            else:
                raise AssertionError(f"{relative(page)}:{index + 1}: the runnable block is never closed")
            blocks.append((f"{relative(page)}:{index + 3}", language, "\n".join(body) + "\n"))
    return blocks


BLOCKS = runnable_blocks()


def test_a_few_blocks_are_marked_runnable_in_the_readme_and_in_docs():
    places = [where.split(":")[0] for where, _, _ in BLOCKS]
    assert "README.md" in places and any(place.startswith("docs/") for place in places)
    assert {language for _, language, _ in BLOCKS} == {"python", "bash"}


@pytest.mark.parametrize("where, language, code", BLOCKS, ids=[where for where, _, _ in BLOCKS])
def test_every_runnable_block_runs(where, language, code):
    env = dict(os.environ, PATH=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]))
    command = [sys.executable, "-c", code] if language == "python" else ["bash", "-euo", "pipefail", "-c", code]
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=RUN_TIMEOUT)
    assert done.returncode == 0, f"{where} exited {done.returncode}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"


def imported_modules(folder: Path) -> dict[str, set[str]]:
    found = {}
    for path in sorted(folder.rglob("*.py")):
        names = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module)
        found[relative(path)] = names
    return found


def test_the_stage_boundaries_of_the_architecture_page_hold():
    # A verifier, and a reward, never imports torch or a trainer: they take text and return numbers.
    heavy = ("torch", "trl", "transformers", "vllm", "accelerate", "deepspeed")
    for folder in ("verifiers", "rewards"):
        offending = {path: sorted(name for name in names if name.split(".")[0] in heavy)
                     for path, names in imported_modules(ROOT / folder).items()}
        assert {path: names for path, names in offending.items() if names} == {}
    # A verifier never reaches up into the rewards or the recipes; the loss layer never scores.
    for path, names in imported_modules(ROOT / "verifiers").items():
        assert not [name for name in names if name.startswith(("referee.rewards", "referee.recipes"))], path
    loss = imported_modules(ROOT / "recipes")["recipes/train/loss.py"]
    assert not [name for name in loss if name.startswith(("referee.verifiers", "referee.rewards"))]


# The reward commands the pages and the example scripts show (`referee check`, `referee audit`,
# `pytest`): each runs as written. They run from examples/ (where the pages say these commands
# run) unless they name an examples/ path, then from the repository root.
COMMAND_PAGES = [ROOT / "README.md", ROOT / "docs" / "rewards.md", ROOT / "examples" / "README.md"]
COMMAND = re.compile(r"^(?:\$\s+)?(?:cd examples && )?((?:referee (?:check|audit)|pytest) .*?)(?:\s{2,}#\s*(.*))?$")
PLACEHOLDER = re.compile(r"^[A-Z][A-Z_]*(?:\.[a-z]+)?$|=[A-Z]+$")


def shown_commands() -> list[tuple[str, str, str]]:
    """(where, command, its comment) of every reward command shown in a code block or code span."""
    found: dict[str, tuple[str, str, str]] = {}
    sources = [(page, page.read_text(encoding="utf-8")) for page in COMMAND_PAGES]
    sources += [(path, ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or "")
                for path in sorted((ROOT / "examples").glob("*.py"))]
    for path, text in sources:
        prose = set(prose_lines(text, blank_code=False)) if path.suffix == ".md" else set()  # a docstring: every line
        for number, line in enumerate(text.splitlines(), 1):
            candidates = re.findall(r"`([^`]+)`", line) if line in prose else [line.strip()]
            for candidate in candidates:
                match = COMMAND.match(candidate.strip())
                if match and not any(PLACEHOLDER.search(token) for token in shlex.split(match.group(1))):
                    seen = found.get(match.group(1))
                    if seen is None or ("exit" in (match.group(2) or "") and "exit" not in seen[2]):
                        found[match.group(1)] = (f"{relative(path)}:{number}", match.group(1), match.group(2) or "")
    return list(found.values())


SHOWN = shown_commands()


def test_the_reward_commands_of_the_pages_are_found():
    commands = [command for _, command, _ in SHOWN]
    assert any(c.startswith("referee check") for c in commands) and any(c.startswith("referee audit") for c in commands)
    assert {"pytest test_my_rewards.py", "pytest examples/test_my_rewards.py"} <= set(commands)
    assert "referee check my_rewards:shows_work golden/shows_work.jsonl" in commands  # my_rewards.py's docstring
    assert "referee audit gsm8k_accuracy data.jsonl -O gold_column=final" in commands


@pytest.mark.parametrize("where, command, comment", SHOWN, ids=[f"{where} {command}" for where, command, _ in SHOWN])
def test_every_shown_reward_command_runs_as_written(where, command, comment):
    words = shlex.split(command)
    bin_dir = Path(sys.executable).parent
    argv = ([str(bin_dir / "referee"), *words[1:]] if words[0] == "referee"
            else [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *words[1:]])
    cwd = ROOT if "examples/" in command else ROOT / "examples"
    done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=RUN_TIMEOUT)
    stated = re.search(r"\bexit (\d)", comment)
    # Without a stated status, 1 is a verdict (a mismatch, a failing probe); 2 is a command that cannot run.
    allowed = {int(stated.group(1))} if stated else {0, 1}
    assert done.returncode in allowed, f"{where}: {command} exited {done.returncode}\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
