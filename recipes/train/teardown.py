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
"""

from __future__ import annotations

import gc
import sys
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def holding_process_group() -> Iterator[None]:
    """Hold the default process group while the block trains and drops its trainer; then tear it down.

    When the block ends normally every rank meets at a barrier and the group is unregistered
    (unless the block did that itself); the block's garbage (the DDP model and its Reducer) is
    collected while this function still holds the group, and dropping that last reference
    destroys the group through torch's binding, which releases the GIL first. An exception
    skips all of it (the other ranks may be gone) and propagates; the failed rank's exit may
    then end in SIGABRT instead of exit code 1, a failure either way for the launcher. Without
    an initialised process group this is a no-op.

    Example:
        >>> with holding_process_group():
        ...     trainer = "trained"
        ...     del trainer
    """
    import torch.distributed as dist

    if not (dist.is_available() and dist.is_initialized()):
        yield
        return
    group = dist.group.WORLD
    yield
    if dist.is_initialized():  # the block may have torn it down itself (Trainer.end, say)
        dist.barrier()
        destroy_groups()
    gc.collect()
    del group  # the last reference: the binding releases the GIL while Gloo's threads are joined


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
