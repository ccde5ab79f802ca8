"""Ending a distributed run cleanly: every rank meets, then the process group goes, GIL released.

Under a distributed launcher, DDP's C++ ``Reducer`` holds the process group. If the Reducer
is its last holder, the group is destroyed with the GIL held, and a Gloo worker thread that
still has to release a finished collective's Python tensors waits for the GIL forever: the
rank hangs. Left to interpreter exit instead, the same release aborts the rank (SIGABRT) and
torchrun fails the whole launch. Both were seen on two CPU ranks after a successful run.
"""

from __future__ import annotations

import gc
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
        dist.destroy_process_group()
    gc.collect()
    del group  # the last reference: the binding releases the GIL while Gloo's threads are joined
