"""The ``landlock + seccomp`` layer: the seccomp program's decisions (run through a BPF interpreter,
for both architectures it knows), the Landlock rules and their degradation by ABI, each right
holding in a confined child, and the layer in the isolation report, the fail-closed policy and the
verdicts. Signals sent here are signal 0 (a permission check that delivers nothing)."""

import ctypes
import errno
import os
import socket
import struct
import tempfile

import pytest
from hypothesis import given, strategies as st

from referee.verifiers import code
from referee.verifiers.sandbox import confine, landlock, seccomp
from referee.verifiers.sandbox import isolation as iso

CONFINES = confine.probe()[0]
needs_confinement = pytest.mark.skipif(not CONFINES, reason=confine.probe()[1])
ALLOW, KILL = seccomp.RET_ALLOW, seccomp.RET_KILL_PROCESS
EPERM, ENOSYS = seccomp.RET_ERRNO | errno.EPERM, seccomp.RET_ERRNO | errno.ENOSYS
CLONE_THREAD_FLAGS = 0x003D0F00  # what glibc's pthread_create passes to clone
CLONE_NEWUSER, CLONE_NEWNET = 0x10000000, 0x40000000


def run_bpf(program, nr, arch, args=(0,) * 6):
    """A classic-BPF interpreter for the instructions the filter uses, over one struct seccomp_data."""
    data = struct.pack("<IIQ6Q", nr, arch, 0, *[a & 0xFFFFFFFFFFFFFFFF for a in (*args, *[0] * (6 - len(args)))])
    acc, pc = 0, 0
    while True:
        op, jt, jf, k = program[pc]
        pc += 1
        if op == 0x20:
            acc = struct.unpack_from("<I", data, k)[0]
        elif op == 0x06:
            return k
        elif op in (0x15, 0x45, 0x35):
            taken = {0x15: acc == k, 0x45: bool(acc & k), 0x35: acc >= k}[op]
            pc += jt if taken else jf
        else:
            raise AssertionError(f"unknown BPF op {op:#x}")


@pytest.fixture(params=sorted(seccomp.ARCHITECTURES))
def arch(request):
    return seccomp.ARCHITECTURES[request.param]


def decide(arch, name, *args, pgid=4242):
    return run_bpf(seccomp.job_filter(arch, pgid), arch.calls[name], arch.audit_arch, args)


def test_the_filter_refuses_the_calls_a_job_never_needs(arch):
    for name in ("ptrace", "process_vm_readv", "process_vm_writev", "mount", "umount2", "pivot_root", "unshare",
                 "setns", "chroot", "kexec_load", "bpf", "perf_event_open", "keyctl", "add_key", "io_uring_setup",
                 "socket", "userfaultfd", "pidfd_getfd", "open_tree", "fsopen"):
        assert decide(arch, name) == EPERM, name
    assert decide(arch, "clone3") == ENOSYS  # the C library then falls back to clone, whose flags the filter reads


def test_the_filter_allows_what_programs_use(arch):
    assert decide(arch, "clone", CLONE_THREAD_FLAGS) == ALLOW  # threads (the JVM, Go's runtime)
    assert decide(arch, "clone", 17) == ALLOW  # fork: SIGCHLD only
    assert decide(arch, "socketpair", socket.AF_UNIX, socket.SOCK_STREAM) == ALLOW  # asyncio, multiprocessing
    everything_else = set(range(0, 460)) - set(arch.calls.values())
    program = seccomp.job_filter(arch, 4242)
    assert {run_bpf(program, nr, arch.audit_arch) for nr in everything_else} == {ALLOW}


def test_the_filter_refuses_new_namespaces_and_other_sockets(arch):
    assert decide(arch, "clone", CLONE_THREAD_FLAGS | CLONE_NEWUSER) == EPERM
    assert decide(arch, "clone", 17 | CLONE_NEWNET) == EPERM
    assert decide(arch, "socketpair", socket.AF_INET, socket.SOCK_STREAM) == EPERM
    assert decide(arch, "socketpair", socket.AF_NETLINK, socket.SOCK_RAW) == EPERM


def test_the_filter_keeps_kill_inside_the_jobs_process_group(arch):
    assert decide(arch, "kill", -1, 9) == EPERM  # every process the caller may signal
    assert decide(arch, "kill", -4243, 9) == EPERM  # another process group
    assert decide(arch, "kill", -4242, 9) == ALLOW  # its own group
    assert decide(arch, "kill", 0, 9) == ALLOW  # its own group, by 0
    assert decide(arch, "kill", 4243, 9) == ALLOW  # a pid: Landlock's signal scope decides


@given(st.integers(-(2**31), 2**31 - 1), st.integers(0, 2**32 - 1))
def test_kill_is_decided_on_the_pid_as_an_int_whatever_the_upper_bits(pid, upper):
    arch = seccomp.ARCHITECTURES["x86_64"]
    raw = (upper << 32) | (pid & 0xFFFFFFFF)  # the kernel reads pid_t from the low 32 bits of the register
    wanted = EPERM if pid == -1 or (pid < 0 and pid != -4242) else ALLOW
    assert decide(arch, "kill", raw, 9) == wanted


def test_other_architectures_and_x32_calls_never_get_through():
    x86 = seccomp.ARCHITECTURES["x86_64"]
    program = seccomp.job_filter(x86, 1)
    assert run_bpf(program, x86.calls["kill"], 0x40000003, (-1, 9)) == KILL  # i386 (int 0x80) on x86-64
    assert run_bpf(program, 0x40000000 | 62, x86.audit_arch, (-1, 9)) == EPERM  # x32's kill
    arm = seccomp.ARCHITECTURES["aarch64"]
    assert run_bpf(seccomp.job_filter(arm, 1), 129, 0x40000028, (-1, 9)) == KILL  # 32-bit ARM


def test_both_architectures_name_the_same_calls():
    x86, arm = (set(seccomp.ARCHITECTURES[a].calls) for a in ("x86_64", "aarch64"))
    assert arm <= x86 and x86 - arm == {"iopl", "ioperm", "uselib", "modify_ldt"}  # x86-only calls
    assert len(set(seccomp.ARCHITECTURES["aarch64"].calls.values())) == len(arm)  # no number twice


def test_landlock_degrades_by_abi_with_a_reason_per_missing_right():
    assert landlock.missing_rights(7) == landlock.missing_rights(6) == []
    assert len(landlock.missing_rights(1)) == 5
    assert any("signals" in why for why in landlock.missing_rights(5))
    assert any("TCP" in why for why in landlock.missing_rights(3))
    assert landlock.handled_fs(1) & landlock.REFER == 0 and landlock.handled_fs(2) & landlock.REFER
    assert landlock.handled_fs(4) & landlock.IOCTL_DEV == 0 and landlock.handled_fs(7) & landlock.IOCTL_DEV


def test_the_rules_read_the_system_and_write_only_what_is_named():
    rules = confine.job_rules(["/opt/py"], ["/tmp/job-1"])
    writable = [path for path, rights in rules if rights & landlock.MAKE_REG]
    assert writable == ["/tmp/job-1"]
    assert ("/usr", landlock.READ) in rules and ("/opt/py", landlock.READ) in rules
    assert not any(path in ("/home", "/root", "/tmp", "/dev/shm", "/etc") for path, _ in rules)
    devices = {path: rights for path, rights in rules if path.startswith("/dev/")}
    assert devices["/dev/null"] & landlock.WRITE_FILE and not devices["/dev/urandom"] & landlock.WRITE_FILE


def in_confined_child(check, *, write=(), landlock_only=False, abi=None):
    """Run ``check`` in a forked, confined child (Landlock at ``abi``, this kernel's by default, and the
    seccomp filter unless ``landlock_only``); its return value (a small int) or 99 when it raised."""
    child = os.fork()
    if child == 0:
        status = 99
        try:
            os.setsid()
            ctypes.CDLL(None).prctl(38, 1, 0, 0, 0)  # PR_SET_NO_NEW_PRIVS
            rules = confine.job_rules(iso.read_only_paths(), list(write))
            if landlock_only:
                landlock.restrict_self(rules, abi or landlock.abi_version())
            else:
                confine.confine_job(rules)
            status = int(check())
        except BaseException:
            pass
        finally:
            os._exit(status)
    return os.waitstatus_to_exitcode(os.waitpid(child, 0)[1])


def refused(action):
    try:
        action()
    except PermissionError:
        return True
    return False


@needs_confinement
def test_a_confined_job_reads_the_system_and_writes_only_its_folder(tmp_path):
    folder = tempfile.mkdtemp(dir="/dev/shm" if os.path.isdir("/dev/shm") else None)
    outside = tempfile.mkdtemp()
    try:
        def check():
            ok = open("/usr/lib/os-release").read() if os.path.exists("/usr/lib/os-release") else True
            ok = ok and open(f"{folder}/a", "w").write("x") == 1 and os.listdir(folder) == ["a"]
            ok = ok and refused(lambda: open(f"{outside}/b", "w"))
            ok = ok and refused(lambda: os.listdir(os.path.expanduser("~")))
            ok = ok and refused(lambda: open("/etc/hostname").read())
            ok = ok and open("/dev/null", "w").write("x") == 1
            return 7 if ok else 1

        assert in_confined_child(check, write=[folder]) == 7
        assert os.listdir(outside) == []
    finally:
        for path in (folder, outside):
            for name in os.listdir(path):
                os.unlink(os.path.join(path, name))
            os.rmdir(path)


@needs_confinement
def test_landlock_alone_refuses_tcp_signals_and_memory_outside_the_job():
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    port, caller = listener.getsockname()[1], os.getpid()
    try:
        def check():
            sock = socket.socket()  # Landlock alone: the socket is made, the connection refused
            ok = refused(lambda: sock.connect(("127.0.0.1", port)))
            ok = ok and refused(lambda: os.kill(caller, 0))  # signal scope (ABI 6)
            ok = ok and refused(lambda: open(f"/proc/{caller}/mem", "rb"))
            return 7 if ok else 1

        assert in_confined_child(check, landlock_only=True) == 7 or landlock.abi_version() < 6
    finally:
        listener.close()


@needs_confinement
def test_the_filter_refuses_sockets_kill_minus_one_and_namespaces_but_not_threads_or_pairs():
    def check():
        import threading

        ok = refused(lambda: socket.socket(socket.AF_UNIX))
        ok = ok and refused(lambda: os.kill(-1, 0)) and refused(lambda: os.kill(-os.getppid(), 0))
        os.kill(0, 0)  # its own group
        ok = ok and ctypes.CDLL(None, use_errno=True).unshare(CLONE_NEWUSER) == -1
        done = []
        thread = threading.Thread(target=lambda: done.append(1))
        thread.start()
        thread.join()
        a, b = socket.socketpair()
        a.send(b"x")
        return 7 if ok and done == [1] and b.recv(1) == b"x" else 1

    assert in_confined_child(check) == 7


@needs_confinement
def test_the_layer_is_reported_named_in_verdicts_and_required_by_the_worker():
    basic = iso.available_isolation("basic")
    layer = next(layer for layer in basic.layers if layer.name == confine.LAYER_NAME)
    assert layer.on and "Landlock ABI" in layer.why
    assert not iso.confined(iso.isolation_of("full"))
    verdict = code.verify("def f(x):\n    return 2 * x\n", {"format": "call", "fn_name": "f", "inputs": [[1]],
                          "outputs": [2]}, isolation="basic", allow_weak_isolation=True, workers=1)
    assert verdict.correct and verdict.details["confinement"] == confine.LAYER_NAME


@needs_confinement
def test_where_the_layer_holds_basic_is_no_longer_weak_for_a_user(monkeypatch):
    monkeypatch.setattr(iso, "_is_root", lambda: False)
    monkeypatch.setattr(iso, "probe_bubblewrap", lambda: (False, "bwrap is not installed (apt-get install bubblewrap)"))
    monkeypatch.setattr(iso, "probe_own_namespaces", lambda: (False, "user namespaces are disabled here"))
    basic = iso.available_isolation("auto")
    assert basic.level == "basic"
    assert iso.exposures(basic) == ([] if landlock.abi_version() >= confine.SIGNAL_SCOPE_ABI
                                    else ["signal your processes"])
    monkeypatch.setattr(confine, "probe", lambda: (False, "this kernel has no Landlock"))
    assert iso.exposures(iso.available_isolation("basic"))[0] == "signal your processes"


def test_as_root_basic_stays_weak_with_the_layer():
    if os.geteuid() != 0:
        pytest.skip("jobs at basic are root only when the caller is")
    assert iso.exposures(iso.available_isolation("basic"))[0] == "signal your processes"
    assert not confine.holds(jobs_are_root=True)


@needs_confinement
@pytest.mark.parametrize("abi", [1, 2, 3, 4, 5, 6])
def test_an_older_abi_still_confines_files_and_handles_only_what_it_knows(abi):
    """The ruleset as an older kernel takes it (its struct size, its rights), tried on this kernel."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    port = listener.getsockname()[1]
    try:
        def check():
            ok = os.path.isdir("/usr/lib") and bool(os.listdir("/usr/lib"))
            ok = ok and refused(lambda: open("/etc/hostname").read())
            tcp_refused = refused(lambda: socket.create_connection(("127.0.0.1", port), timeout=2).close())
            return 7 if ok and tcp_refused == (abi >= 4) else 1

        assert in_confined_child(check, landlock_only=True, abi=abi) == 7
    finally:
        listener.close()


@needs_confinement
def test_uid_is_strong_even_where_others_can_enter_your_home(monkeypatch):
    home = tempfile.mkdtemp()
    try:
        monkeypatch.setenv("HOME", home)
        os.chmod(home, 0o755)  # without the layer, jobs of their own uid could read it (test_code_isolation.py)
        assert iso.exposures(iso.isolation_of("uid")) == []
    finally:
        os.rmdir(home)


@needs_confinement
def test_the_python_a_job_runs_on_is_read_only_to_it():
    """The venv and the installation jobs import from (readable, so that programs can import) take
    no planted ``.pth``: as root here, only Landlock refuses the write."""
    import sysconfig
    import uuid

    planted = [os.path.join(sysconfig.get_paths()[key], f"referee-planted-{uuid.uuid4().hex}.pth")
               for key in ("purelib", "stdlib")]
    try:
        def check():
            ok = all(refused(lambda path=path: open(path, "w").write("import os")) for path in planted)
            return 7 if ok and os.listdir(sysconfig.get_paths()["purelib"]) else 1

        assert in_confined_child(check) == 7
        assert [path for path in planted if os.path.exists(path)] == []
    finally:
        for path in planted:
            if os.path.exists(path):
                os.unlink(path)
