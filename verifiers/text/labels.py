"""Label lines: a line that only names what follows it (``**Final Answer**``, ``### Answer``, ``**Step 3: Final answer**``).

Reasoning models close a solution with a label over the answer: DeepSeek-R1 and its distills,
QwQ and the Sky-T1 models write ``**Final Answer**`` over a display box, Qwen3 in thinking mode
``### Final Answer``, o1/GPT-4o-style outputs ``**Final Answer:**``, InternLM ``**Conclusion:**``,
PRM800K ``# Answer``, step-by-step answers ``**Step 3: Final answer**``. A label introduces the
answer below it: it is never an answer of its own, and never a second final statement that
competes with the one it labels. Every answer domain asks :func:`is_label` before it reads a
bold span, a heading or a ``####`` line as a statement.
"""

from __future__ import annotations

import re

# The words a label is made of, in the languages the answer readers know: a label names the part
# of the solution below it ("Final Answer", "Conclusion", "Summary", "Result", "Réponse finale",
# "最终答案"), with at most an article, a possessive or "the" and "and" between them.
_LABEL_WORDS = (r"final|the|our|my|and|answers?|conclusions?|summary|results?|solutions?|verification|thus"
                r"|therefore|hence|short|r[ée]ponse|finale|antwort|endg[üu]ltige|respuesta|resposta|risposta"
                r"|conclusi[oó]n|resumen|r[ée]sultat|ergebnis|fazit|zusammenfassung")
_LABEL_RE = re.compile(rf"(?:(?:{_LABEL_WORDS})\b[\s,]*)+", re.IGNORECASE)
_CHINESE_LABEL_RE = re.compile(r"(?:【\s*)?(?:(?:最终|最後|最后)?(?:答案|结论|結論|总结|總結|解答|答|解析|分析|详解|詳解|解)"
                               r"|(?:步骤|步驟|第)\s*[0-9一二三四五六七八九十]+\s*步?)(?:\s*】)?")
# "Step 3", "Step 3 (final answer)", "Part (b)", "Case 2": an enumerated heading, whatever words follow it.
_STEP_RE = re.compile(r"(?:step|part|case|stage|phase)\s*(?:[0-9]+|\(?[a-z]\)?|[ivx]+)\b", re.IGNORECASE)
_DRESS_RE = re.compile(r"^[\s#>*_]*|[\s*_:：.\-—–]*$")  # markdown around a label, and its closing colon


def is_label(text: str) -> bool:
    """Whether ``text`` (a bold span, a heading or a line, markdown and all) only labels what follows it.

    A label is made of label words (``Final Answer``, ``Answer``, ``Conclusion``, ``Summary``,
    ``Result``, ``Solution``, in any case, in the languages the readers know) with or without a
    colon, or is an enumerated heading (``Step 3: Final answer``, ``Step 2: Add the costs``,
    ``Part (b)``) whose words hold no value. A line that states a value (``**18**``,
    ``**Answer: 18**``, ``**Step 3: 18**``) is never a label.

    Example:
        >>> [is_label(t) for t in ("**Final Answer**", "### Final Answer:", "Conclusion", "**Step 3: Final answer**")]
        [True, True, True, True]
        >>> [is_label(t) for t in ("**最终答案**", "【解析】", "**答案：**", "### 步骤 2")]
        [True, True, True, True]
        >>> [is_label(t) for t in ("**18**", "Answer: 18", "Tuesday", "Step 3: 18", "**Yes**")]
        [False, False, False, False, False]
    """
    content = _undressed(text)
    # every label starts on a letter (a label word, "Step", a Chinese word) or on "【"
    if not content or len(content) > 80 or not (content[0].isalpha() or content[0] == "【"):
        return False
    step = _STEP_RE.match(content)
    if step is not None:
        rest = content[step.end():]
        return re.search(r"[0-9=$\\]", rest) is None
    return _LABEL_RE.fullmatch(content) is not None or _CHINESE_LABEL_RE.fullmatch(content) is not None


def _undressed(text: str) -> str:
    """``text`` without the markdown before it and the colon or dots after it: ``_DRESS_RE.sub("", text)``
    written with ``str.strip`` (whose whitespace is the regex's ``\\s``), many times faster."""
    while True:
        stripped = text.lstrip().lstrip("#>*_")
        if stripped == text:
            break
        text = stripped
    while True:
        stripped = text.rstrip().rstrip("*_:：.-—–")
        if stripped == text:
            return text
        text = stripped


_LINE_OPENING_RE = re.compile(r"\n[ \t]*(?:\$\$|\$|\\\[|\\\()?[ \t]*$")  # a line that opens with the statement


def opens_line(text: str, position: int) -> bool:
    """Whether the statement at ``position`` opens its line, but for maths delimiters (``\\[ \\boxed{3} \\]``).

    Example:
        >>> opens_line("Sum:\\n\\\\[\\\\boxed{3}\\\\]", 7), opens_line("So $\\\\boxed{3}$", 4)
        (True, False)
    """
    return position == 0 or _LINE_OPENING_RE.search(text, max(0, position - 8), position) is not None
