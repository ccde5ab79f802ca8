"""Start sandbox workers from a thread that lives as long as the process.

A sandbox worker dies with its parent (bubblewrap's ``--die-with-parent``, ``PR_SET_PDEATHSIG``
in referee's own namespaces), so that a killed trainer leaves no sandbox behind. Linux ties that
signal to the *thread* that forked the worker, not to the process: a worker started from a
short-lived thread (a ``ThreadPoolExecutor`` that is shut down, a web server's idle worker
thread) is killed when that thread ends, while its pool still counts on it. Workers are therefore
forked by one daemon thread kept for the life of the process (or by the main thread, which ends
only with the process).
"""

from __future__ import annotations

import queue
import subprocess
import threading
from concurrent.futures import Future
from typing import Any

_requests: queue.SimpleQueue[tuple[Future[subprocess.Popen[bytes]], tuple[Any, ...], dict[str, Any]]] = \
    queue.SimpleQueue()
_started = threading.Lock()
_thread: threading.Thread | None = None


def _serve() -> None:
    while True:
        done, args, kwargs = _requests.get()
        try:
            done.set_result(subprocess.Popen(*args, **kwargs))
        except BaseException as exc:  # handed to the caller, who raises it in its own thread
            done.set_exception(exc)


def popen_lasting(*args: Any, **kwargs: Any) -> subprocess.Popen[bytes]:
    """``subprocess.Popen(*args, **kwargs)``, forked by a thread that outlives the caller's.

    Example:
        >>> import sys, time
        >>> child_code = ("import ctypes, signal, time; ctypes.CDLL(None).prctl(1, signal.SIGKILL); "
        ...               "print('asked to die with its parent', flush=True); time.sleep(30)")
        >>> started = {}
        >>> def start():
        ...     child = popen_lasting([sys.executable, "-c", child_code], stdout=subprocess.PIPE)
        ...     started["child"], started["said"] = child, child.stdout.readline()
        >>> thread = threading.Thread(target=start); thread.start(); thread.join(); time.sleep(0.2)
        >>> started["said"], started["child"].poll() is None  # the thread that asked is gone; the child is not
        (b'asked to die with its parent\\n', True)
        >>> started["child"].kill(); started["child"].wait(); started["child"].stdout.close()
        -9
    """
    global _thread
    if threading.current_thread() is threading.main_thread():
        return subprocess.Popen(*args, **kwargs)
    with _started:
        if _thread is None:
            _thread = threading.Thread(target=_serve, name="referee-sandbox-spawner", daemon=True)
            _thread.start()
    done: Future[subprocess.Popen[bytes]] = Future()
    _requests.put((done, args, kwargs))
    return done.result()
