"""Ending a distributed run cleanly: every rank meets, then the process group goes, GIL released.

Under a distributed launcher, DDP's C++ ``Reducer`` holds the process group. If the Reducer
is its last holder, the group is destroyed with the GIL held, and a Gloo worker thread that
still has to release a finished collective's Python tensors waits for the GIL forever: the
rank hangs. Left to interpreter exit instead, the same release aborts the rank (SIGABRT) and
torchrun fails the whole launch. Both were seen on two CPU ranks after a successful run.

A colocated vLLM engine makes its own groups inside the default one and destroys them when it
shuts down (at interpreter exit, if not before); once the default group is gone those groups are
invalid and that shutdown printed ``ValueError: Invalid process group specified``. vLLM's groups
are therefore destroyed through vLLM first (:func:`destroy_groups`).

Even destroyed, a group that a ``DistributedDataParallel`` model used lives on: torch 2.13's DDP keeps
it (and its Gloo threads) to the end of the process. Interpreter exit then races those threads: one
still releasing a finished collective's Python tensors meets the exiting GIL and the rank aborts
(``terminate called without an active exception``, SIGABRT), about one run in twenty on a loaded
two-core machine. :func:`exit_process` ends a launched rank after its exit handlers without that
finalization; ``referee train`` does so under a launcher.
"""

from __future__ import annotations

import atexit
import gc
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import NoReturn


@contextmanager
def holding_process_group() -> Iterator[None]:
    """Hold the default process group while the block trains and drops its trainer; then tear it down.

    When the block ends normally every rank meets at a barrier and the group is unregistered
    (unless the block did that itself); the block's garbage (the DDP model and its Reducer) is
    collected while this function still holds the group, and dropping that last reference
    destroys the group through torch's binding, which releases the GIL first. The group may also
    be made inside the block (accelerate makes it when the trainer's config is built under a
    launcher): it is held from then on. An exception skips all of it (the other ranks may be
    gone) and propagates; the failed rank's exit may then end in SIGABRT instead of exit code 1,
    a failure either way for the launcher. Without a process group this is a no-op.

    Example:
        >>> with holding_process_group():
        ...     trainer = "trained"
        ...     del trainer
    """
    import torch.distributed as dist

    def world() -> object | None:
        return dist.group.WORLD if dist.is_available() and dist.is_initialized() else None

    held = world()
    yield
    made_inside = world()  # the group made inside the block (or the one held), while it is still registered
    if made_inside is not None:
        dist.barrier()
        destroy_groups()
    gc.collect()
    del held, made_inside  # the last references: the binding releases the GIL while Gloo's threads are joined


def destroy_groups() -> None:
    """Destroy the default process group; where a colocated vLLM engine made groups inside it, through
    vLLM's own teardown, so that the engine's later shutdown finds nothing left to destroy.

    Example:
        >>> import torch.distributed as dist
        >>> destroy_groups()  # no group: nothing to do
        >>> dist.is_initialized()
        False
    """
    import torch.distributed as dist

    state = sys.modules.get("vllm.distributed.parallel_state")  # vLLM made groups only if it was imported
    if state is not None:
        state.destroy_model_parallel()
        state.destroy_distributed_environment()  # the default group too, when vLLM's world group holds it
    if dist.is_initialized():
        dist.destroy_process_group()


def launched() -> bool:
    """Whether this process is one rank of several started by a launcher (torchrun, accelerate).

    Example:
        >>> import os
        >>> launched() == (int(os.environ.get("WORLD_SIZE", "1")) > 1)
        True
    """
    return int(os.environ.get("WORLD_SIZE", "1")) > 1


def exit_process(code: int) -> NoReturn:
    """End the process with ``code`` after its exit handlers (``atexit``: loggers, trackers, sandboxes)
    and with its output flushed, skipping the interpreter's finalization, where a process group that
    outlives its destruction aborts the rank (see the module). Call it last, after
    :func:`holding_process_group`.

    Example:
        >>> import subprocess, sys
        >>> code = ("import atexit; atexit.register(print, 'handlers ran');"
        ...         "from referee.recipes.train.teardown import exit_process; print('done'); exit_process(3)")
        >>> done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        >>> done.returncode, done.stdout.splitlines()
        (3, ['done', 'handlers ran'])
    """
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed or broken pipe: nothing more can be said through it
            pass
    os._exit(code)
