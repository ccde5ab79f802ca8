"""The sandbox: untrusted code run in jobs forked from a warm, isolated worker, with hard limits
and cleanup, talked to only in plain data. The code verifier's judge (:mod:`referee.verifiers.code`)
and the Python tool's session (:class:`PythonSession`) both stand on it; it imports neither the
judge nor anything else of ``referee.verifiers`` (``tests/test_import_paths.py`` checks).

* Isolation (:mod:`.isolation`): which levels this machine gives (``full``, ``namespaces``,
  ``uid``, ``basic``), failing closed, and the command that starts a worker in them: bubblewrap or
  referee's own namespaces (:mod:`.namespaces`), Landlock and seccomp where there are none
  (:mod:`.confine`, :mod:`.landlock`, :mod:`.seccomp`), the jobs' own uids (:mod:`.uids`) and the
  mounts that let them reach Python (:mod:`.mounts`).
* The worker (:mod:`.forkserver`, run as ``python -m referee.verifiers.sandbox.forkserver``): one
  locked-down job per request, with rlimits (:mod:`.limits`), and every process of a job killed and
  its files removed after it (:mod:`.cleanup`). What runs inside a job: a Python program answering
  calls or reading stdin (:mod:`.job`), a program of its own (:mod:`.execjob`: a compiler, a
  compiled binary), or notebook cells (:mod:`.cells`).
* The trusted side: :class:`Sandbox` (:mod:`.sandbox`) starts a worker and its jobs (from a thread
  that lives as long as the process: :mod:`.spawner`) and says why a job ended; every message is
  framed and read with a deadline and a size cap (:mod:`.channel`) in the strict plain-data
  encoding (:mod:`.wire`). :class:`PythonSession` (:mod:`.cell_session`) keeps one job's
  variables between cells, for a model's tool calls.

Example:
    >>> with PythonSession(isolation="basic", allow_weak_isolation=True) as session:
    ...     _ = session.run("x = 20")
    ...     session.run("x + 22").text
    '42'
"""

from .cell_session import CellLimits, CellResult, PythonSession
from .isolation import LEVELS, Isolation, available_isolation, exposures, isolation_of, resolve_isolation
from .limits import Limits
from .sandbox import KilledFromOutside, Sandbox, SandboxBroken, job_ending, restart
from .uids import UidLease, lease_uid

__all__ = ["LEVELS", "CellLimits", "CellResult", "Isolation", "KilledFromOutside", "Limits", "PythonSession",
           "Sandbox", "SandboxBroken", "UidLease", "available_isolation", "exposures", "isolation_of", "job_ending",
           "lease_uid", "resolve_isolation", "restart"]
