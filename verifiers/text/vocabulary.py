"""The shared words of answer text, each spelled once and named for what it matches (patterns and tables, no logic).

Every answer reader builds its patterns from these pieces, so a command, relation or word added
here is read alike everywhere. Each ``*_COMMAND`` piece is a regex fragment that matches the
backslash and the command's name (follow it with ``\\s*\\{`` or a word boundary).

Example:
    >>> import re
    >>> bool(re.fullmatch(TEXT_COMMAND, r"\\textrm")), bool(re.fullmatch(TEXT_COMMAND, r"\\textbf"))
    (True, False)
    >>> bool(re.fullmatch(STYLED_TEXT_COMMAND, r"\\textbf")), SCALES["dozen"]
    (True, 12)
    >>> [m.group() for m in re.finditer(ORDER_COMMAND, r"x \\le 5, y \\geqslant 2, z \\left")]
    ['\\\\le', '\\\\geqslant']
"""

from __future__ import annotations

# Commands that print their braced argument as upright text: "5 \text{ cm}", "\mbox{or}", "\mathrm{m}".
# An opening or closing markup tag of any name (<answer>, </final>, <result>): what a prompt asks to wrap an answer in.
MARKUP_TAG = r"</?[A-Za-z][\w-]{0,20}>"
TEXT_COMMAND = r"\\(?:text|textrm|textnormal|mbox|mathrm)"
# The same and the styled ones (bold, italic): "\textbf{C}", "\mathit{e}".
STYLED_TEXT_COMMAND = r"\\(?:text|textrm|textnormal|mbox|mathrm|textbf|textit|mathbf|mathit)"
# A command that prints an operator's name: "\operatorname{lcm}".
OPERATOR_NAME_COMMAND = r"\\operatorname"

# An order relation as a command: "\le", "\leq", "\leqslant", "\lt" and the greater ones.
ORDER_COMMAND = r"\\(?:leqslant|geqslant|leq|geq|le|ge|lt|gt)(?![A-Za-z])"
# "Not equal" as a command: "\ne", "\neq".
NOT_EQUAL_COMMAND = r"\\neq?(?![A-Za-z])"
# Every relation an answer may state as a command: order, not equal, membership, approximation, equivalence.
RELATION_COMMAND = r"\\(?:leqslant|geqslant|leq|geq|le|ge|lt|gt|neq|ne|in|approx|equiv)(?![A-Za-z])"

# A word that scales the number before it ("1.45 million", "2 dozen"), and by how much.
SCALES: dict[str, int] = {"hundred": 100, "thousand": 1000, "million": 10 ** 6, "billion": 10 ** 9,
                          "trillion": 10 ** 12, "dozen": 12}
SCALE_WORD = "(?:" + "|".join(SCALES) + ")"

# A unit's symbol after a number ("5 km", "1000 g", "90 min"); "in", "s" and "l", common words or letters, left out.
UNIT_SYMBOL = r"(?:mm|cm|m|km|mg|g|kg|ml|sec|min|h|hr|hrs|ft|yd|mi|oz|lb|lbs)\b"
# A unit a quantity is counted in, singular or plural ("5 hours", "3 feet", "28 percent"): the
# end of an answer, never a value of its own.
UNIT_WORD = (r"(?:second|minute|hour|day|week|month|year|cent|dollar|foot|feet|inch|inches|yard|mile"
             r"|(?:centi|milli|kilo)?(?:meter|gram)|pound|ounce|liter|gallon|quart|pint|cup|dozen|percent)s?\b")
