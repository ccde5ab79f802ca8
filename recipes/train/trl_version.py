"""The TRL release referee is pinned to, and the check that the installed one is it.

The loss-aggregation layer relies on how TRL's ``GRPOTrainer`` aggregates its loss, which
changes between releases, so referee refuses to train on any other TRL. This module reads
package metadata only: it imports neither TRL nor torch.
"""

from __future__ import annotations

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
    """Raise ``RuntimeError`` unless ``installed`` (default: the installed TRL) is the pinned release.

    Example:
        >>> check_trl_version()
        >>> check_trl_version("1.17.0")
        Traceback (most recent call last):
        ...
        RuntimeError: referee is pinned to TRL 1.16.0 but TRL 1.17.0 is installed; run pip install 'trl==1.16.0' (or pip install 'referee[train]').
    """
    found = installed if installed is not None else installed_trl_version()
    if found == PINNED_TRL_VERSION:
        return
    what = "TRL is not installed" if found is None else f"TRL {found} is installed"
    raise RuntimeError(
        f"referee is pinned to TRL {PINNED_TRL_VERSION} but {what}; "
        f"run pip install 'trl=={PINNED_TRL_VERSION}' (or pip install 'referee[train]')."
    )
