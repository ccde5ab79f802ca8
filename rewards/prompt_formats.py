"""Answer containers a dataset's prompts ask for, which ``referee audit`` tries beside the ones it knows.

A prompt that tells the model how to write its answer names the format its reward reads: a tag
pair (``<final>...</final>``), a LaTeX command with an empty or placeholder argument
(``\\answer{}``), a label in capitals (``ANSWER=``, ``FINAL ANSWER:``) or before a placeholder
(``Result: <n>``), or a JSON key (``{"result": ...}``). Each is tried as a template; the audit
keeps those in which the reward pays a right answer above a wrong one.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

# A tag counts when the prompt closes it or calls it a tag: ``<n>`` alone is a placeholder.
_TAG = re.compile(r"</([A-Za-z][\w-]{0,30})>|<([A-Za-z][\w-]{0,30})>\s*tags?\b")
# A command counts with an empty or placeholder argument (``\\answer{}``, ``\\answer{...}``, ``\\answer{N}``).
_COMMAND = re.compile(r"\\([A-Za-z]{2,30})\{\s*(?:\.\.\.|…|[A-Za-z]|<[^<>{}]{0,20}>|answer)?\s*\}", re.IGNORECASE)
_LABEL = re.compile(r"(?<![\w#])([A-Z][A-Z_]{2,}(?:[ _][A-Z]{2,})*)( ?[=:] ?)")
# A capitalised label (one or two words) before a placeholder: ``Result: <n>``, ``Final answer = [answer]``.
_PLACEHOLDER_LABEL = re.compile(r"\b([A-Z][a-z]*(?: [A-Za-z][a-z]*)?)( ?[=:] ?)(?=<[^<>\n]{1,20}>|\[[^\[\]\n]{1,20}\]|"
                                r"\{[^{}\n]{1,20}\}|\.\.\.|…)")
_JSON_KEY = re.compile(r"""\{\s*["']([A-Za-z_]\w{0,30})["']\s*:""")

# Containers the known formats already write, or that hold no final answer (a reasoning block).
_KNOWN_TAGS = frozenset({"answer", "think"})
_KNOWN_COMMANDS = frozenset({"boxed"})
_MAX_FORMATS = 8  # each costs two references a row; the most often named are tried


def prompt_formats(prompts: Iterable[str | None]) -> tuple[tuple[str, str], ...]:
    """``(name, template)`` for each answer container the prompts name, ``{answer}`` marking the
    place, the most often named first (at most eight).

    Example:
        >>> prompt_formats(["Think, then put the result in <final></final> tags.", "End with ANSWER=<n>."])
        (('<final> tags', '<final>{answer}</final>'), ('ANSWER=', 'ANSWER={answer}'))
        >>> prompt_formats([r"Write your answer as \\answer{...}.", 'Reply {"result": <n>}', None])
        (('\\\\answer{}', '\\\\answer{{answer}}'), ('json "result"', '{"result": "{answer}"}'))
        >>> prompt_formats(["End with Final answer: <n>", "Put your final answer within \\\\boxed{}."])
        (('Final answer:', 'Final answer: {answer}'),)
    """
    counts: Counter[tuple[str, str]] = Counter()
    for prompt in prompts:
        if prompt:
            counts.update(list(dict.fromkeys(_named(prompt))))  # a prompt counts once per container
    return tuple(form for form, _ in counts.most_common(_MAX_FORMATS))


def _named(prompt: str) -> list[tuple[str, str]]:
    """The containers one prompt names, in the order it names them."""
    found = [(match.start(), f"<{name}> tags", f"<{name}>{{answer}}</{name}>")
             for match in _TAG.finditer(prompt)
             if (name := match.group(1) or match.group(2)).lower() not in _KNOWN_TAGS]
    found += [(match.start(), f"\\{name}{{}}", f"\\{name}{{{{answer}}}}")
              for match in _COMMAND.finditer(prompt) if (name := match.group(1)) not in _KNOWN_COMMANDS]
    found += [(match.start(), f"{label}{separator.strip()}", f"{label}{separator}{{answer}}")
              for pattern in (_LABEL, _PLACEHOLDER_LABEL) for match in pattern.finditer(prompt)
              for label, separator in [match.groups()]]
    found += [(match.start(), f'json "{key}"', f'{{"{key}": "{{answer}}"}}') for match in _JSON_KEY.finditer(prompt)
              for key in [match.group(1)]]
    return [(name, template) for _, name, template in sorted(found)]
