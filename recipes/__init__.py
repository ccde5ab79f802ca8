"""referee.recipes: the GRPO recipe layer and the ``referee`` command line.

Importing this package never imports torch or TRL; the training pieces load on first use.
"""
