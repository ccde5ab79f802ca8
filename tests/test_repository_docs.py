"""Every page the code and docs point to is in the repository."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("verifiers", "rewards", "recipes", "benchmarks", "examples", "docs", "tests")
SUFFIXES = {".py", ".md", ".yaml", ".yml", ".toml", ".sh", ".txt", ".cfg"}


def repository_texts() -> dict[Path, str]:
    paths = [ROOT / name for name in ("README.md", "Makefile", "pyproject.toml")]
    for folder in FOLDERS:
        paths += [path for path in (ROOT / folder).rglob("*") if path.suffix in SUFFIXES and path.is_file()]
    return {path: path.read_text(encoding="utf-8", errors="replace") for path in paths if path.is_file()}


def test_nothing_cites_a_design_document_the_repository_does_not_hold():
    # the design notes live outside the repository: state the fact in place or point into docs/
    cited = "DESIGN" + ".md"
    assert not (ROOT / cited).exists()
    assert [str(path.relative_to(ROOT)) for path, text in repository_texts().items() if cited in text] == []


def test_every_docs_page_cited_exists():
    cited = {match for text in repository_texts().values()
             for match in re.findall(r"\bdocs/[\w./-]*\w\.(?:md|png|json)", text)}
    assert "docs/cpu_training.md" in cited
    assert sorted(page for page in cited if not (ROOT / page).is_file()) == []
