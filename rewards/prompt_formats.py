"""Answer containers a dataset's prompts ask for, which ``referee audit`` tries beside the ones it knows.

A prompt that tells the model how to write its answer names the format its reward reads: a tag
pair (``<final></final>``, ``in <result> tags``), a LaTeX command with an empty or placeholder
argument (``\\answer{}``), a label (``Result: <n>``, ``ANSWER=``) or a JSON key
(``{"result": <n>}``), or whatever the prompt writes around a placeholder (``[[<n>]]``, ``ANS(<n>)``,
``"#ANSWER: <n>"``, ``**Answer:** <n>``). A container counts when the prompt shows it empty or holding a placeholder,
or when its name says answer (``ANSWER:``, ``</final>``): a ``NOTE:`` or a ``{"a": 1}`` in a
question is data, not a format. Each is tried as a template; the audit keeps those in which the
reward pays a right answer above a wrong one.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

_PLACEHOLDER = r"(?:<[^<>/\n]{1,20}>|\[[^\[\]\n]{1,20}\]|\{[^{}\n]{1,20}\}|\.\.\.|…)"
_ANSWERISH = re.compile(r"ans|result|final|solution|output|response|reply", re.IGNORECASE)
# A tag shown empty or around a placeholder (``<final></final>``, ``<x>...</x>``, ``<x>your answer</x>``), called
# a tag, or closed with an answer's name (``</result>``).
_PLACEHOLDER_WORDS = rf"[A-Za-z ]{{0,24}}?(?:{_ANSWERISH.pattern})[A-Za-z ]{{0,24}}"
_TAG = re.compile(rf"<([A-Za-z][\w-]{{0,30}})>\s*(?:{_PLACEHOLDER}|{_PLACEHOLDER_WORDS})?\s*</\1>"
                  rf"|<([A-Za-z][\w-]{{0,30}})>\s*tags?\b|</([A-Za-z][\w-]{{0,30}})>")
# A command with an empty or placeholder argument (``\\answer{}``, ``\\answer{...}``, ``\\answer{N}``).
_COMMAND = re.compile(r"\\([A-Za-z]{2,30})\{\s*(?:\.\.\.|…|[A-Za-z]|<[^<>{}]{0,20}>|answer)?\s*\}", re.IGNORECASE)
# A label of one or two capitalised words and its separator (``Result: ``, ``ANSWER=``, ``Final answer = ``,
# ``RESULT -> ``, ``Answer := ``).
_LABEL = re.compile(r"(?<![\w#])([A-Z][A-Za-z_]*(?:[ _][A-Za-z][A-Za-z_]*)?)( ?(?:->|=>|→|:=|=|:) ?)")
_JSON_KEY = re.compile(r"""\{\s*["']([A-Za-z_]\w{0,30})["']\s*:\s*""")

# A placeholder alone (``<n>``, ``{answer}``, ``[number]``), to read what the prompt writes around it: glued to it
# (``[[<n>]]``, ``ANS(<n>)``), quoted with it (``"#ANSWER: <n>"``) or a label before it that ends on a colon, an
# equals sign or an arrow (``**Answer:** <n>``).
_ALONE = r"(?:<[^<>/\n]{1,20}>|\{[^{}\n]{1,20}\}|\[[^\[\]\n<>{}]{1,20}\])"
_QUOTED = re.compile(rf"[\"'`“]([^\"'`”\n]{{0,40}}?{_ALONE}[^\"'`”\n]{{0,20}}?)[\"'`”]")
_GLUED = re.compile(rf"((?:\S*(?:[:=]|->|=>|→)\**[ \t])?[^\s\"'`“]*)({_ALONE})([^\s\"'`”]*)")

# What a placeholder says it stands for ("<n>", "[number]", "{your answer}"), not maths of a question ("[x]", "{a+b}").
_PLACEHOLDER_NAME = re.compile(r"n|N|k|\.\.\.|…|(?:your |the |final |a )*(?:ans\w*|result|number|num|value|integer|int"
                               r"|digits?|letter|choice|option|output|solution|reply)(?: here)?", re.IGNORECASE)
_READ_OTHERWISE = re.compile(r"\\[A-Za-z]+$|\{\s*[\"']")  # a command's argument, a JSON value: read by their own patterns

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
        >>> prompt_formats(["End with RESULT -> <number>."])
        (('RESULT ->', 'RESULT -> {answer}'),)
        >>> prompt_formats(["End your reply with [[<n>]].", 'Finish with "#ANSWER: <n>"', "Write **Answer:** <n>."])
        (('[[{answer}]]', '[[{answer}]]'), ('#ANSWER: {answer}', '#ANSWER: {answer}'), ('**Answer:** {answer}', '**Answer:** {answer}'))
    """
    counts: Counter[tuple[str, str]] = Counter()
    for prompt in prompts:
        if prompt:
            counts.update(list(dict.fromkeys(_named(prompt))))  # a prompt counts once per container
    return tuple(form for form, _ in counts.most_common(_MAX_FORMATS))


def _named(prompt: str) -> list[tuple[str, str]]:
    """The containers one prompt names, in the order it names them."""
    found = [(match.start(), f"<{name}> tags", f"<{name}>{{answer}}</{name}>") for match in _TAG.finditer(prompt)
             for name in [match.group(1) or match.group(2) or match.group(3)]
             if name.lower() not in _KNOWN_TAGS and (match.group(3) is None or _ANSWERISH.search(name))]
    found += [(match.start(), f"\\{name}{{}}", f"\\{name}{{{{answer}}}}")
              for match in _COMMAND.finditer(prompt) if (name := match.group(1)) not in _KNOWN_COMMANDS]
    found += [(match.start(), f"{label}{separator.rstrip()}", f"{label}{separator}{{answer}}")
              for match in _LABEL.finditer(prompt) for label, separator in [match.groups()]
              if _before_placeholder(prompt, match.end()) or label.isupper() and _ANSWERISH.search(label)]
    found += [(match.start(), f'json "{key}"', f'{{"{key}": "{{answer}}"}}') for match in _JSON_KEY.finditer(prompt)
              for key in [match.group(1)] if _before_placeholder(prompt, match.end()) or _ANSWERISH.search(key)]
    found += [(match.start(), template, template) for match, template in _written_around(prompt)]
    kept: dict[str, tuple[int, str, str]] = {}
    for where, name, template in sorted(found):
        kept.setdefault(template, (where, name, template))  # one container named two ways is tried once
    # "answer: {answer}" read around the placeholder of "Final answer: <n>" is part of the label's template
    return [(name, template) for _, name, template in kept.values()
            if not any(template != other and template in other for other in kept)]


def _written_around(prompt: str) -> list[tuple[re.Match[str], str]]:
    """What the prompt writes around a placeholder, as ``(match, template)``: the quoted line it stands in
    (``"#ANSWER: <n>"``), else what is glued to it (``[[<n>]]``) with a label before it (``**Answer:** <n>``);
    never the placeholder alone, a tag the prompt closes, a box (a known format), a command's argument or a JSON
    value (read as containers of their own)."""
    found = []
    for match in _GLUED.finditer(prompt):
        placeholder = match.group(2)
        if not _PLACEHOLDER_NAME.fullmatch(placeholder[1:-1].strip()) \
                or placeholder.startswith("<") and f"</{placeholder[1:]}" in prompt:
            continue
        quoted = next((quote for quote in _QUOTED.finditer(prompt)
                       if quote.start(1) <= match.start(2) and match.end(2) <= quote.end(1)), None)
        before, after = (prompt[quote.start(1):match.start(2)], prompt[match.end(2):quote.end(1)]) if (quote := quoted) \
            else (match.group(1), match.group(3).rstrip(".,;:!?"))
        template = f"{before}{{answer}}{after}"
        if template.strip() != "{answer}" and "boxed" not in template and not _READ_OTHERWISE.search(before):
            found.append((match, template.strip()))
    return found


def _before_placeholder(prompt: str, where: int) -> bool:
    """Whether a placeholder (``<n>``, ``[answer]``, ``{answer}``, ``...``) starts at ``where``; a tag the
    prompt closes (``Wrap it: <out></out>``) is a container of its own, and maths of a question (``S = {1, 2}``)
    no placeholder."""
    found = re.match(_PLACEHOLDER, prompt[where:])
    return found is not None and f"</{found.group()[1:]}" not in prompt \
        and (found.group() in ("...", "…") or _PLACEHOLDER_NAME.fullmatch(found.group()[1:-1].strip()) is not None)
