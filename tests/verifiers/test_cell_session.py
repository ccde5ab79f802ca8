"""The sandboxed Python session a tool stands on: state kept between cells, reset, limits, restarts
after a dead process, a call budget, and hostile cells that escape nothing.

The ordinary tests run at the level this machine gives (``auto``); the hostile cells run at every
level this machine reaches where a cell cannot reach the caller (:func:`exposures` empty: a pid
namespace or an own uid, or Landlock's signal scope); never as root or our own uid unguarded.
"""

import os
import signal
import threading
import time
import uuid

import pytest

from referee.verifiers.code import available_isolation, exposures, resolve_isolation
from referee.verifiers.sandbox.cell_session import NO_OUTPUT, RESTARTED, CellLimits, PythonSession

TOKEN = f"referee-cell-{uuid.uuid4().hex}"  # in file names
SECRET = uuid.uuid4().hex  # in what a cell must not read
FAST = CellLimits(timeout=1.0, cpu_seconds=1.0, memory_mb=256, output_chars=200)


def _guarded(level):
    """``level`` when this machine gives it and a cell there cannot signal us or read our home."""
    try:
        return not exposures(available_isolation(level))
    except ValueError:
        return False


GUARDED_LEVELS = [level for level in ("full", "namespaces", "uid", "basic") if _guarded(level)]
try:
    AUTO = resolve_isolation().level
except ValueError:  # no level here holds untrusted code away from us: nothing runs in these tests
    AUTO = None
needs_sandbox = pytest.mark.skipif(AUTO is None, reason="no isolation level here guards the caller")


@pytest.fixture()
def session():
    with PythonSession(FAST, isolation="auto") as opened:
        yield opened


@needs_sandbox
def test_variables_live_from_cell_to_cell_and_a_trailing_expression_shows(session):
    assert session.run("x = 6\ndef twice(v):\n    return 2 * v").text == NO_OUTPUT
    assert session.run("print('seven', x + 1)\ntwice(x) * 3 + 6").text == "seven 7\n42"
    result = session.run("import math\nmath.sqrt(16)")
    assert (result.text, result.ok, result.error, result.truncated) == ("4.0", True, False, False)
    assert session.run("None").text == NO_OUTPUT  # a notebook shows no None
    assert session.run("import sys\nprint('to stderr', file=sys.stderr)").text == "to stderr"


@needs_sandbox
def test_reset_clears_the_namespace_and_the_modules_and_says_nothing_of_a_restart(session):
    session.run("secret = 42\nimport json\njson.dumps = lambda *a, **k: 'patched'")
    session.reset()
    result = session.run("secret")
    assert result.error and result.text.splitlines()[-1] == "NameError: name 'secret' is not defined"
    assert RESTARTED not in result.text and not result.restarted
    assert session.run("import json\njson.dumps([1])").text == "'[1]'"


@needs_sandbox
def test_a_cell_past_its_time_is_stopped_and_the_next_one_runs_in_a_fresh_session(session):
    session.run("kept = 1")
    stopped = session.run("import time\ntime.sleep(60)")
    assert stopped.timeout and not stopped.ok
    assert "did not finish within 1 s" in stopped.text
    after = session.run("1 + 1")
    assert after.ok and after.restarted and after.text == f"{RESTARTED}\n2"
    assert session.run("kept").text.endswith("NameError: name 'kept' is not defined")
    busy = session.run("while True:\n    pass")  # CPU limit or wall clock, whichever comes first
    assert busy.timeout and not busy.ok
    assert session.run("3").text == f"{RESTARTED}\n3"


@needs_sandbox
def test_an_exception_gives_the_tracebacks_tail_and_the_session_goes_on(session):
    session.run("data = {'a': 1}")
    result = session.run("def look(key):\n    return data[key]\n\nlook('b')")
    assert result.error and not result.ok and not result.killed
    lines = result.text.splitlines()
    assert lines[0] == "Traceback (most recent call last):" and lines[-1] == "KeyError: 'b'"
    assert '  File "<cell 2>", line 2, in look' in lines and "    return data[key]" in lines
    assert "cells.py" not in result.text  # the session's own frames are not shown
    assert session.run("x = (").text.splitlines()[-1].startswith("SyntaxError")
    assert session.run("import sys\nsys.exit(3)").text.splitlines()[-1] == "SystemExit: 3"
    assert session.run("data['a']").text == "1"  # none of that ended the session
    memory = session.run("hoard = bytearray(10 ** 10)")
    assert memory.error and memory.text.splitlines()[-1] == "MemoryError"
    assert session.run("data['a'] + 1").text == "2"


@needs_sandbox
def test_output_past_the_cap_is_cut_with_a_visible_marker(session):
    result = session.run("print('x' * 12_545)")
    assert result.truncated and result.ok
    assert result.text == "x" * 200 + "\n... [output truncated: 12,346 more characters]"
    flood = session.run("while True:\n    print('y' * 1000)")  # never ends: stopped, nothing floods us
    assert flood.timeout and len(flood.text) < 500
    assert not session.run("'short'").truncated


@needs_sandbox
def test_a_process_that_ends_itself_is_restarted_and_the_next_cell_says_so(session):
    session.run("kept = 1")
    ended = session.run("import os\nos._exit(0)")
    assert ended.killed and not ended.ok and "exited (code 0)" in ended.text
    after = session.run("'kept' in globals()")
    assert after.restarted and after.text == f"{RESTARTED}\nFalse"
    crashed = session.run("import ctypes\nctypes.string_at(0)")
    assert crashed.killed and "SIGSEGV" in crashed.text
    assert session.run("2").text == f"{RESTARTED}\n2"


@needs_sandbox
def test_the_call_budget_refuses_further_cells_until_reset():
    with PythonSession(FAST, max_calls=2) as session:
        assert session.run("n = 1").ok and session.run("n").text == "1"
        refused = session.run("n")
        assert refused.refused and not refused.ok and "call budget of 2 calls is spent" in refused.text
        session.reset()
        assert session.run("7").text == "7"


@needs_sandbox
def test_two_sessions_share_nothing():
    with PythonSession(FAST) as first, PythonSession(FAST) as second:
        first.run("shared = 'first'\nopen('note', 'w').write('first')\nimport os\nos.environ['MARK'] = '1'")
        assert second.run("shared").text.endswith("NameError: name 'shared' is not defined")
        assert second.run("import os\nos.path.exists('note'), os.environ.get('MARK')").text == "(False, None)"
        assert first.run("shared").text == "'first'"


@needs_sandbox
def test_a_session_started_from_a_thread_that_ended_keeps_its_process(session):
    """The sandbox dies with the thread that forked it (PDEATHSIG): thread pools start sessions and then end."""
    started = threading.Thread(target=session.run, args=("kept = 42",))
    started.start()
    started.join()
    time.sleep(0.2)
    result = session.run("kept")
    assert (result.text, result.restarted, result.sandbox_failed) == ("42", False, False)


def test_bad_arguments_are_one_clear_sentence():
    with pytest.raises(ValueError, match="timeout=0"):
        CellLimits(timeout=0)
    with pytest.raises(ValueError, match="max_calls=-1"):
        PythonSession(max_calls=-1)
    with pytest.raises(ValueError, match="isolation='nowhere'"):
        PythonSession(isolation="nowhere")


@needs_sandbox
def test_a_cell_that_is_not_a_string_is_an_error_not_an_exception(session):
    result = session.run(b"print(1)")
    assert result.error and "must be a str" in result.text


# --- hostile cells --------------------------------------------------------------------------


@pytest.fixture()
def planted(tmp_path):
    """A secret in our home, in our environment and beside the repository; and the paths a
    cell should not be able to write."""
    home = os.path.expanduser("~")
    secret_file = os.path.join(home, f"{TOKEN}-secret")
    with open(secret_file, "w") as out:
        out.write(SECRET)
    os.environ["REFEREE_CELL_SECRET"] = SECRET
    targets = [os.path.join(home, f"{TOKEN}-w"), os.path.join(os.getcwd(), f"{TOKEN}-w"),
               f"/tmp/{TOKEN}-w", f"/var/tmp/{TOKEN}-w", f"/dev/shm/{TOKEN}-w"]
    yield secret_file, targets
    os.environ.pop("REFEREE_CELL_SECRET", None)
    for path in [secret_file, *targets]:
        if os.path.exists(path):
            os.remove(path)


def _reads(paths):
    return ("for path in " + repr(paths) + ":\n    try:\n        print(path, open(path, errors='replace').read()[:80])\n"
            "    except OSError as exc:\n        print(path, type(exc).__name__)\n")


@pytest.mark.skipif(not GUARDED_LEVELS, reason="no isolation level here guards the caller")
@pytest.mark.parametrize("level", GUARDED_LEVELS)
def test_hostile_cells_reach_nothing_and_the_caller_survives(level, planted, listener):
    secret_file, targets = planted
    repository = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "pyproject.toml")
    isolation = available_isolation(level)
    repository_hidden = isolation.minimal_root or (isolation.own_uid and not os.stat(repository).st_mode & 0o004)
    cells = [
        _reads(["/etc/shadow", secret_file] + ([os.path.realpath(repository)] if repository_hidden else [])),
        "".join(f"try:\n    open({path!r}, 'w').write('x')\nexcept OSError as exc:\n    print(type(exc).__name__)\n"
                for path in targets),
        "import os, glob\nprint(dict(os.environ))\nfor path in glob.glob('/proc/*/environ'):\n    try:\n"
        "        print(path, open(path, 'rb').read()[:2000])\n    except OSError:\n        pass\n",
        f"import socket\ntry:\n    socket.create_connection(('127.0.0.1', {listener.port}), timeout=0.5).close()\n"
        "    print('connected')\nexcept OSError as exc:\n    print(type(exc).__name__)\n",
        "import os\nwhile True:\n    os.fork()\n",
        "import os, signal\nos.kill(-1, signal.SIGKILL)\n",
        "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\n",
    ]
    earlier = set(_sandbox_processes(None, wait=0))  # other tests' judges in this process keep fork servers warm
    with PythonSession(FAST, isolation=level) as session:
        results = [session.run(cell) for cell in cells]
        uid = session._lease.uid if session._lease is not None else None
        texts = "\n".join(result.text for result in results)
        assert SECRET not in texts, texts
        assert "[project]" not in texts  # the repository's pyproject.toml was not read
        assert "connected" not in texts and listener.accepted == 0
        assert not any(os.path.exists(path) for path in targets)
        assert not results[4].ok  # the fork bomb hit the process limit or its deadline
        last = session.run("6 * 7")
        if not isolation.own_uid and last.killed:  # the worker a cell killed may end after that cell answered
            last = session.run("6 * 7")
        assert last.text.splitlines()[-1] == "42", last.text
    assert os.path.exists(secret_file) and os.environ["REFEREE_CELL_SECRET"] == SECRET  # and we are alive
    assert _sandbox_processes(uid, ignore=earlier) == []  # closed: no worker, no job, nothing the cells started


def _sandbox_processes(uid, wait=5.0, ignore=frozenset()):
    """Processes under this test process that belong to a sandbox, and any process of ``uid``
    (a uid leased to the session alone), after at most ``wait`` seconds; those in ``ignore``
    (sandboxes that were there before) are left out."""
    deadline = time.monotonic() + wait
    while True:
        parents, found = {}, []
        for name in filter(str.isdigit, os.listdir("/proc")):
            try:
                with open(f"/proc/{name}/stat", "rb") as handle:
                    fields = handle.read().rsplit(b")", 1)[1].split()
                with open(f"/proc/{name}/cmdline", "rb") as handle:
                    argv = handle.read()
                owner = os.stat(f"/proc/{name}").st_uid
            except (OSError, IndexError):
                continue
            if fields[0] == b"Z":  # ended, not yet reaped: it holds nothing but its pid
                continue
            parents[int(name)] = (int(fields[1]), argv)
            if uid is not None and owner == uid:
                found.append(int(name))
        for pid, (parent, argv) in parents.items():
            chain, seen = parent, set()
            while chain in parents and chain not in seen and chain != os.getpid():
                seen.add(chain)
                chain = parents[chain][0]
            if chain == os.getpid() and (b"forkserver" in argv or b"bwrap" in argv):
                found.append(pid)
        found = [pid for pid in found if pid not in ignore]
        if not found or time.monotonic() > deadline:
            return found
        time.sleep(0.05)


@pytest.mark.parametrize("level", [level for level in GUARDED_LEVELS if available_isolation(level).own_uid])
def test_a_kill_from_outside_is_the_sandboxs_failure_not_the_cells(level):
    with PythonSession(CellLimits(timeout=20.0, cpu_seconds=20.0), isolation=level) as session:
        session.run("kept = 1")
        uid = session._lease.uid
        results = []
        # the cell names its process, so that only the job running it is killed (not the idle one before it)
        sleeper = "import ctypes, time\nctypes.CDLL(None).prctl(15, b'referee-sleeper')\ntime.sleep(30)"  # PR_SET_NAME
        cell = threading.Thread(target=lambda: results.append(session.run(sleeper)))
        cell.start()
        killed = []
        deadline = time.monotonic() + 10
        while not killed and time.monotonic() < deadline:  # the OOM killer, an operator: SIGKILL from outside
            for pid in set(_sandbox_processes(uid, wait=0)):
                try:
                    with open(f"/proc/{pid}/comm") as comm:
                        running_the_cell = comm.read().strip() == "referee-sleeper"
                    if running_the_cell and os.stat(f"/proc/{pid}").st_uid == uid:  # the job, not its worker
                        os.kill(pid, signal.SIGKILL)
                        killed.append(pid)
                except OSError:
                    pass
            time.sleep(0.02)
        cell.join(30)
        [result] = results
        assert killed and result.sandbox_failed and not result.killed and not result.ok, result
        assert "killed from outside" in result.text
        assert session.run("'kept' in globals()").text == f"{RESTARTED}\nFalse"


@pytest.mark.parametrize("level", GUARDED_LEVELS)
def test_a_cell_that_stops_its_worker_costs_no_restart(level):
    # In a pid namespace where the job has the worker's uid, kill(-1, SIGSTOP) stops the worker; it used
    # to stay deaf until the reply deadline (15 s) and then be replaced. Elsewhere the signal cannot reach it.
    with PythonSession(FAST, isolation=level) as session:
        session.run("1")
        worker = session._sandbox.process.pid
        stopped = session.run("import os, signal\nfor target in (-1, os.getppid()):\n    try:\n"
                              "        os.kill(target, signal.SIGSTOP)\n    except OSError:\n        pass\n")
        assert not stopped.sandbox_failed, stopped
        session.reset()
        assert session._sandbox.process is not None and session._sandbox.process.pid == worker  # resumed, kept
        assert session.run("print(2)").text == "2"
