"""The README and docs speak to a user: no paths of the machine they were written on, no words of how
the project is worked on (its sessions, stops or issues)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from benchmarks.docs_figures import PAGES

ROOT = Path(__file__).resolve().parents[1]
# A process's or a tool's "session" is a user's word; these are not.
INTERNAL = re.compile(r"\.\./shared|/work/shared|\bthis stop\b|\bstop's\b|\bother\s+sessions\b|\bsame\s+session\b"
                      r"|\bsessions\s+are\s+lent\b|\bissue\s+\d+\b", re.IGNORECASE)


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(ROOT)))
def test_a_page_carries_no_internal_wording(page):
    text = page.read_text(encoding="utf-8")
    found = [f"{text.count(chr(10), 0, match.start()) + 1}: {match.group(0)!r}" for match in INTERNAL.finditer(text)]
    assert found == [], f"{page.relative_to(ROOT)} speaks of how it was written, not to its reader: {found}"
