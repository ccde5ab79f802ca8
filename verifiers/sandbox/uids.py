"""Unprivileged uids for sandbox workers, leased so that two pools never share one.

Each lease holds an abstract unix socket named after its uid: binding fails while another
process (any pool on this machine) holds it, and the kernel frees it when the holder exits,
so a crashed trainer never strands a uid and no lock file is left behind.
"""

from __future__ import annotations

import pwd
import socket

# 65533, 65532, ...: just under "nobody", in the range Debian keeps free of real accounts.
UID_RANGE = range(65533, 65000, -1)


class UidLease:
    """One leased uid; :meth:`release` (or process exit) gives it back.

    Example:
        >>> lease = lease_uid()
        >>> lease.uid in UID_RANGE
        True
        >>> other = lease_uid(); other.uid != lease.uid
        True
        >>> lease.release(); other.release()
    """

    def __init__(self, uid: int, holder: socket.socket) -> None:
        self.uid = uid
        self._holder = holder

    def release(self) -> None:
        """Give the uid back."""
        self._holder.close()


def _is_account(uid: int) -> bool:
    try:
        pwd.getpwuid(uid)
    except KeyError:
        return False
    return True


def lease_uid() -> UidLease:
    """The first free uid of :data:`UID_RANGE` that no account uses; ``RuntimeError`` when none is left.

    Example:
        >>> lease = lease_uid(); lease.uid >= UID_RANGE.stop
        True
        >>> lease.release()
    """
    for uid in UID_RANGE:
        if _is_account(uid):
            continue
        holder = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            holder.bind(f"\0referee-sandbox-uid-{uid}")
        except OSError:
            holder.close()
            continue
        return UidLease(uid, holder)
    raise RuntimeError(f"all {len(UID_RANGE)} sandbox uids are in use; close other pools or use fewer workers.")
