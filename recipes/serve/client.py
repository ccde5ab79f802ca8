"""``referee serve``'s client for OpenRLHF: a ``reward_func`` file that asks the server and raises its refusals.

Given ``--reward.remote_url http://HOST:5000/get_reward``, OpenRLHF's own HTTP client retries a
refused request five times, then trains on with the reward left ``None`` and dies later
(``'NoneType' object has no attribute 'size'``), the server's reason shown nowhere. Give OpenRLHF
this file instead: it loads ``reward_func`` from a ``.py`` path and calls it in a thread, one
sample per call::

    export REFEREE_SERVE_URL=http://HOST:5000/get_reward REFEREE_SERVE_TOKEN=...
    python -m openrlhf.cli.train_ppo_ray ... \\
      --reward.remote_url "$(python -c 'import referee.recipes.serve.client as m; print(m.__file__)')"

It posts the same ``{"query", "prompts", "labels"}`` and returns the server's
``{"rewards", "scores", "extra_logs"}``. A refusal with referee's sentence (400: a label or query
that cannot be judged; 503: too many referee errors in the request; 401: a wrong token; 413)
raises :class:`RewardServerRefused` carrying that sentence; a server that cannot be reached in
:data:`ATTEMPTS` tries raises :class:`RewardServerUnreachable`. Both derive from
:class:`~referee.rewards.trainers.routing.RefereeStop` (a ``BaseException``), so they get past OpenRLHF's
``except Exception`` and stop the run with the reason, instead of a reward of ``None``.
"""

from __future__ import annotations

import json
import os
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from typing import Any

# Absolute imports: OpenRLHF loads this very file by path.
from referee.recipes.serve.limits import TOKEN_ENV
from referee.rewards.trainers.routing import RefereeStop

URL_ENV = "REFEREE_SERVE_URL"
ATTEMPTS = 5  # tries for a server that cannot be reached or is busy (not for a refusal: it would say the same)
RETRY_DELAY = 1.0  # seconds between tries
TIMEOUT = 180.0  # seconds for one request, as OpenRLHF's own client


class RewardServerRefused(RefereeStop):
    """``referee serve`` refused a request with its one-sentence reason: the run stops with it.

    Example:
        >>> issubclass(RewardServerRefused, Exception)  # OpenRLHF's `except Exception` does not swallow it
        False
    """


class RewardServerUnreachable(RefereeStop):
    """``referee serve`` did not answer in :data:`ATTEMPTS` tries.

    Example:
        >>> issubclass(RewardServerUnreachable, RefereeStop)
        True
    """


def server_url() -> str:
    """The ``/get_reward`` URL from ``REFEREE_SERVE_URL`` (a bare ``http://host:port`` gets the path).

    Example:
        >>> import os; os.environ[URL_ENV] = "http://127.0.0.1:5000"
        >>> server_url()
        'http://127.0.0.1:5000/get_reward'
        >>> del os.environ[URL_ENV]; server_url()
        Traceback (most recent call last):
        ...
        referee.recipes.serve.client.RewardServerUnreachable: REFEREE_SERVE_URL is not set; set it to referee serve's address, e.g. http://HOST:5000/get_reward.
    """
    url = os.environ.get(URL_ENV, "").strip()
    if not url.startswith(("http://", "https://")):
        what = "is not set" if not url else f"is {url!r}, not an http(s) URL"
        raise RewardServerUnreachable(f"{URL_ENV} {what}; set it to referee serve's address, e.g. "
                                      "http://HOST:5000/get_reward.")
    return url if url.rstrip("/").endswith("/get_reward") else url.rstrip("/") + "/get_reward"


def post_get_reward(url: str, body: dict[str, Any], token: str | None = None, *, attempts: int = ATTEMPTS) -> dict[str, Any]:
    """POST ``body`` to ``url`` and return the JSON reply; raise with the server's sentence when it refuses.

    Example:
        >>> post_get_reward("http://127.0.0.1:9/get_reward", {"query": []}, attempts=1)
        Traceback (most recent call last):
        ...
        referee.recipes.serve.client.RewardServerUnreachable: referee serve at http://127.0.0.1:9/get_reward did not answer in 1 tries (last: ...); start it, or check REFEREE_SERVE_URL.
    """
    data = json.dumps(body).encode()
    headers = {"Content-Type": "application/json", **({"Authorization": f"Bearer {token}"} if token else {})}
    last = ""
    for attempt in range(attempts):
        if attempt:
            time.sleep(RETRY_DELAY)
        try:
            with urllib.request.urlopen(urllib.request.Request(url, data=data, headers=headers), timeout=TIMEOUT) as reply:
                return json.loads(reply.read())
        except urllib.error.HTTPError as error:
            sentence = _sentence(error)
            if sentence is None:  # no referee sentence: a busy server (503 past --max-connections) or a proxy's page
                last = f"HTTP {error.code}"
                continue
            raise RewardServerRefused(f"referee serve refused the request (HTTP {error.code}): {sentence}") from None
        except (urllib.error.URLError, OSError, ValueError) as exc:
            last = str(getattr(exc, "reason", exc))
    raise RewardServerUnreachable(f"referee serve at {url} did not answer in {attempts} tries (last: {last}); "
                                  "start it, or check REFEREE_SERVE_URL.")


def _sentence(error: urllib.error.HTTPError) -> str | None:
    """referee's one sentence in an error reply (``{"error": ...}``), or ``None`` when there is none."""
    try:
        body = json.loads(error.read())
    except (ValueError, OSError):
        return None
    found = body.get("error") if isinstance(body, dict) else None
    return found if isinstance(found, str) else None


def reward_func(queries: Sequence[str], prompts: Sequence[Any], labels: Sequence[Any], **kwargs: Any) -> dict[str, Any]:
    """OpenRLHF's custom reward function, answered by ``referee serve`` at ``REFEREE_SERVE_URL``.

    Example:
        >>> reward_func(["#### 18"], [""], ["18"])  # REFEREE_SERVE_URL unset here
        Traceback (most recent call last):
        ...
        referee.recipes.serve.client.RewardServerUnreachable: REFEREE_SERVE_URL is not set; ...
    """
    body = {"query": list(queries), "prompts": list(prompts), "labels": list(labels)}
    return post_get_reward(server_url(), body, token=os.environ.get(TOKEN_ENV) or None)
