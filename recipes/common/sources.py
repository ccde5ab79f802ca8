"""Fail fast on a model or dataset name that is neither here nor reachable.

``transformers`` and ``datasets`` retry a hub name they cannot reach for 25-50 s and end with a
message about the internet connection. Before either loads anything, :func:`check_source` looks
for the name as a local path, then in the local hub cache, then asks whether the hub answers
at all (``HF_HUB_OFFLINE`` set, or no TCP connection to the endpoint within two seconds); a
name found nowhere is one ``RecipeError`` line at once, and so is a name the reachable hub does
not know.
"""

from __future__ import annotations

import os
import socket
import threading
from pathlib import Path
from typing import Literal
from urllib.parse import urlparse

from ..errors import RecipeError

_TRUE = ("1", "true", "yes", "on")


def hub_unreachable(timeout: float = 2.0) -> str | None:
    """Why the hub cannot be reached (one phrase), or ``None`` when its endpoint accepts a connection.

    Example:
        >>> import os
        >>> from unittest import mock
        >>> with mock.patch.dict(os.environ, {"HF_HUB_OFFLINE": "1"}):
        ...     hub_unreachable()
        'HF_HUB_OFFLINE is set'
        >>> with mock.patch.dict(os.environ, {"HF_ENDPOINT": "http://127.0.0.1:9"}):
        ...     hub_unreachable()
        'no connection to http://127.0.0.1:9'
    """
    if os.environ.get("HF_HUB_OFFLINE", "").lower() in _TRUE or os.environ.get("TRANSFORMERS_OFFLINE", "").lower() in _TRUE:
        return "HF_HUB_OFFLINE is set"
    endpoint = os.environ.get("HF_ENDPOINT", "https://huggingface.co")
    parsed = urlparse(endpoint)
    address = (parsed.hostname or "huggingface.co", parsed.port or (80 if parsed.scheme == "http" else 443))
    connected: list[bool] = []

    def connect() -> None:  # in a thread: name resolution has no timeout of its own
        try:
            socket.create_connection(address, timeout=timeout).close()
            connected.append(True)
        except OSError:
            pass

    worker = threading.Thread(target=connect, daemon=True)
    worker.start()
    worker.join(timeout + 0.5)
    return None if connected else f"no connection to {endpoint}"


def _in_cache(name: str, kind: Literal["model", "dataset"]) -> bool:
    """Whether the local hub cache (or the datasets cache) holds the repository ``name``."""
    from huggingface_hub.constants import HF_HUB_CACHE

    folder = f"{kind}s--{name.replace('/', '--')}"
    if (Path(HF_HUB_CACHE) / folder / "snapshots").is_dir():
        return True
    if kind == "dataset":
        cache = os.environ.get("HF_DATASETS_CACHE") or str(Path(HF_HUB_CACHE).parent / "datasets")
        return (Path(cache) / name.replace("/", "___")).is_dir()
    return False


def _on_hub(name: str, kind: Literal["model", "dataset"]) -> bool:
    """Whether the hub knows ``name``; ``True`` when it cannot say (a gated repository, an error)."""
    from huggingface_hub import repo_exists

    try:
        return repo_exists(name, repo_type=kind)
    except Exception:  # gated, rate-limited, a proxy in the way: the loader will say what it is
        return True


def check_source(name: str, kind: Literal["model", "dataset"], what: str) -> None:
    """Refuse ``name`` (the value of the setting ``what``) at once when it is no local path, not in
    the local cache, and the hub cannot be reached; anything else is left to the loader.

    Example:
        >>> import os, tempfile
        >>> from unittest import mock
        >>> check_source(tempfile.mkdtemp(), "model", "model_name_or_path")  # a local folder
        >>> with mock.patch.dict(os.environ, {"HF_HUB_OFFLINE": "1"}):
        ...     check_source("no-org/no-such-model", "model", "model_name_or_path")
        Traceback (most recent call last):
        ...
        referee.recipes.errors.RecipeError: model_name_or_path='no-org/no-such-model' is no local folder and no model in the local hub cache, and the hub cannot be reached (HF_HUB_OFFLINE is set); give a local model folder, or check the name on a connected machine.
    """
    if Path(name).expanduser().exists():
        return
    looks_like_path = name.startswith((".", "/", "~")) or name.count("/") > 1 or "\\" in name
    if looks_like_path:
        raise RecipeError(f"{what}={name!r} is no {'folder' if kind == 'model' else 'file or folder'} here "
                          f"(the current folder is {os.getcwd()}); check the path.")
    if _in_cache(name, kind):
        return
    why = hub_unreachable()
    if why is None and not _on_hub(name, kind):
        raise RecipeError(f"{what}={name!r} is no local {'folder' if kind == 'model' else 'file or folder'} and no "
                          f"{kind} on the hub; check the name (org/name) or give a local path.")
    if why:
        raise RecipeError(f"{what}={name!r} is no local {'folder' if kind == 'model' else 'file or folder'} and no "
                          f"{kind} in the local hub cache, and the hub cannot be reached ({why}); give a local "
                          f"{kind} {'folder' if kind == 'model' else 'path'}, or check the name on a connected machine.")
