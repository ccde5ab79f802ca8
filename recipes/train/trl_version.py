"""The TRL release referee is pinned to, and the check that the installed one is it.

The loss-aggregation layer relies on how TRL's ``GRPOTrainer`` aggregates its loss, which
changes between releases, so referee refuses to train on any other TRL. This module reads
package metadata only: it imports neither TRL nor torch.
"""

from __future__ import annotations

import warnings
from importlib import metadata

PINNED_TRL_VERSION = "1.16.0"


def installed_trl_version() -> str | None:
    """The installed TRL version, or ``None`` when TRL is not installed.

    Example:
        >>> installed_trl_version() == PINNED_TRL_VERSION
        True
    """
    try:
        return metadata.version("trl")
    except metadata.PackageNotFoundError:
        return None


def check_trl_version(installed: str | None = None) -> None:
    """Raise ``RuntimeError`` unless ``installed`` (default: the installed TRL) is the pinned release;
    on the pinned release, also filter the warnings its own code raises (:func:`silence_pinned_trl_warnings`).

    Example:
        >>> check_trl_version()
        >>> check_trl_version("1.17.0")
        Traceback (most recent call last):
        ...
        RuntimeError: referee is pinned to TRL 1.16.0 but TRL 1.17.0 is installed; run pip install 'trl==1.16.0' (or pip install 'referee[train]').
    """
    found = installed if installed is not None else installed_trl_version()
    if found == PINNED_TRL_VERSION:
        silence_pinned_trl_warnings()
        return
    what = "TRL is not installed" if found is None else f"TRL {found} is installed"
    raise RuntimeError(
        f"referee is pinned to TRL {PINNED_TRL_VERSION} but {what}; "
        f"run pip install 'trl=={PINNED_TRL_VERSION}' (or pip install 'referee[train]')."
    )


def silence_pinned_trl_warnings() -> None:
    """Ignore the warnings the pinned TRL's own code raises at every step, which no user can act on:
    TRL 1.16 reads transformers' deprecated ``is_gradient_checkpointing`` each time it generates,
    and from transformers 5.23 that is a ``FutureWarning`` printed into the progress bar. Only that
    exact message is filtered.

    Example:
        >>> import warnings
        >>> silence_pinned_trl_warnings()
        >>> with warnings.catch_warnings(record=True) as caught:
        ...     warnings.simplefilter("default")
        ...     silence_pinned_trl_warnings()
        ...     warnings.warn("`is_gradient_checkpointing` is deprecated and will be removed in v6.", FutureWarning)
        >>> caught
        []
    """
    warnings.filterwarnings("ignore", message=r"`is_gradient_checkpointing` is deprecated", category=FutureWarning)
