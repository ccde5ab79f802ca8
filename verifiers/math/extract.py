"""Reading the final answer a maths completion states, and which rule read it.

Plain string work, linear in the text, safe in the trainer's own process. The rules, in order
of precedence (the first that reads something wins; ``Extraction.source`` names it):

1. ``bare``: the whole completion is an answer and nothing else (``42``, ``\\frac{1}{2}``,
   ``(1,2)``, ``x^2+2x+1``, ``\\text{odd}``, ``E``, a matrix, ``28 percent``): what golden files
   hold, what an ``<answer>`` tag holds once a trainer strips it, what terse models write.
2. ``answer tag``: the last ``<answer>...</answer>``; its content is read with the rules below,
   else taken whole; a sentence in it gives the number it states, not one of its qualifying
   phrases (``There are 2 primes between 30 and 40`` reads ``2``).
3. ``boxed``: the last ``\\boxed{}`` / ``\\fbox{}``; boxes joined by ``,``, ``and`` or spacing
   (``\\boxed{-1}$ and $\\boxed{-9}``, ``\\boxed{(2, 2)} \\quad \\text{and} \\quad \\boxed{(6, 2)}``)
   are one answer. A later *final answer* phrase, or an ``Answer:`` label that opens a line,
   overrides a box (the hedge policy then holds the box to the same gold).
4. ``final answer``: ``The final answer is $X$``, ``Answer: X``, ``**Answer:** X``,
   ``The correct option is (C)``, Chinese markers (``【答案】``, ``答案是``, ``故答案为``, ``答：``,
   final answers) and other languages' labels (``Réponse :``, ``Antwort:``, ``Respuesta:``); after
   the phrase, plain LaTeX whole (``2\\sqrt{3}``, ``(1,3)``), a choice letter (``The answer is B.``),
   a number in words (``six``), a word answer that ends the text (``Tuesday``), a leading yes or no
   (``The answer is no.``, not ``yes, since $x = 3$``); when the phrase
   is followed by a sentence (``Final Answer: The largest $n$ is 34.``) the number it states.
   An answer heading (PRM800K's ``# Answer``, ``## Final Answer``) over a paragraph that is only
   an answer reads that paragraph.
5. ``bold``: the last ``**X**`` whose content is an answer (``**6**``, ``**$7.00**``), or the
   value of a bold sentence that ends the text (``**There are 63 points.**``); never a heading
   (``**Step 2:**``, ``**Calculation**:``).
6. ``math span`` / ``last number``: whichever comes last in the text, the last ``$...$``,
   ``\\(...\\)``, ``\\[...\\]`` that states a value (not a bare mention such as ``\\(n\\)``, not
   prose caught between two dollar signs; spans joined by ``,`` / ``and`` are one answer), or
   a value in LaTeX outside delimiters (``So each part is \\frac{2}{5} tons.``), or the last
   number written in prose (``So it took James 2 hours.``, any script's decimal digits, never a
   superscript: ``m⁻²``; ``12π``, ``3√13``, ``2^10``, ``1.45 million``). A remark after the answer is skipped (``Check: ...``,
   ``x = 2 because ...``, ``8 limbs (5 arms and 3 legs).``, ``12π ≈ 37.7``, ``227 minutes, or 3
   hours and 47 minutes``); a completion cut off mid-sentence (:func:`looks_cut_off`) has no answer.

A final answer (rules 2-5) always beats a number met earlier in the reasoning; the fallbacks
of rule 6 apply only when no final answer exists.

Besides the answer, ``Extraction.group`` holds every answer boxed in the last paragraph when
the completion boxes several there (``The maximum is \\boxed{3}, the minimum \\boxed{1}``):
the maths verifier compares it when the gold itself has several elements.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from ..text.hedging import ANSWER_HEADING_RE, after_reasoning, negates_an_answer
from ..text.labels import is_label
from ..text.latex import boxed_spans, last_plain_latex_value, math_spans, strip_math_delimiters
from ..text.numbers import leading_number_words
from ..text.prose import HEDGE, before_modifier, last_prose_number, looks_cut_off, stated_number, without_closing_remark
from ..text.vocabulary import (MARKUP_TAG, NOT_EQUAL_COMMAND, OPERATOR_NAME_COMMAND, ORDER_COMMAND, STYLED_TEXT_COMMAND,
                               UNIT_WORD)

Source = Literal["bare", "answer tag", "boxed", "final answer", "bold", "math span", "last number"]

_OPEN_TAG_RE = re.compile(r"<answer>", re.IGNORECASE)
_CLOSE_TAG_RE = re.compile(r"</answer>", re.IGNORECASE)

# "Answer" in the languages models answer in besides English, as a label: "Réponse :", "Antwort:", "Respuesta:".
_FOREIGN_ANSWER = r"r[ée]ponse(?:\s+finale)?|antwort|respuesta(?:\s+final)?|resposta(?:\s+final)?|risposta(?:\s+finale)?"
# Chinese answer markers: "【答案】", "答案是", "故答案为", "答案：", and "答：" (not "回答："): a final statement.
_CHINESE_ANSWER = r"【\s*答案\s*】|答案\s*(?:是|为|為|应为|應為|[:：])|(?<![\u4e00-\u9fff])答\s*[:：]"
_ENGLISH_PHRASE = r"(?P<final>final\s+)?answer|(?P<option>(?:correct|right)\s+(?:option|choice))"
_PHRASE_RE = re.compile(rf"\b(?:{_ENGLISH_PHRASE}|{_FOREIGN_ANSWER})\b"
                        r"[ \t*_]*(?P<mark>is\b|:)[ \t*_:]*" rf"|(?P<chinese>{_CHINESE_ANSWER})[ \t*_:：]*", re.IGNORECASE)
# The same without the other languages (the same groups: "chinese" never matches), for the texts that
# hold none of their words: most texts, scanned at the English pattern's speed.
_ENGLISH_PHRASE_RE = re.compile(rf"\b(?:{_ENGLISH_PHRASE})\b[ \t*_]*(?P<mark>is\b|:)[ \t*_:]*(?P<chinese>(?!))?",
                                re.IGNORECASE)
_OTHER_LANGUAGE_HINTS = ("答", "ponse", "PONSE", "ntwort", "NTWORT", "espuesta", "ESPUESTA", "esposta", "ESPOSTA",
                         "isposta", "ISPOSTA")
_CHOICE_RE = re.compile(r"^(?!I\s+[a-z])\(?[A-J]\)?(?:[\s.:,;]|$)")
# "The answer is 1, no matter how ...": the value that leads the last sentence, followed by an
# elaboration (never "or", "no", "then": alternatives, corrections and hypotheses stay unread; "which means"
# only where no correction follows: "9, which means the answer is actually 10" is not 9).
_LEADING_VALUE_RE = re.compile(r"^(?P<value>[-+\u2212]?(?:\\?\$)?[0-9]+(?:,[0-9]{3})*(?:\.[0-9]+)?(?:/[0-9]+)?(?:\s?\\?%)?)"
                               r"(?=,?\s+(?:because|since|which\s+is|no\s+matter|which\s+means(?![^.]*\b(?:actually|wrong|incorrect|instead|not|mistake|answer)\b))\b)")
# A choice letter that leads the answer: "B", "(B)", "B) 12", "C because ...".
_LEADING_CHOICE_RE = re.compile(r"^(?P<choice>\(?[A-J]\)?)(?=$|[.,;:)]|\s+(?:because|since|as|as\s+\w+|which|\S*[0-9]))")
_YES_NO_RE = re.compile(r"(?i:yes|no)(?=$|[.,;:!](?:\s|$))")  # a yes or no that leads an answer, not "no longer"
_MATHS_HINT_RE = re.compile(r"[0-9$\\]")
_WORD_ANSWER_RE = re.compile(r"[A-Za-z][A-Za-z'-]*(?: [A-Za-z][A-Za-z'-]*){0,3}")
_ARTICLES = frozenset({"a", "an", "the"})
_VERDICT_WORDS = frozenset(
    "correct right wrong incorrect reasonable consistent valid verified confirmed plausible accurate sensible fine good "
    "clear unique same as not that this it above below obtained found shown complete done given simply indeed "
    "therefore thus straightforward".split())
_SUPPOSED_RE = re.compile(r"\b(?:suppose|assume|assuming|if|whether|maybe|perhaps|not)\b", re.IGNORECASE)
_HYPOTHESIS_RE = re.compile(r"\b(?:suppose|assume|assuming|if|guess|maybe|perhaps|say|think|whether)\b", re.IGNORECASE)
# After a plain "answer is" only maths counts ("so our answer is correct" is not an answer).
_MATHS_START_RE = re.compile(r"[-+\u2212$\\(\[{0-9.]")
# Where the answer after a phrase ends; a bold sentence's close too ("**The answer is 9.** This means 2007 ...").
# A number in scientific notation, with a unit after it or not: "5.89 × 10⁻⁷ meters", "3 \times 10^{8} m/s".
_SCIENTIFIC_ANSWER_RE = re.compile(r"[-+\u2212]?[0-9]+(?:\.[0-9]+)?\s*(?:×|\\times|\\cdot)\s*10\s*"
                                   r"(?:\^\s*\{?\s*[-+\u2212]?[0-9]{1,3}\s*\}?|[⁻⁺]?[⁰¹²³⁴⁵⁶⁷⁸⁹]{1,3})"
                                   r"(?:\s*(?:\\text\{[^{}]*\}|[A-Za-zÅμΩ]{1,12}(?:\s*/\s*[A-Za-zÅμΩ]{1,8})?)(?:\^\{?-?[0-9]\}?)?)?$")
# A command of the prompt's answer format around the value that ends the text (``\answer{73}``, ``\final{73}.``).
_CLOSING_COMMAND_RE = re.compile(r"\\[A-Za-z]{2,30}\{(?P<value>[^{}\n\\]{1,60})\}[\s.$]*$")
_MARKUP_TAG_RE = re.compile(MARKUP_TAG)
# "72, not 73", "72 (not 73)", "72, rather than 73": what follows the answer only says what it is not.
_CONTRAST_TAIL_RE = re.compile(r"(?:\s*,\s*|\s*\(\s*)(?:but\s+)?(?:not|rather\s+than|instead\s+of)\s+[^,;()\n]*\)?$",
                               re.IGNORECASE)
_PHRASE_TAIL_RE = re.compile(r"(?:(?<![ie]\.[eg])\.\s|\n|\.?\s*I hope it is correct|\.$|[。；，]|(?<=\S)\.\*\*(?=\s|$))", re.IGNORECASE)
_PHRASE_SPAN_LIMIT = 300
_MAX_PHRASES = 64  # the last answer phrases tried: a text of thousands of unreadable ones has none

# Between two answers that are one answer: delimiters, spacing, commas and "and" only.
_JOIN_NOISE_RE = re.compile(rf"(?:\\q?quad|{STYLED_TEXT_COMMAND})\b|" r"\\[,;:! ]|\\\(|\\\)|\\\[|\\\]|[${}\s,;.&]")
_JOIN_WORD_RE = re.compile(r"^(?:and|和|与|與|及|、|，)?$", re.IGNORECASE)
_INEQUALITY_RE = re.compile(rf"<|>|{ORDER_COMMAND}|{NOT_EQUAL_COMMAND}|[≤≥≠]")
_PARAGRAPH_END_RE = re.compile(r"[.!?]\s*\n\s*\n")  # a sentence that ends a paragraph: what follows is new
_LOOSE_GAP = 240  # characters of prose between boxes of one paragraph that still group
_MAX_GROUP = 8

_OR_BETWEEN_RE = re.compile(r"(?<![\\A-Za-z])or(?![A-Za-z])", re.IGNORECASE)
_SENTENCE_BREAK_RE = re.compile(r"[.!?](?:\s|$)")
_RESTATED_RE = re.compile(r"\bor\s*,?\s*(?:equivalently|simply|in\s+other\s+words|written\s+as|expressed\s+as|as\s+a)\b",
                          re.IGNORECASE)
_UNIT_AFTER_ANSWER_RE = re.compile(rf"[\s$)\\]*(?:text\s*\{{\s*)?{UNIT_WORD}", re.IGNORECASE)

_BOLD_RE = re.compile(r"\*\*([^*\n]{1,80})\*\*")
_BOLD_COUNT_RE = re.compile(r"(?P<number>[0-9]{1,3}(?:,[0-9]{3})+|[0-9]+)\s+[A-Za-z][A-Za-z -]{0,40}")  # "**1680 distinct**"
_CONCLUDING_RE = re.compile(r"\b(?:therefore|thus|hence|so|in\s+total|altogether|in\s+all|in\s+conclusion|there\s+(?:are|is)"
                            r"|the\s+(?:final\s+)?answer|the\s+total|we\s+(?:get|have|obtain|find))\b", re.IGNORECASE)
_ENUMERATOR_RE = re.compile(r"^\s*(?:[0-9]+|[A-Za-z])[.)]\s*$")

# A bare answer: maths with at most a few words that are part of answers.
_COMMAND_RE = re.compile(rf"\\(?:begin|end)\s*\{{[^{{}}]*\}}|(?:{STYLED_TEXT_COMMAND}|{OPERATOR_NAME_COMMAND})\s*\{{[^{{}}]*\}}|\\[A-Za-z]+")
_WORD_RE = re.compile(r"[^\W\d_]{3,}")
_ANSWER_WORDS = frozenset({"and", "percent", "pct", "percentage", "or"})
_SHORT_WORD_RE = re.compile(r"(?<![A-Za-z\\])(?:so|is|it|to|of|in|on|at|we|be|as|by|if|an|do|no|my|he|us|am)(?![A-Za-z])",
                            re.IGNORECASE)
_SCRIPT_WORD_RE = re.compile(r"[^\W\d_a-zA-Z]{2}")  # two letters of a script other than Latin
_MATHS_CHAR_RE = re.compile(r"[0-9\\^_=+\-*/()\[\]{}<>|]")
_BARE_LIMIT = 400

# A mention, not a value: a variable, a function of variables, a point or segment name.
_MENTION_RE = re.compile(
    r"^\s*(?:[A-Za-z](?:_\{?[A-Za-z0-9]+\}?)?(?:\^\{?[A-Za-z]\}?)?(?:\([A-Za-z, ]*\))?|[A-Z]{2,4}"
    r"|\\(?:angle|triangle|overline|mathcal|mathbb)\s*\{?[A-Za-z]{1,4}\}?)\s*$"
)



@dataclass(frozen=True)
class Extraction:
    """The final answer read from a completion, by which rule, and any answers stated with it.

    Example:
        >>> Extraction("18", "boxed").source
        'boxed'
    """

    text: str
    source: Source
    group: str | None = None  # several answers boxed in the last paragraph, joined with ", "


# ---------------------------------------------------------------------------------------------
# Pieces


def prose_words(text: str) -> list[str]:
    """Words of three or more letters outside LaTeX commands and ``\\text{}`` blocks.

    Example:
        >>> prose_words(r"\\text{so} x = 5 meters and \\frac{1}{2}")
        ['meters', 'and']
    """
    return _WORD_RE.findall(_COMMAND_RE.sub(" ", text))


def is_bare_answer(text: str) -> bool:
    """Whether ``text`` is only an answer: one token, or maths with no words but ``and``/``percent``.

    Example:
        >>> [is_bare_answer(t) for t in ("42", r"\\frac{1}{2}", "(1,2)", "E", "28 percent", r"\\text{odd}")]
        [True, True, True, True, True, True]
        >>> [is_bare_answer(t) for t in ("no idea", "So the answer is 4.", r"\\boxed{4}", "", "<final>4</final>")]
        [False, False, False, False, False]
    """
    text = text.strip()
    if not text or len(text) > _BARE_LIMIT or "\\boxed" in text or "\\fbox" in text:
        return False
    if "<" in text and _MARKUP_TAG_RE.search(text):  # "<final>72</final>": the value inside is read
        return False
    if _SCRIPT_WORD_RE.search(text):  # "所以答案是12。", "解：联立 ... 【答案】(1,3)": a sentence of a script without spaces
        return False
    if not any(char.isspace() for char in text):
        return True
    if "\n\n" in text or not _MATHS_CHAR_RE.search(text):
        return False
    if _SHORT_WORD_RE.search(_COMMAND_RE.sub(" ", text)):
        return False  # "So 7.", "x is 5": a sentence
    return all(word.lower() in _ANSWER_WORDS for word in prose_words(text))


def is_mention(text: str) -> bool:
    """Whether ``text`` names something rather than stating a value (``n``, ``f(x)``, ``a_n``, ``AB``).

    Example:
        >>> is_mention("f(x)"), is_mention(r"\\triangle ABC"), is_mention("12"), is_mention("x + 1")
        (True, True, False, False)
    """
    return _MENTION_RE.match(text) is not None


def _is_value(content: str) -> bool:
    """Whether a maths span's content states a value: not empty, not a mention, not prose."""
    content = content.strip().rstrip(".,;")
    if not content or is_mention(content):
        return False
    return len(prose_words(content)) < 2 or "=" in content and "\n" not in content  # "Total\ Cost = \$300"


def _joined(text: str, first_end: int, second_start: int) -> bool:
    """Whether the text between two answers joins them into one (``,``, ``and``, spacing)."""
    between = text[first_end:second_start]
    return len(between) <= 80 and bool(_JOIN_WORD_RE.match(_JOIN_NOISE_RE.sub("", between))) \
        and not _PARAGRAPH_END_RE.search(between)


def _offered_instead(text: str, first_end: int, second_start: int) -> bool:
    """Whether the text between two answers offers the second as an alternative: ``or`` alone, or
    within the sentence (``\\boxed{3} books, or \\boxed{6} if ...``), unless the second restates
    the first (``\\boxed{2} hours, or \\boxed{120} minutes``, ``or equivalently``)."""
    between = text[first_end:second_start]
    if len(between) > 80 or _PARAGRAPH_END_RE.search(between):
        return False
    return _JOIN_NOISE_RE.sub("", between).lower() == "or" or (
        _OR_BETWEEN_RE.search(between) is not None and not _SENTENCE_BREAK_RE.search(between)
        and not _UNIT_AFTER_ANSWER_RE.match(between) and not _RESTATED_RE.search(between))


def _joined_run(text: str, parts: list[tuple[int, int, str]]) -> tuple[int, str]:
    """Start and joined content of the last run of answers joined by ``_joined``."""
    start, end, content = parts[-1]
    contents = [content.strip()]
    for previous in reversed(parts[:-1]):
        if previous[1] > start or not _joined(text, previous[1], start):
            break
        if bool(_INEQUALITY_RE.search(previous[2])) != bool(_INEQUALITY_RE.search(contents[0])):
            break  # "Since $x > 0$, $x = 3$": a condition, then the answer
        contents.insert(0, previous[2].strip())
        start = previous[0]
    if len(contents) == 1:
        return start, contents[0]
    return start, ", ".join(part.strip(", ") for part in contents)  # "$-1, 0,$ and $1$"


def _last_answer_run(text: str, parts: list[tuple[int, int, str]]) -> tuple[int, str]:
    """:func:`_joined_run`, with the answers offered before it as alternatives joined by ``HEDGE``
    (``\\boxed{5} or \\boxed{7}``, ``$x < 2$ or $x > 3$``)."""
    start, content = _joined_run(text, parts)
    for previous in reversed([part for part in parts if part[1] <= start]):
        if not _offered_instead(text, previous[1], start):
            break
        start, content = previous[0], f"{previous[2].strip()}{HEDGE}{content}"
    return start, content


def last_boxed(text: str) -> tuple[int, str, str | None] | None:
    """Start and content of the last boxed answer (joined boxes read together), and the paragraph's group.

    Example:
        >>> last_boxed(r"roots $\\boxed{1}$ and $\\boxed{2}$")[1:]
        ('1, 2', None)
        >>> last_boxed(r"The maximum is \\boxed{3}, the minimum is \\boxed{1}.")[1:]
        ('1', '3, 1')
        >>> last_boxed(r"$\\boxed{5}$ or $\\boxed{7}$")[1]  # alternatives: a hedge, unless they are equal
        '5 ⟪or⟫ 7'
    """
    spans = [span for span in boxed_spans(text) if span[2].strip()]
    if not spans:
        return None
    start, content = _last_answer_run(text, spans)
    group = [spans[-1]]
    for previous in reversed(spans[:-1]):
        gap = text[previous[1]:group[0][0]]
        if len(group) >= _MAX_GROUP or len(gap) > _LOOSE_GAP or "\n\n" in gap or re.search(r"\bor\b", gap):
            break
        group.insert(0, previous)
    joined_group = ", ".join(part[2].strip() for part in group) if len(group) > 1 else None
    return start, content, joined_group if joined_group != content else None


def _value_in_sentence(sentence: str) -> str | None:
    """The value a sentence states: its last maths value or number, whichever comes last."""
    spans = [(start, end, content) for start, end, content in math_spans(sentence) if _is_value(content)]
    span_end = spans[-1][1] if spans else 0
    number = stated_number(sentence, span_end)  # "42 apples in 6 boxes" states 42
    if number is not None:
        return number[1]
    if spans:
        return _joined_run(sentence, spans)[1]
    return None


@lru_cache(maxsize=256)  # the hedge stage asks again of the same text, once per statement it weighs
def _last_phrase(text: str, *, final_only: bool = False) -> tuple[int, str] | None:
    """Start and answer of the last answer phrase (``The final answer is $X$``, ``Answer: X``)."""
    pattern = _PHRASE_RE if any(hint in text for hint in _OTHER_LANGUAGE_HINTS) else _ENGLISH_PHRASE_RE
    for phrase in reversed(list(pattern.finditer(text))[-_MAX_PHRASES:]):
        if final_only and not (phrase.group("final") or phrase.group("chinese") or _labels_a_line(text, phrase)):
            continue
        rest = text[phrase.end():phrase.end() + _PHRASE_SPAN_LIMIT]
        spans = math_spans(rest)
        if spans and spans[0][0] == 0:
            answer = spans[0][2]
            for previous, following in zip(spans, spans[1:]):  # "The final answer is $5$ or $7$."
                if not _offered_instead(rest, previous[1], following[0]):
                    break
                answer = f"{answer}{HEDGE}{following[2]}"
        else:
            tail = _PHRASE_TAIL_RE.search(rest)
            answer = rest[:tail.start()] if tail else rest
        answer = strip_math_delimiters(_unemphasised(answer).rstrip(".。").strip())
        boxes = boxed_spans(answer)
        if len(boxes) == 1 and not answer[:boxes[0][0]].strip():  # "The final answer is $\boxed{(0, 3]}$": the box
            answer = boxes[0][2].strip()
        if not answer or answer.lower().startswith("not ") or negates_an_answer(answer):
            continue
        answer = _CONTRAST_TAIL_RE.sub("", answer) or answer
        if phrase.group("option"):  # "The correct option is (C) Plane."
            if _CHOICE_RE.match(answer):
                return phrase.start(), answer
            continue
        final = bool(phrase.group("final") or phrase.group("chinese"))  # "故答案为" concludes, as "final answer" does
        colon = final or ":" in phrase.group()  # "Answer: X", "The answer is: X"
        choice = _LEADING_CHOICE_RE.match(answer)
        if choice and not _SUPPOSED_RE.search(text, _sentence_start_before(text, phrase.start()), phrase.start()):
            return phrase.start(), choice.group("choice")  # "The answer is B.", "I think the answer is C because ..."
        words = leading_number_words(answer)
        if words is not None:
            return phrase.start(), str(words)  # "The answer is six."
        yes_no = _YES_NO_RE.match(answer)
        if yes_no and not _MATHS_HINT_RE.search(answer, yes_no.end()):  # "yes, since $x = 3$" states x = 3
            return phrase.start(), yes_no.group()  # "The answer is no.", "Final answer: No, it is impossible."
        if _SCIENTIFIC_ANSWER_RE.match(answer):
            return phrase.start(), answer  # "The answer is 5.89 × 10⁻⁷ meters."
        if not is_bare_answer(answer):
            leading = _LEADING_VALUE_RE.match(answer)
            if leading and _concludes_at(text, phrase.start(), phrase.end() + len(answer)):
                return phrase.start(), leading.group("value")
            if _word_answer_ends(text, phrase, answer):
                return phrase.start(), answer  # "The answer is the isosceles triangle."
            if not colon:
                continue
            answer = _value_in_sentence(answer)
            if answer is None:
                continue
        elif not (colon or _MATHS_START_RE.match(answer) or _word_answer_ends(text, phrase, answer)):
            continue
        return phrase.start(), answer
    return None


def is_word_answer(text: str, *, gold: bool = False) -> bool:
    """Whether ``text`` is an answer in words (``Tuesday``, ``the isosceles triangle``): at most four
    words, none a short function word (``is``, ``to``) or, in a completion, a verdict on the work
    (``correct``, ``reasonable``; a ``gold`` may say ``right triangle``).

    Example:
        >>> is_word_answer("the isosceles triangle"), is_word_answer("correct"), is_word_answer("unknown to us")
        (True, False, False)
        >>> is_word_answer("right triangle"), is_word_answer("right triangle", gold=True)
        (False, True)
    """
    words = text.lower().split()
    return bool(_WORD_ANSWER_RE.fullmatch(text)) and (gold or not _VERDICT_WORDS.intersection(words)) \
        and not _SHORT_WORD_RE.search(text) and words[-1] not in _ARTICLES


def _word_answer_ends(text: str, phrase: re.Match[str], answer: str) -> bool:
    """Whether a plain ``The answer is X.`` gives a word answer (:func:`is_word_answer`) that ends the text."""
    return is_word_answer(answer) and not text[phrase.end() + len(answer):].strip(" \t\n.!*_$")


def _labels_a_line(text: str, phrase: re.Match[str]) -> bool:
    """Whether ``phrase`` is a label that opens its line (``Answer: D``, ``**Answer: D**``): a statement, never a check."""
    line_start = text.rfind("\n", 0, phrase.start()) + 1
    return ":" in phrase.group() and not text[line_start:phrase.start()].strip(" \t*#_>")


def _sentence_start_before(text: str, start: int) -> int:
    """Where the sentence around ``start`` begins, looking back at most a phrase's span (linear over many phrases)."""
    window = max(0, start - _PHRASE_SPAN_LIMIT)
    return max(text.rfind(". ", window, start), text.rfind("\n", window, start), window - 1) + 1


def _concludes_at(text: str, start: int, end: int) -> bool:
    """Whether the sentence around ``text[start:end]`` concludes the text: no hypothesis before it
    in its sentence (``Suppose the answer is 4, ...``) and no number after it."""
    after = text[end:]
    return not _HYPOTHESIS_RE.search(text, _sentence_start_before(text, start), start) and not re.search(r"[0-9]", after[after.find(".") + 1:]
                                                                                      if "." in after else "")


def _unemphasised(text: str) -> str:
    """``text`` without Markdown emphasis around it (``**$1,200**`` -> ``$1,200``)."""
    return text.strip().strip("*_").strip()


def _last_bold(text: str) -> str | None:
    """The last bold answer (``**6**``), or the value of a bold sentence that closes the text
    (``**There are 63 points.**``); headings (``**Step 2:**``, ``**Calculation**:``) are passed over."""
    if "**" not in text:
        return None
    closing = text.rstrip()
    for bold in reversed(list(_BOLD_RE.finditer(text))):
        content = bold.group(1).strip()
        if _ENUMERATOR_RE.match(content) or content.endswith(":") or text.startswith(":", bold.end()) or is_label(content):
            continue  # a heading: "**Step 2:**", "**Calculation**:", "**Final Answer**"
        content = strip_math_delimiters(content.rstrip(".").strip())
        if content.startswith("$") and content.count("$") == 1:  # a price
            content = content[1:]
        if is_bare_answer(content):
            return content
        count = _BOLD_COUNT_RE.fullmatch(content)
        if count and "\n\n" not in text[bold.end():].rstrip() and _concludes_at(text, bold.start(), bold.end()) \
                and _CONCLUDING_RE.search(text, _sentence_start_before(text, bold.start()), bold.start()):
            return count.group("number")  # "Therefore, there are **1680 distinct** arrangements of the 2 ..."
        if bold.end() >= len(closing.rstrip(".")) - 1:  # a bold sentence that ends the text states the answer
            return _value_in_sentence(content)
    return None


def _fallback(text: str, statement: bool = False) -> Extraction | None:
    """The last value stated in maths or in prose, whichever comes last, before any closing remark;
    none in a completion that :func:`looks_cut_off`. In a ``statement`` (an answer tag's sentence)
    the number it states (:func:`stated_number`), not one of its qualifying phrases."""
    if looks_cut_off(text):
        return None
    trimmed = without_closing_remark(text)
    if trimmed is not text:
        found = _last_value(trimmed, statement)
        if found is not None:
            return found
    return _last_value(text, statement)


def _last_value(text: str, statement: bool = False) -> Extraction | None:
    spans = [span for span in math_spans(text) if _is_value(span[2])]
    start = spans[-1][1] if spans else 0
    number = stated_number(text, start) if statement else last_prose_number(text, start)
    latex = last_plain_latex_value(text, start)  # "So each part is \frac{2}{5} tons.": maths without delimiters
    command = _CLOSING_COMMAND_RE.search(text, start)  # "\answer{73}": a format's command ends the text
    if command is not None and (latex is None or latex[1] <= command.start()) and any(map(str.isdigit, command["value"])):
        return Extraction(command["value"].strip(), "last number")
    if latex is not None and (number is None or number[0] < latex[1]):  # the later of the two
        return Extraction(latex[2], "math span")
    if number is not None:
        if HEDGE not in number[1] and not statement:
            number = before_modifier(text, number[0]) or number
        return Extraction(number[1], "last number")
    if spans:
        return Extraction(_last_answer_run(text, spans)[1], "math span")
    return None


def answer_under_heading(text: str) -> tuple[int, str] | None:
    """Start and answer of the last answer heading whose paragraph below is only an answer
    (PRM800K's ``# Answer`` then the answer), else ``None``; a heading over a sentence
    (``## Answer`` then ``The answer is ...``) leaves the sentence to the answer phrases.

    Example:
        >>> answer_under_heading("We add them.\\n\\n# Answer\\n\\n\\\\{1, 2\\\\}")
        (14, '\\\\{1, 2\\\\}')
    """
    for heading in reversed(list(ANSWER_HEADING_RE.finditer(text))):
        below = text[heading.end():].strip().split("\n\n")[0]
        answer = strip_math_delimiters(_unemphasised(below).rstrip(".").strip())
        if answer and is_bare_answer(answer):
            return heading.start(), answer
    return None


def _extract_plain(text: str, statement: bool = False) -> Extraction | None:
    if is_bare_answer(text):
        return Extraction(strip_math_delimiters(_unemphasised(text)).rstrip(".").strip() or text.strip(), "bare")
    boxed = last_boxed(text)
    # Only a "final answer" phrase, or a label that opens a line ("**Answer: D**"), overrides an
    # earlier box: "so our answer is ..." after a box is usually the check of that answer.
    phrase = _last_phrase(text, final_only=boxed is not None)
    heading = answer_under_heading(text)
    if heading and (phrase is None or heading[0] > phrase[0]) and (boxed is None or heading[0] > boxed[0]):
        return Extraction(heading[1], "final answer")
    if boxed and (phrase is None or boxed[0] >= phrase[0]):
        return Extraction(boxed[1], "boxed", boxed[2])
    if phrase:
        return Extraction(phrase[1], "final answer")
    bold = _last_bold(text)
    if bold is not None:
        return Extraction(bold, "bold")
    return _fallback(text, statement)


def extract_answer(completion: str, *, after_think: bool = False) -> Extraction | None:
    """The final answer stated by a completion, or ``None`` when it states none.

    Rules in the module's order of precedence. With ``after_think=True`` only the text after
    the last ``</think>`` is read, and a think block left open means no answer.

    Example:
        >>> extract_answer(r"so $x = \\frac{1}{2}$ and \\boxed{\\frac{1}{2}}.")
        Extraction(text='\\\\frac{1}{2}', source='boxed', group=None)
        >>> extract_answer("Final Answer: The final answer is $18$. I hope it is correct.").text
        '18'
        >>> extract_answer("<think>2+2</think><answer>4</answer>").source
        'answer tag'
        >>> extract_answer("So it took James 2 hours to walk to the store.").text
        '2'
        >>> extract_answer(r"\\frac{1}{2}").source, extract_answer("I am not sure.") is None
        ('bare', True)
    """
    if after_think:
        answer_part = after_reasoning(completion)
        if answer_part is None:
            return None
        completion = answer_part
    tags = list(_OPEN_TAG_RE.finditer(completion))
    if tags:
        close = _CLOSE_TAG_RE.search(completion, tags[-1].end())
        content = completion[tags[-1].end():close.start() if close else len(completion)]
        inner = _extract_plain(content, statement=True)
        if inner is not None:
            return Extraction(inner.text, "answer tag", inner.group)
        content = strip_math_delimiters(content)
        if content:
            return Extraction(content, "answer tag")
    return _extract_plain(completion)
