"""JavaScript on node: nothing to build; ``node --check`` finds syntax errors once, as a compile step.
The npm packages the judge is given (:mod:`..libraries`) are mounted read-only beside node."""

from ..libraries import node_modules
from .base import Language, Toolchain, find_plain


def _find(language: Language) -> Toolchain | None:
    """node, and the ``node_modules`` folder the judge is given, if any."""
    found = find_plain(language)
    folder = node_modules()
    if found is None or folder is None:
        return found
    return Toolchain(found.language, found.tools, found.version, (*found.folders, str(folder)))


LANGUAGE = Language(
    name="javascript", title="JavaScript", tags=("javascript", "js", "node", "nodejs"), source="main.js",
    tools=("node",), compile=("{node}", "--check", "{source}"), run=("{node}", "--max-old-space-size={memory_mb}", "{source}"),
    artifacts=("main.js",), processes=32, extra_memory_mb=1024,
    memory_markers=("JavaScript heap out of memory", "RangeError: Array buffer allocation failed"), find=_find,
)
