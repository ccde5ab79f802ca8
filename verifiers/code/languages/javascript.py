"""JavaScript on node: nothing to build; ``node --check`` finds syntax errors once, as a compile step."""

from .base import Language

LANGUAGE = Language(
    name="javascript", title="JavaScript", tags=("javascript", "js", "node", "nodejs"), source="main.js",
    tools=("node",), compile=("{node}", "--check", "{source}"), run=("{node}", "--max-old-space-size={memory_mb}", "{source}"),
    artifacts=("main.js",), processes=32, extra_memory_mb=1024,
    memory_markers=("JavaScript heap out of memory", "RangeError: Array buffer allocation failed"),
)
