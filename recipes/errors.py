"""``RecipeError``: a user's mistake in a recipe, its config or its data (torchtune's ``ConfigError`` model).

The recipe loader, config validation and the dataset loaders raise it with one sentence that
names the bad value and the fix; ``referee train`` shows exactly these as one line (exit 2).
Anything else (CUDA out of memory, a bug in TRL or in referee) is not the user's to fix and
keeps its traceback (``referee --debug train ...``). It is a ``ValueError``, so callers that
catch ``ValueError`` around a loader keep working.

Importing this module imports nothing else.
"""

from __future__ import annotations


class RecipeError(ValueError):
    """A recipe, config value or dataset the user gave cannot be used; the message says why and what to do.

    Example:
        >>> from referee.recipes.train.datasets import get_dataset_format
        >>> try:
        ...     get_dataset_format("svamp")
        ... except RecipeError as exc:
        ...     print(exc)
        Unknown dataset_format 'svamp'; choose one of gsm8k, math, code.
        >>> isinstance(RecipeError("bad"), ValueError)
        True
    """
