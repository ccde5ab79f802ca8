"""The recipe key ``activation_checkpointing`` on every transformers release referee admits.

transformers 5.23 renamed ``gradient_checkpointing`` (and its ``_kwargs``) to
``activation_checkpointing`` and kept the old name as a deprecated alias. The recipes, the CPU
profile and the docs write the new name; vLLM 0.31 pins ``transformers<5.18``, where only the
old name exists. :data:`CheckpointingConfig` is TRL's ``GRPOConfig`` where the installed
transformers has the new name, and otherwise ``GRPOConfig`` with the new name added as a field
that is handed to the old one, so a recipe means the same on either release.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from trl import GRPOConfig

#: The new spelling of each checkpointing key, and the old one transformers < 5.23 reads.
RENAMED: dict[str, str] = {
    "activation_checkpointing": "gradient_checkpointing",
    "activation_checkpointing_kwargs": "gradient_checkpointing_kwargs",
}


def has_new_spelling(config_class: type = GRPOConfig) -> bool:
    """Whether ``config_class`` (default: the installed TRL's ``GRPOConfig``) has ``activation_checkpointing``.

    Example:
        >>> from dataclasses import dataclass
        >>> @dataclass
        ... class Old:
        ...     gradient_checkpointing: bool = False
        >>> has_new_spelling(Old)
        False
    """
    return "activation_checkpointing" in getattr(config_class, "__dataclass_fields__", {})


@dataclass
class _NewSpelling(GRPOConfig):
    """``GRPOConfig`` of a transformers release before 5.23, with the 5.23 names handed to the old ones."""

    activation_checkpointing: bool | None = field(
        default=None, metadata={"help": "Save memory by recomputing activations in the backward pass "
                                        "(transformers < 5.23 calls it gradient_checkpointing)."})
    activation_checkpointing_kwargs: dict[str, Any] | str | None = field(
        default=None, metadata={"help": "Keyword arguments for activation checkpointing "
                                        "(transformers < 5.23: gradient_checkpointing_kwargs)."})

    def __post_init__(self) -> None:
        for new, old in RENAMED.items():
            if getattr(self, new) is not None:
                setattr(self, old, getattr(self, new))
        super().__post_init__()
        for new, old in RENAMED.items():
            setattr(self, new, getattr(self, old))


#: The base of ``RefereeGRPOConfig``: ``GRPOConfig`` itself where it knows ``activation_checkpointing``.
CheckpointingConfig: type = GRPOConfig if has_new_spelling() else _NewSpelling
