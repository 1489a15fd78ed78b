"""The seccomp filter: a well-formed program, the kernel's own syscall numbers, and the policy
run for real under bubblewrap, as root and as the unprivileged uid assay drops to. Every
refusal is shown to be the filter's doing: the same command run without it gets further."""

from __future__ import annotations

import errno
import json
import os
import re
import shutil
import struct
import subprocess
import tempfile
import textwrap
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import pytest

from assay.sandbox.seccomp import (
    ARCHITECTURES,
    DENIED_SYSCALLS,
    UnsupportedArchitecture,
    architecture,
    filter_program,
)

# Written out from the kernel headers here rather than imported, so that a wrong constant
# in the module under test cannot agree with itself.
LD_W_ABS = 0x20  # BPF_LD | BPF_W | BPF_ABS
JEQ_K = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
JGE_K = 0x35  # BPF_JMP | BPF_JGE | BPF_K
JSET_K = 0x45  # BPF_JMP | BPF_JSET | BPF_K
RET_K = 0x06  # BPF_RET | BPF_K
SECCOMP_DATA_SIZE = 64  # int nr, u32 arch, u64 ip, u64 args[6]
ALLOW = 0x7FFF0000
KILL_PROCESS = 0x80000000
EPERM = 0x00050000 | errno.EPERM
ENOSYS = 0x00050000 | errno.ENOSYS
AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}
AUDIT_ARCH_I386 = 0x40000003

BWRAP = "bwrap"
#: The interpreter inside the sandbox: the unprivileged uid cannot read one under /root.
SANDBOX_PYTHON = "/usr/bin/python3"
NOBODY = 65534
AS_NOBODY = (
    "setpriv",
    f"--reuid={NOBODY}",
    f"--regid={NOBODY}",
    "--clear-groups",
    "--inh-caps=-all",
)
IDENTITIES: Mapping[str, tuple[str, ...]] = {"root": (), "nobody": AS_NOBODY}
SIGSYS_EXIT = 128 + 31  # how bwrap reports a command killed by SIGSYS

X86_64_HEADERS = (
    "/usr/include/x86_64-linux-gnu/asm/unistd_64.h",
    "/usr/include/asm/unistd_64.h",
)
GENERIC_HEADER = "/usr/include/asm-generic/unistd.h"


# -- the program itself ---------------------------------------------------------------


def decode(program: bytes) -> list[tuple[int, int, int, int]]:
    assert len(program) % 8 == 0, "not a whole number of struct sock_filter"
    return list(struct.iter_unpack("<HBBI", program))


def evaluate(program: bytes, *, nr: int, arch: int, args: Sequence[int] = ()) -> int:
    """Runs the program over one `struct seccomp_data`, as the kernel would."""
    padded = [arg & 0xFFFFFFFFFFFFFFFF for arg in args] + [0] * (6 - len(args))
    data = struct.pack("<iIQ6Q", nr, arch, 0, *padded)
    instructions = decode(program)
    pc, acc = 0, 0
    while True:
        code, jt, jf, k = instructions[pc]
        if code == LD_W_ABS:
            (acc,) = struct.unpack_from("<I", data, k)
            pc += 1
        elif code == JEQ_K:
            pc += 1 + (jt if acc == k else jf)
        elif code == JGE_K:
            pc += 1 + (jt if acc >= k else jf)
        elif code == JSET_K:
            pc += 1 + (jt if acc & k else jf)
        elif code == RET_K:
            return k
        else:
            raise AssertionError(f"unexpected opcode {code:#x} at {pc}")


@pytest.mark.parametrize("machine", sorted(ARCHITECTURES))
def test_program_is_well_formed(machine: str) -> None:
    instructions = decode(filter_program(machine))
    count = len(instructions)
    assert 0 < count <= 4096
    for index, (code, jt, jf, k) in enumerate(instructions):
        assert code in (LD_W_ABS, JEQ_K, JGE_K, JSET_K, RET_K), f"opcode {code:#x} at {index}"
        if code == LD_W_ABS:
            assert k % 4 == 0 and k + 4 <= SECCOMP_DATA_SIZE, f"load outside seccomp_data: {k}"
        if code in (JEQ_K, JGE_K, JSET_K):
            assert index + 1 + jt < count, f"jt of {index} leaves the program"
            assert index + 1 + jf < count, f"jf of {index} leaves the program"
        else:
            assert jt == jf == 0
    # Jumps only go forward, so ending in a return means every path ends in one.
    assert instructions[-1][0] == RET_K
    # The architecture is checked before any syscall number is read.
    assert instructions[0] == (LD_W_ABS, 0, 0, 4)


@pytest.mark.parametrize("machine", sorted(ARCHITECTURES))
def test_policy_decisions(machine: str) -> None:
    program = filter_program(machine)
    native = AUDIT_ARCH[machine]
    nr = ARCHITECTURES[machine].syscalls

    def decide(name: str, *args: int) -> int:
        return evaluate(program, nr=nr[name], arch=native, args=args)

    sigchld = 17
    thread_flags = 0x003D0F00  # what glibc's pthread_create passes to clone
    namespaces = [1 << 17, 1 << 25, 1 << 26, 1 << 27, 1 << 28, 1 << 29, 1 << 30]
    for flag in namespaces:
        assert decide("unshare", flag) == EPERM, hex(flag)
        assert decide("clone", flag | sigchld) == EPERM, hex(flag)
    assert decide("unshare", 0x80) == EPERM  # CLONE_NEWTIME
    assert decide("unshare", (1 << 32) | (1 << 28)) == EPERM
    assert decide("unshare", 0x00000600) == ALLOW  # CLONE_FS | CLONE_FILES
    assert decide("clone", sigchld) == ALLOW
    assert decide("clone", thread_flags) == ALLOW
    assert decide("clone3") == ENOSYS
    for name in DENIED_SYSCALLS:
        assert decide(name) == EPERM, name
    assert decide("ioctl", 0, 0x5412) == EPERM  # TIOCSTI
    assert decide("ioctl", 0, 0x541C) == EPERM  # TIOCLINUX
    assert decide("ioctl", 0, (1 << 32) | 0x5412) == EPERM  # the kernel drops the high bits
    assert decide("ioctl", 0, 0x5401) == ALLOW  # TCGETS
    ordinary = {"x86_64": [0, 1, 39, 59], "aarch64": [63, 64, 172, 221]}[machine]
    for number in ordinary:  # read, write, getpid, execve
        assert evaluate(program, nr=number, arch=native) == ALLOW
    for foreign in [AUDIT_ARCH_I386, *(a for m, a in AUDIT_ARCH.items() if m != machine)]:
        assert evaluate(program, nr=nr["unshare"], arch=foreign) == KILL_PROCESS
        assert evaluate(program, nr=39, arch=foreign) == KILL_PROCESS
    if machine == "x86_64":
        assert decide("iopl", 3) == EPERM
        assert decide("ioperm", 0, 1, 1) == EPERM
        assert evaluate(program, nr=0x40000000 + 39, arch=native) == EPERM  # x32 getpid


def test_unsupported_architecture_is_a_clear_error() -> None:
    with pytest.raises(UnsupportedArchitecture, match="riscv64") as raised:
        filter_program("riscv64")
    assert raised.value.machine == "riscv64"
    assert "x86_64" in str(raised.value) and "aarch64" in str(raised.value)


def test_default_is_this_machine() -> None:
    machine = os.uname().machine
    assert machine in ARCHITECTURES, f"tests run on a supported architecture, not {machine}"
    assert architecture().machine == machine
    assert filter_program() == filter_program(machine)


# -- syscall numbers against the kernel's headers -----------------------------------------


def header_numbers(path: str) -> dict[str, int]:
    text = Path(path).read_text()
    return {
        name: int(number)
        for name, number in re.findall(
            r"^#define __NR(?:3264)?_(\w+)\s+(\d+)\s*$", text, re.MULTILINE
        )
    }


def first_existing(paths: Sequence[str]) -> str | None:
    return next((path for path in paths if Path(path).is_file()), None)


def test_x86_64_numbers_match_kernel_header() -> None:
    header = first_existing(X86_64_HEADERS)
    if header is None:
        pytest.skip("no asm/unistd_64.h here (Debian: apt-get install linux-libc-dev)")
    kernel = header_numbers(header)
    table = ARCHITECTURES["x86_64"].syscalls
    assert {name: kernel.get(name) for name in table} == dict(table)


def test_aarch64_numbers_match_generic_header() -> None:
    if not Path(GENERIC_HEADER).is_file():
        pytest.skip("no asm-generic/unistd.h here (Debian: apt-get install linux-libc-dev)")
    kernel = header_numbers(GENERIC_HEADER)
    table = ARCHITECTURES["aarch64"].syscalls
    assert {name: kernel.get(name) for name in table} == dict(table)


def syscall_numbers() -> dict[str, int]:
    """This machine's numbers, from the kernel's header when there is one: the probes
    below must not take them from the table they are checking."""
    machine = os.uname().machine
    paths = X86_64_HEADERS if machine == "x86_64" else (GENERIC_HEADER,)
    header = first_existing(paths)
    return header_numbers(header) if header else dict(ARCHITECTURES[machine].syscalls)


# -- real runs under bubblewrap -----------------------------------------------------------


@pytest.fixture(scope="module")
def program() -> bytes:
    return filter_program()


@pytest.fixture(params=sorted(IDENTITIES))
def identity(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def workdir(identity: str) -> Iterator[Path]:
    """A writable directory outside /tmp (the sandbox gets a fresh /tmp), owned by whoever
    the command runs as."""
    assert os.geteuid() == 0, "these tests run bubblewrap as root, as assay does before it drops"
    path = Path(tempfile.mkdtemp(prefix="assay-seccomp-", dir="/var/tmp"))
    path.chmod(0o755)
    (path / "tmp").mkdir()
    if identity == "nobody":
        for entry in [path, path / "tmp"]:
            os.chown(entry, NOBODY, NOBODY)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def sandboxed(
    argv: Sequence[str],
    *,
    identity: str,
    program: bytes | None,
    workdir: Path,
    timeout: float = 180,
) -> subprocess.CompletedProcess[str]:
    """`argv` under bubblewrap, with the filter on a memfd when `program` is given."""
    for tool in (BWRAP, "setpriv", "unshare"):
        assert shutil.which(tool), f"{tool} is needed for these tests"
    command = [
        BWRAP,
        "--ro-bind", "/", "/",
        "--dev", "/dev",
        "--proc", "/proc",
        "--perms", "1777", "--tmpfs", "/tmp",
        "--perms", "1777", "--tmpfs", "/dev/shm",
        "--bind", str(workdir), str(workdir),
        "--chdir", str(workdir),
        "--unshare-pid",
        "--die-with-parent",
    ]  # fmt: skip
    fds: list[int] = []
    if program is not None:
        fd = os.memfd_create("assay-seccomp")
        fds.append(fd)
        os.write(fd, program)
        os.lseek(fd, 0, os.SEEK_SET)
        command += ["--seccomp", str(fd)]
    command += ["--", *IDENTITIES[identity], *argv]
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": str(workdir),
        "TMPDIR": str(workdir / "tmp"),
        "LANG": "C.UTF-8",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GOCACHE": str(workdir / "gocache"),
        "GOPATH": str(workdir / "gopath"),
        "GOTOOLCHAIN": "local",
    }
    try:
        return subprocess.run(
            command,
            pass_fds=fds,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    finally:
        for fd in fds:
            os.close(fd)


def both(
    argv: Sequence[str], *, identity: str, program: bytes, workdir: Path
) -> tuple[subprocess.CompletedProcess[str], subprocess.CompletedProcess[str]]:
    """`argv` without the filter, then with it."""
    return (
        sandboxed(argv, identity=identity, program=None, workdir=workdir),
        sandboxed(argv, identity=identity, program=program, workdir=workdir),
    )


@pytest.mark.parametrize("argv", [["unshare", "-U", "true"], ["unshare", "-Ur", "true"]])
def test_user_namespace_is_refused(
    argv: list[str], identity: str, program: bytes, workdir: Path
) -> None:
    unfiltered, filtered = both(argv, identity=identity, program=program, workdir=workdir)
    assert unfiltered.returncode == 0, f"without the filter it works: {unfiltered.stderr}"
    assert filtered.returncode != 0
    assert "Operation not permitted" in filtered.stderr


@pytest.mark.parametrize("flag", ["-m", "-n", "-i", "-u", "-C", "-T", "-p"])
def test_other_namespaces_are_refused_to_root(flag: str, program: bytes, tmp_path: Path) -> None:
    # Only root keeps the capabilities these need without a user namespace.
    argv = ["unshare", "--fork", flag, "true"]
    unfiltered, filtered = both(argv, identity="root", program=program, workdir=tmp_path)
    assert unfiltered.returncode == 0, f"without the filter it works: {unfiltered.stderr}"
    assert filtered.returncode != 0
    assert "Operation not permitted" in filtered.stderr


PYTHON_UNSHARE = textwrap.dedent(
    """
    import ctypes, os
    if hasattr(os, "unshare"):
        os.unshare(os.CLONE_NEWUSER)
    else:  # os.unshare arrived in Python 3.12
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.unshare(0x10000000) != 0:
            code = ctypes.get_errno()
            raise OSError(code, os.strerror(code))
    print("in a new user namespace")
    """
)


def test_python_unshare_raises_permission_error(
    identity: str, program: bytes, workdir: Path
) -> None:
    argv = [SANDBOX_PYTHON, "-c", PYTHON_UNSHARE]
    unfiltered, filtered = both(argv, identity=identity, program=program, workdir=workdir)
    assert "in a new user namespace" in unfiltered.stdout, unfiltered.stderr
    assert filtered.returncode != 0
    assert "PermissionError" in filtered.stderr, filtered.stderr


#: Each denied syscall called with harmless arguments; prints {call: errno name or "ok"}.
PROBE = textwrap.dedent(
    """
    import ctypes, errno, json, os, sys
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    nr = json.loads(sys.argv[1])
    L = ctypes.c_long
    calls = {
        "setns": ("setns", L(-1), L(0)),
        "mount": ("mount", None, b"/", None, L(1 << 31), None),
        "umount2": ("umount2", b"/", L(1 << 31)),
        "pivot_root": ("pivot_root", None, None),
        "open_tree": ("open_tree", L(-1), None, L(0xFFFFFFFF)),
        "move_mount": ("move_mount", L(-1), None, L(-1), None, L(0xFFFFFFFF)),
        "fsopen": ("fsopen", None, L(0xFFFFFFFF)),
        "fsconfig": ("fsconfig", L(-1), L(0), None, None, L(0)),
        "fsmount": ("fsmount", L(-1), L(0xFFFFFFFF), L(0)),
        "fspick": ("fspick", L(-1), None, L(0xFFFFFFFF)),
        "mount_setattr": ("mount_setattr", L(-1), None, L(0xFFFFFFFF), None, L(0)),
        "keyctl": ("keyctl", L(0), L(-1), L(0)),
        "add_key": ("add_key", None, None, None, L(0), L(0)),
        "request_key": ("request_key", None, None, None, L(0)),
        "bpf": ("bpf", L(-1), None, L(0)),
        "perf_event_open": ("perf_event_open", None, L(0), L(-1), L(-1), L(0)),
        "userfaultfd": ("userfaultfd", L(0xFFFFFFFF)),
        "kexec_load": ("kexec_load", L(0), L(0), None, L(0)),
        "kexec_file_load": ("kexec_file_load", L(-1), L(-1), L(0), None, L(0)),
        "init_module": ("init_module", None, L(0), None),
        "finit_module": ("finit_module", L(-1), None, L(0)),
        "delete_module": ("delete_module", None, L(0)),
        "open_by_handle_at": ("open_by_handle_at", L(-1), None, L(0)),
        "reboot": ("reboot", L(0), L(0), L(0), None),
        "swapon": ("swapon", None, L(0)),
        "swapoff": ("swapoff", None),
        "syslog": ("syslog", L(10), None, L(0)),
        "acct": ("acct", b"/nonexistent/acct"),
        "quotactl": ("quotactl", L(0), None, L(0), None),
        "lookup_dcookie": ("lookup_dcookie", L(0), None, L(0)),
        "iopl": ("iopl", L(3)),
        "ioperm": ("ioperm", L(0), L(1), L(1)),
        "clone3": ("clone3", None, L(0)),
        "ioctl TIOCSTI": ("ioctl", L(0), L(0x5412), None),
        "ioctl TIOCSTI high bits": ("ioctl", L(0), L(0x100005412), None),
        "ioctl TIOCLINUX": ("ioctl", L(0), L(0x541C), None),
        "ioctl TIOCGWINSZ": ("ioctl", L(0), L(0x5413), None),
    }

    def outcome(result):
        return "ok" if result >= 0 else errno.errorcode[ctypes.get_errno()]

    out = {}
    for label, (name, *args) in calls.items():
        if name in nr:  # iopl and ioperm exist on x86 only
            out[label] = outcome(libc.syscall(L(nr[name]), *args))
    for label, flags in [("clone NEWUSER", 0x10000000 | 17), ("clone plain", 17)]:
        pid = libc.syscall(L(nr["clone"]), L(flags), None, None, None, None)
        if pid == 0:
            os._exit(0)
        if pid > 0:
            os.waitpid(pid, 0)
        out[label] = outcome(pid)
    # Last: once it succeeds, this process is in a user namespace of its own.
    out["unshare NEWUSER"] = outcome(libc.syscall(L(nr["unshare"]), L(0x10000000)))
    print(json.dumps(out))
    """
)

#: Calls whose refusal the kernel would not give on its own: without the filter each one
#: gets another answer, so the filter is what refused it.
REFUSED_ONLY_BY_THE_FILTER = (
    "setns",
    "mount",
    "umount2",
    "open_tree",
    "keyctl",
    "add_key",
    "bpf",
    "perf_event_open",
    "userfaultfd",
    "open_by_handle_at",
    "unshare NEWUSER",
    "clone NEWUSER",
    "ioctl TIOCSTI",
    "ioctl TIOCSTI high bits",
    "ioctl TIOCLINUX",
)


def test_denied_syscalls_fail_with_eperm(identity: str, program: bytes, workdir: Path) -> None:
    argv = [SANDBOX_PYTHON, "-c", PROBE, json.dumps(syscall_numbers())]
    unfiltered, filtered = both(argv, identity=identity, program=program, workdir=workdir)
    assert unfiltered.returncode == 0, unfiltered.stderr
    assert filtered.returncode == 0, filtered.stderr
    before, after = json.loads(unfiltered.stdout), json.loads(filtered.stdout)

    expected = {label: "EPERM" for label in after}
    expected["clone3"] = "ENOSYS"
    expected["clone plain"] = "ok"
    expected["ioctl TIOCGWINSZ"] = "ENOTTY"  # other ioctls still reach the kernel
    assert after == expected
    refused_anyway = {
        label: before[label] for label in REFUSED_ONLY_BY_THE_FILTER if before[label] == "EPERM"
    }
    assert refused_anyway == {}
    assert before["clone3"] != "ENOSYS"


FOREIGN_ABI_CALL = textwrap.dedent(
    """
    import ctypes, mmap, sys
    code = {
        "i386": "b814000000cd80c3",  # mov eax, 20 (i386 getpid); int 0x80; ret
        "x32": "b8270000400f05c3",  # mov eax, 0x40000027 (x32 getpid); syscall; ret
    }[sys.argv[1]]
    page = mmap.mmap(-1, mmap.PAGESIZE, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
    page.write(bytes.fromhex(code))
    call = ctypes.CFUNCTYPE(ctypes.c_int)(ctypes.addressof(ctypes.c_char.from_buffer(page)))
    print(call(), flush=True)
    """
)


def test_foreign_abi_is_refused(identity: str, program: bytes, workdir: Path) -> None:
    if os.uname().machine != "x86_64":
        pytest.skip("the i386 and x32 ABIs exist on x86_64 only")
    i386 = [SANDBOX_PYTHON, "-c", FOREIGN_ABI_CALL, "i386"]
    unfiltered, filtered = both(i386, identity=identity, program=program, workdir=workdir)
    assert unfiltered.returncode == 0 and int(unfiltered.stdout) > 0, unfiltered.stderr
    assert filtered.returncode == SIGSYS_EXIT, (filtered.returncode, filtered.stderr)
    assert filtered.stdout == ""

    x32 = [SANDBOX_PYTHON, "-c", FOREIGN_ABI_CALL, "x32"]
    unfiltered, filtered = both(x32, identity=identity, program=program, workdir=workdir)
    assert int(unfiltered.stdout) != -errno.EPERM, "the kernel itself refused x32 with EPERM"
    assert int(filtered.stdout) == -errno.EPERM, filtered.stderr


# -- ordinary work still runs ---------------------------------------------------------------

THREADS_AFTER_CLONE3 = textwrap.dedent(
    """
    import ctypes, errno, sys, threading
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    libc.syscall(ctypes.c_long(int(sys.argv[1])), None, ctypes.c_long(0))
    print("clone3:", errno.errorcode[ctypes.get_errno()])
    done = []
    threads = [threading.Thread(target=done.append, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    print("threads:", len(done))
    """
)


def test_threads_start_although_clone3_is_refused(
    identity: str, program: bytes, workdir: Path
) -> None:
    # pthread_create tries clone3 first; only its fallback to clone can start these threads.
    argv = [SANDBOX_PYTHON, "-c", THREADS_AFTER_CLONE3, str(syscall_numbers()["clone3"])]
    result = sandboxed(argv, identity=identity, program=program, workdir=workdir)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["clone3: ENOSYS", "threads: 8"]


PROCESS_POOL = (
    "import multiprocessing as mp\n"
    "with mp.Pool(4) as pool:\n"
    "    print(sum(pool.map(abs, range(-100, 0))))"
)
GIT_COMMIT = (
    "git init -q repo && cd repo && echo x > f && git add f"
    " && git -c user.name=t -c user.email=t@example.com commit -q -m first-commit"
    " && git log --format=%s"
)
HELLO_GO = 'package main\n\nimport "fmt"\n\nfunc main() { fmt.Println("hello from go") }\n'
GO_BUILD = (
    f"mkdir hello && cd hello && printf %s '{HELLO_GO}' > main.go"
    " && go mod init hello 2>/dev/null && go build -o hello . && ./hello"
)
NODE_WORKER = (
    "const { Worker } = require('worker_threads');"
    "new Worker(\"require('worker_threads').parentPort.postMessage(6 * 7)\", { eval: true })"
    ".on('message', (m) => console.log('worker says', m));"
)
#: What a build or a test does, and a line of its output that shows it got there.
ORDINARY_WORK: Mapping[str, tuple[list[str], str]] = {
    "process pool": ([SANDBOX_PYTHON, "-c", PROCESS_POOL], "5050"),
    "shell pipe": (
        ["sh", "-c", "printf 'a\\nb\\nc\\n' | grep -c . | sed 's/^/lines: /'"],
        "lines: 3",
    ),
    "git commit": (["sh", "-ec", GIT_COMMIT], "first-commit"),
    "go version": (["go", "version"], "go version go"),
    "go build": (["sh", "-ec", GO_BUILD], "hello from go"),
    "node worker thread": (["node", "-e", NODE_WORKER], "worker says 42"),
}


@pytest.mark.parametrize("work", sorted(ORDINARY_WORK))
def test_ordinary_work_runs_under_the_filter(
    work: str, identity: str, program: bytes, workdir: Path
) -> None:
    argv, expected = ORDINARY_WORK[work]
    result = sandboxed(argv, identity=identity, program=program, workdir=workdir)
    assert result.returncode == 0, result.stderr
    assert expected in result.stdout, (result.stdout, result.stderr)
