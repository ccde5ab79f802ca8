"""What a rollout leaves that the next rollout (after reset()) or the host could see: System V IPC objects
(a job gets an IPC namespace of its own), files in the private /tmp and /dev/shm of a worker whose jobs
keep its uid (swept after each job), the fork server's memory (not dumpable; a job that stays root has no
capability)."""

import importlib.util
import os
import uuid

import pytest

from referee.rewards.tools import PythonTool

_spec = importlib.util.spec_from_file_location("tool_cells", os.path.join(os.path.dirname(__file__), "test_hostile_tool_cells.py"))
TOOL_CELLS = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(TOOL_CELLS)
GUARDED_LEVELS = TOOL_CELLS.GUARDED_LEVELS
LIMITS = TOOL_CELLS.CellLimits(timeout=5.0, cpu_seconds=5.0, memory_mb=256, output_chars=400)

SHM = """import ctypes
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
def segment(key, size, flags):
    shmid = libc.shmget(key, size, flags)
    if shmid < 0:
        return shmid, None
    addr = libc.shmat(shmid, None, 0)
    return shmid, addr
"""


def _sysv_segments_of(uid):
    with open("/proc/sysvipc/shm") as handle:
        rows = [line.split() for line in handle.readlines()[1:]]
    return [(int(row[0]), int(row[1]), int(row[14])) for row in rows if int(row[7]) == uid]  # key, shmid, rss


@pytest.mark.parametrize("level", GUARDED_LEVELS)
def test_a_sysv_shared_memory_segment_dies_with_its_rollout(level):
    key = int(uuid.uuid4().hex[:7], 16)
    token = uuid.uuid4().hex
    tool = PythonTool(LIMITS, isolation=level)
    try:
        tool.reset()
        planted = tool.python(SHM + f"shmid, addr = segment({key}, 4096, 0o1666)\n"
                              f"ctypes.memmove(addr, {token.encode()!r}, 32)\nshmid >= 0")
        assert planted == "True"
        tool.reset()
        seen = tool.python(SHM + f"shmid, addr = segment({key}, 0, 0)\n"
                           "ctypes.string_at(addr, 32).decode() if addr else 'gone'")
        assert token not in seen, f"the next rollout read {seen}"
    finally:
        uid = tool._session._lease.uid if tool._session._lease is not None else None
        tool._close()
        for _, shmid, _ in _sysv_segments_of(uid) if level == "uid" else []:  # in the host's IPC namespace
            os.system(f"ipcrm -m {shmid}")


@pytest.mark.skipif("uid" not in GUARDED_LEVELS, reason="no uid level here")
def test_at_uid_no_sysv_segment_stays_on_the_host_past_memory_mb():
    key = int(uuid.uuid4().hex[:6], 16) << 4
    tool = PythonTool(LIMITS, isolation="uid")
    try:
        tool.reset()
        kept = tool.python(SHM + "total = 0\n"
                           f"for key in range({key}, {key + 6}):\n"
                           "    shmid, addr = segment(key, 64 << 20, 0o1600)\n"
                           "    ctypes.memset(addr, 1, 64 << 20)\n"
                           "    libc.shmdt(ctypes.c_void_p(addr))\n"
                           "    total += 64\ntotal")
        uid = tool._session._lease.uid
    finally:
        tool._close()
    left = _sysv_segments_of(uid)
    try:
        assert kept == "384"  # MiB a cell of memory_mb=256 wrote and detached (in its own IPC namespace)
        assert left == [], f"after close, uid {uid} holds {sum(rss for *_, rss in left) >> 20} MiB in " \
                           f"{len(left)} SysV segments on the host"
    finally:
        for _, shmid, _ in left:
            os.system(f"ipcrm -m {shmid}")


@pytest.mark.parametrize("level", GUARDED_LEVELS)
def test_files_in_tmp_and_dev_shm_die_with_their_rollout(level):
    name = f"referee-leak-{uuid.uuid4().hex}"
    tool = PythonTool(LIMITS, isolation=level)
    try:
        tool.reset()
        tool.python(f"for place in ('/tmp', '/dev/shm'):\n    open(place + '/{name}', 'w').write('rollout one')")
        tool.reset()
        seen = tool.python(f"import os\n[p for p in ('/tmp/{name}', '/dev/shm/{name}') if os.path.exists(p)]")
        assert seen == "[]", f"the next rollout found {seen}"
    finally:
        tool._close()


@pytest.mark.parametrize("level", GUARDED_LEVELS)
def test_no_cell_rewrites_the_fork_servers_memory_for_later_rollouts(level):
    plant = ("import os, sys\naddr = id(sys.version) + sys.getsizeof('') - 1  # the str's characters\n"
             "with open(f'/proc/{os.getppid()}/mem', 'r+b', buffering=0) as mem:\n"
             "    mem.seek(addr)\n    mem.write(b'PWNED')\n'written'")
    tool = PythonTool(LIMITS, isolation=level)
    try:
        tool.reset()
        planted = tool.python(plant)
        tool.reset()
        later = tool.python("import sys\nsys.version[:5]")
        assert later != "'PWNED'", f"the fork server was rewritten by a cell ({planted}); the next rollout saw {later}"
    finally:
        tool._close()
