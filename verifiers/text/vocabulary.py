"""The shared words of answer text, each spelled once and named for what it matches (no logic here)."""

from __future__ import annotations

# A unit a quantity is counted in, singular or plural ("5 hours", "3 feet", "28 percent"): the
# end of an answer, never a value of its own.
UNIT_WORD = (r"(?:second|minute|hour|day|week|month|year|cent|dollar|foot|feet|inch|inches|yard|mile"
             r"|(?:centi|milli|kilo)?(?:meter|gram)|pound|ounce|liter|gallon|quart|pint|cup|dozen|percent)s?\b")
