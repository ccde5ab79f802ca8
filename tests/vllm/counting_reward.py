"""A reward for the vLLM suite's resume tests (loaded as ``counting_reward:digit_reward``).

It passes completions that hold a digit, appends each call's prompts to ``$REFEREE_TEST_LOG``, and
kills its own process (SIGKILL: nothing gets to clean up) on call number ``$REFEREE_TEST_KILL_AT``.
"""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path


def digit_reward(prompts, completions, **kwargs):
    log = Path(os.environ["REFEREE_TEST_LOG"])
    with log.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(sorted({str(prompt) for prompt in prompts})) + "\n")
    if len(log.read_text(encoding="utf-8").splitlines()) == int(os.environ.get("REFEREE_TEST_KILL_AT", "0")):
        os.kill(os.getpid(), signal.SIGKILL)
    return [float(any(ch.isdigit() for ch in str(text))) for text in completions]


digit_reward.kind = "correctness"
digit_reward.reward_range = (0.0, 1.0)
