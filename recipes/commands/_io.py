"""Shared pieces of the ``referee`` commands: output files that never clobber their input and
appear whole or not at all, and reward loading that fails in one line."""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path
from typing import IO, Any


def same_file(a: str | os.PathLike[str], b: str | os.PathLike[str]) -> bool:
    """Whether two paths name the same file (same inode, or the same real path when one is missing).

    Example:
        >>> import tempfile, os
        >>> folder = tempfile.mkdtemp()
        >>> path = os.path.join(folder, "a.jsonl")
        >>> _ = open(path, "w").close()
        >>> same_file(path, os.path.join(folder, ".", "a.jsonl")), same_file(path, os.path.join(folder, "b.jsonl"))
        (True, False)
    """
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)


_KINDS = ((stat.S_ISLNK, "symbolic link"), (stat.S_ISCHR, "character device"), (stat.S_ISBLK, "block device"),
          (stat.S_ISFIFO, "FIFO"), (stat.S_ISSOCK, "socket"))


def _refuse_other_than_a_regular_file(path: Path) -> None:
    """Raise ``FileExistsError`` if ``path`` exists as anything but a regular file or a folder
    (a rename onto it would replace a device, a FIFO or a link, never write through it)."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    kind = next((name for test, name in _KINDS if test(mode)), None)
    if kind is not None:
        raise FileExistsError(f"{path} is a {kind}, not a regular file; write to a regular file or a new path "
                              "(or leave the output out to write to standard output)")


class AtomicOutput:
    """A text file written under a temporary name next to ``path`` and renamed onto it by
    :meth:`commit`; :meth:`discard` (or an exception before commit) leaves ``path`` as it was.

    The temporary file is created at once, so an unwritable folder or a ``path`` that is a
    folder is reported before any work is done (``OSError`` with a one-line message); so is a
    ``path`` that is a device, a FIFO, a socket or a symbolic link, which the rename would replace.

    Example:
        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "out.jsonl")
        >>> output = AtomicOutput(path)
        >>> _ = output.handle.write("done\\n")
        >>> os.path.exists(path)
        False
        >>> output.commit(); open(path).read()
        'done\\n'
        >>> AtomicOutput("/dev/null")
        Traceback (most recent call last):
        ...
        FileExistsError: /dev/null is a character device, not a regular file; write to a regular file or a new path (or leave the output out to write to standard output)
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        _refuse_other_than_a_regular_file(self.path)
        if self.path.is_dir():
            raise IsADirectoryError(f"{self.path} is a folder; give a file name such as {self.path / 'out.jsonl'}")
        folder = self.path.parent
        try:
            descriptor, self.temporary = tempfile.mkstemp(prefix=f".{self.path.name}.", suffix=".tmp", dir=folder)
        except FileNotFoundError:
            raise FileNotFoundError(f"cannot write {self.path}: folder {folder} does not exist; create it "
                                    "or choose another output") from None
        except OSError as exc:
            raise OSError(f"cannot write {self.path} ({exc.strerror or exc}); choose a folder you can "
                          "write to") from None
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(self.temporary, 0o666 & ~mask)  # what a plain open() would have given
        self.handle: IO[str] = os.fdopen(descriptor, "w", encoding="utf-8")

    def commit(self) -> None:
        """Flush, sync and put the file in place of ``path``."""
        self.handle.flush()
        os.fsync(self.handle.fileno())
        self.handle.close()
        _refuse_other_than_a_regular_file(self.path)  # again: it may have changed while we wrote
        os.replace(self.temporary, self.path)

    def discard(self) -> None:
        """Remove the temporary file; ``path`` is left untouched."""
        self.handle.close()
        Path(self.temporary).unlink(missing_ok=True)

    def __enter__(self) -> AtomicOutput:
        return self

    def __exit__(self, kind: Any, value: Any, traceback: Any) -> None:
        if kind is None:
            self.commit()
        else:
            self.discard()


def load_reward(expression: str, options: dict[str, Any]) -> Any:
    """``parse_reward_sum(expression, **options)``, with anything a user's reward module raises
    while it is imported or built turned into a one-line ``ValueError``.

    Example:
        >>> load_reward("gsm8k_accuracy", {}).__name__
        'gsm8k_accuracy'
        >>> load_reward("json:loads", {"colour": 1})
        Traceback (most recent call last):
        ...
        ValueError: Cannot load reward 'json:loads': loading it raised TypeError: loads() missing 1 required positional argument: 's'; fix the reward module or its options.
    """
    from referee.rewards.compose import parse_reward_sum

    try:
        return parse_reward_sum(expression, **options)
    except ValueError:
        raise
    except Exception as exc:  # a user's module can raise anything at import or construction
        raise ValueError(f"Cannot load reward {expression!r}: loading it raised {type(exc).__name__}: {exc}; "
                         "fix the reward module or its options.") from None
