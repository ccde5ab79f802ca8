"""The plain-text floor every answer reader shares: LaTeX structure, exact numbers, how a text ends, the shared vocabulary.

``latex`` (boxes, maths delimiters, bracket depth, top-level splits), ``numbers`` (numbers as
people write them, read as exact rationals), ``prose`` (cut-off sentences, closing remarks,
hedges, numbers written in prose) and ``vocabulary`` (the shared words, each spelled once).
Nothing here imports anything else of ``referee.verifiers``.
"""
