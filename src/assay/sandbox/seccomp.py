"""The seccomp filter bubblewrap installs on the sandboxed command.

Dropping to an unprivileged uid without capabilities is not enough on its own: any
process may still create a user namespace and hold every capability inside it, which
opens the largest part of the kernel to it (mount code, netfilter, every filesystem
that user namespaces may mount). This filter closes that door and a few rarely needed
kernel interfaces besides; everything else is allowed, so builds and tests run as
they would outside.

What is denied, and why::

    syscall                                   answer     why
    ----------------------------------------  ---------  ------------------------------------
    any syscall of a foreign ABI              kill       i386 `int 0x80` on x86_64 has its own
      (arch != the native one)                           syscall numbers: a filter written for
                                                         one table says nothing about another
    x32 syscalls (nr >= 0x40000000, x86_64)   EPERM      same, for the x32 ABI (same arch value)
    unshare with any CLONE_NEW* flag          EPERM      new namespaces: a user namespace gives
                                                         full capabilities inside it
    clone with any CLONE_NEW* flag            EPERM      the same through clone (threads and
                                                         fork pass: they set no such flag)
    clone3                                    ENOSYS     its flags live in memory a filter
                                                         cannot read; on ENOSYS glibc (2.34+)
                                                         falls back to clone, checked above
    setns                                     EPERM      joining another namespace
    mount, umount2, pivot_root, open_tree,    EPERM      mount manipulation (the sandbox's
      move_mount, fsopen, fsconfig, fsmount,             mounts are made before the filter
      fspick, mount_setattr                              is installed)
    keyctl, add_key, request_key              EPERM      kernel keyrings: not namespaced
    bpf, perf_event_open, userfaultfd         EPERM      frequent sources of kernel exploits
    kexec_load, kexec_file_load, reboot,      EPERM      machine administration, never part
      init_module, finit_module,                         of a build or a test
      delete_module, swapon, swapoff,
      syslog, acct, quotactl, lookup_dcookie
    open_by_handle_at                         EPERM      opens files by handle, past the
                                                         sandbox's mount tree
    iopl, ioperm (x86_64 only)                EPERM      raw I/O port access
    ioctl TIOCSTI, TIOCLINUX                  EPERM      typing into a terminal the sandbox
                                                         shares with its caller

The program is classic BPF (`struct sock_filter`), the format bubblewrap accepts on a
file descriptor: `bwrap --seccomp FD ...` (or `--add-seccomp-fd FD`) with the bytes of
`filter_program()` readable from FD.
"""

from __future__ import annotations

import errno
import os
import struct
from collections.abc import Mapping
from dataclasses import dataclass

from assay.sandbox.base import SandboxError

# Classic BPF opcodes (linux/bpf_common.h).
BPF_LD = 0x00
BPF_JMP = 0x05
BPF_RET = 0x06
BPF_W = 0x00
BPF_ABS = 0x20
BPF_JEQ = 0x10
BPF_JGE = 0x30
BPF_JSET = 0x40
BPF_K = 0x00

LOAD_WORD = BPF_LD | BPF_W | BPF_ABS
JUMP_EQUAL = BPF_JMP | BPF_JEQ | BPF_K
JUMP_AT_LEAST = BPF_JMP | BPF_JGE | BPF_K
JUMP_ANY_BIT = BPF_JMP | BPF_JSET | BPF_K
RETURN = BPF_RET | BPF_K

#: The kernel refuses programs longer than this (BPF_MAXINSNS).
MAX_INSTRUCTIONS = 4096

# Filter results (linux/seccomp.h).
SECCOMP_RET_KILL_PROCESS = 0x80000000
SECCOMP_RET_ERRNO = 0x00050000
SECCOMP_RET_ALLOW = 0x7FFF0000

# Offsets into `struct seccomp_data` (linux/seccomp.h): int nr; u32 arch; u64
# instruction_pointer; u64 args[6]. Both supported arches are little-endian, so the
# low 32 bits of args[i] sit at 16 + 8*i.
OFFSET_NR = 0
OFFSET_ARCH = 4
OFFSET_ARGS = 16

# Audit architecture values (linux/audit.h: EM_* | __AUDIT_ARCH_64BIT | __AUDIT_ARCH_LE).
AUDIT_ARCH_X86_64 = 0xC000003E
AUDIT_ARCH_AARCH64 = 0xC00000B7

#: x86_64 syscalls with this bit set are x32 ABI calls (asm/unistd.h: __X32_SYSCALL_BIT).
X32_SYSCALL_BIT = 0x40000000

# Namespace flags (linux/sched.h).
CLONE_NEWTIME = 0x00000080
CLONE_NEWNS = 0x00020000
CLONE_NEWCGROUP = 0x02000000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000

#: Flags that make unshare(2) create a namespace.
UNSHARE_DENIED_FLAGS = (
    CLONE_NEWNS
    | CLONE_NEWCGROUP
    | CLONE_NEWUTS
    | CLONE_NEWIPC
    | CLONE_NEWUSER
    | CLONE_NEWPID
    | CLONE_NEWNET
    | CLONE_NEWTIME
)
#: The same for clone(2), less CLONE_NEWTIME: clone's low byte is the exit signal
#: (0x80 is part of it), which is why the kernel takes CLONE_NEWTIME only from
#: unshare and clone3.
CLONE_DENIED_FLAGS = UNSHARE_DENIED_FLAGS & ~CLONE_NEWTIME

# Terminal ioctls that push input into a terminal (asm-generic/ioctls.h).
TIOCSTI = 0x5412
TIOCLINUX = 0x541C
DENIED_IOCTLS: tuple[int, ...] = (TIOCSTI, TIOCLINUX)

#: Refused with EPERM on every architecture that has them.
DENIED_SYSCALLS: tuple[str, ...] = (
    "setns",
    "mount",
    "umount2",
    "pivot_root",
    "open_tree",
    "move_mount",
    "fsopen",
    "fsconfig",
    "fsmount",
    "fspick",
    "mount_setattr",
    "keyctl",
    "add_key",
    "request_key",
    "bpf",
    "perf_event_open",
    "userfaultfd",
    "kexec_load",
    "kexec_file_load",
    "init_module",
    "finit_module",
    "delete_module",
    "open_by_handle_at",
    "reboot",
    "swapon",
    "swapoff",
    "syslog",
    "acct",
    "quotactl",
    "lookup_dcookie",
)

#: x86_64 numbers (asm/unistd_64.h).
SYSCALLS_X86_64: Mapping[str, int] = {
    "ioctl": 16,
    "clone": 56,
    "syslog": 103,
    "pivot_root": 155,
    "acct": 163,
    "mount": 165,
    "umount2": 166,
    "swapon": 167,
    "swapoff": 168,
    "reboot": 169,
    "iopl": 172,
    "ioperm": 173,
    "init_module": 175,
    "delete_module": 176,
    "quotactl": 179,
    "lookup_dcookie": 212,
    "kexec_load": 246,
    "add_key": 248,
    "request_key": 249,
    "keyctl": 250,
    "unshare": 272,
    "perf_event_open": 298,
    "open_by_handle_at": 304,
    "setns": 308,
    "finit_module": 313,
    "kexec_file_load": 320,
    "bpf": 321,
    "userfaultfd": 323,
    "open_tree": 428,
    "move_mount": 429,
    "fsopen": 430,
    "fsconfig": 431,
    "fsmount": 432,
    "fspick": 433,
    "clone3": 435,
    "mount_setattr": 442,
}

#: aarch64 numbers: the generic table (asm-generic/unistd.h).
SYSCALLS_AARCH64: Mapping[str, int] = {
    "lookup_dcookie": 18,
    "ioctl": 29,
    "umount2": 39,
    "mount": 40,
    "pivot_root": 41,
    "quotactl": 60,
    "acct": 89,
    "unshare": 97,
    "kexec_load": 104,
    "init_module": 105,
    "delete_module": 106,
    "syslog": 116,
    "reboot": 142,
    "add_key": 217,
    "request_key": 218,
    "keyctl": 219,
    "clone": 220,
    "swapon": 224,
    "swapoff": 225,
    "perf_event_open": 241,
    "open_by_handle_at": 265,
    "setns": 268,
    "finit_module": 273,
    "bpf": 280,
    "userfaultfd": 282,
    "kexec_file_load": 294,
    "open_tree": 428,
    "move_mount": 429,
    "fsopen": 430,
    "fsconfig": 431,
    "fsmount": 432,
    "fspick": 433,
    "clone3": 435,
    "mount_setattr": 442,
}


@dataclass(frozen=True, slots=True)
class Architecture:
    """What the filter needs to know about one native ABI."""

    machine: str
    """`os.uname().machine` on this architecture."""
    audit_arch: int
    """The `arch` value seccomp reports for native syscalls."""
    syscalls: Mapping[str, int]
    """Numbers of the syscalls the filter names."""
    extra_denied: tuple[str, ...] = ()
    """Syscalls refused with EPERM that exist only here."""
    has_x32: bool = False
    """Whether a second ABI shares `audit_arch` and is told apart by X32_SYSCALL_BIT."""


ARCHITECTURES: Mapping[str, Architecture] = {
    "x86_64": Architecture(
        machine="x86_64",
        audit_arch=AUDIT_ARCH_X86_64,
        syscalls=SYSCALLS_X86_64,
        extra_denied=("iopl", "ioperm"),
        has_x32=True,
    ),
    "aarch64": Architecture(
        machine="aarch64",
        audit_arch=AUDIT_ARCH_AARCH64,
        syscalls=SYSCALLS_AARCH64,
    ),
}


class UnsupportedArchitecture(SandboxError):
    """No filter is written for this machine's syscall table."""

    def __init__(self, machine: str) -> None:
        supported = ", ".join(sorted(ARCHITECTURES))
        super().__init__(
            f"no seccomp filter for architecture {machine!r} (supported: {supported})",
            backend="bwrap",
        )
        self.machine = machine


@dataclass(frozen=True, slots=True)
class Instruction:
    """One `struct sock_filter`: u16 code, u8 jt, u8 jf, u32 k."""

    code: int
    jt: int = 0
    jf: int = 0
    k: int = 0

    def pack(self) -> bytes:
        # Jump offsets are single bytes; a wider one would silently wrap.
        if not (0 <= self.jt <= 0xFF and 0 <= self.jf <= 0xFF):
            raise ValueError(f"jump offset out of range in {self}")
        return _SOCK_FILTER.pack(self.code, self.jt, self.jf, self.k)


#: Little-endian on purpose: both supported arches are, whatever machine builds the bytes.
_SOCK_FILTER = struct.Struct("<HBBI")


def filter_program(machine: str | None = None) -> bytes:
    """The filter for `machine` (default: this one) as a `struct sock_filter` array.

    Raises `UnsupportedArchitecture` for a machine without a syscall table here.
    """
    arch = architecture(machine)
    return b"".join(instruction.pack() for instruction in instructions(arch))


def architecture(machine: str | None = None) -> Architecture:
    """The `Architecture` for `machine` (default: `os.uname().machine`)."""
    name = os.uname().machine if machine is None else machine
    try:
        return ARCHITECTURES[name]
    except KeyError:
        raise UnsupportedArchitecture(name) from None


def instructions(arch: Architecture) -> list[Instruction]:
    """The filter as instructions. Every rule is a short block whose jumps stay inside it,
    so the list of rules can grow without any offset nearing the 8-bit limit."""
    nr = arch.syscalls
    program = [
        Instruction(LOAD_WORD, k=OFFSET_ARCH),
        Instruction(JUMP_EQUAL, jt=1, jf=0, k=arch.audit_arch),
        Instruction(RETURN, k=SECCOMP_RET_KILL_PROCESS),
        Instruction(LOAD_WORD, k=OFFSET_NR),
    ]
    if arch.has_x32:
        # Unsigned compare: also catches nr -1 (a syscall a tracer skipped), which
        # would have failed with ENOSYS anyway.
        program += [
            Instruction(JUMP_AT_LEAST, jt=0, jf=1, k=X32_SYSCALL_BIT),
            _errno(errno.EPERM),
        ]
    # The blocks filtering by argument end in a return on both branches; when the number
    # does not match they are skipped whole, so the number is still loaded after them.
    program += _deny_flags(nr["unshare"], UNSHARE_DENIED_FLAGS)
    program += _deny_flags(nr["clone"], CLONE_DENIED_FLAGS)
    program += _deny_ioctls(nr["ioctl"], DENIED_IOCTLS)
    program += _deny(nr["clone3"], errno.ENOSYS)
    for name in (*DENIED_SYSCALLS, *arch.extra_denied):
        program += _deny(nr[name], errno.EPERM)
    program.append(Instruction(RETURN, k=SECCOMP_RET_ALLOW))
    if len(program) > MAX_INSTRUCTIONS:
        raise ValueError(f"seccomp program too long: {len(program)} instructions")
    return program


def _errno(code: int) -> Instruction:
    return Instruction(RETURN, k=SECCOMP_RET_ERRNO | code)


def _deny(number: int, code: int) -> list[Instruction]:
    """`number` fails with `code`."""
    return [Instruction(JUMP_EQUAL, jt=0, jf=1, k=number), _errno(code)]


def _deny_flags(number: int, flags: int) -> list[Instruction]:
    """`number` fails with EPERM when its first argument has any of `flags`.

    Only the low 32 bits are read: clone and unshare take their namespace flags from
    there (clone truncates the argument to 32 bits, unshare rejects higher bits).
    """
    return [
        Instruction(JUMP_EQUAL, jt=0, jf=4, k=number),
        Instruction(LOAD_WORD, k=OFFSET_ARGS),
        Instruction(JUMP_ANY_BIT, jt=0, jf=1, k=flags),
        _errno(errno.EPERM),
        Instruction(RETURN, k=SECCOMP_RET_ALLOW),
    ]


def _deny_ioctls(number: int, requests: tuple[int, ...]) -> list[Instruction]:
    """ioctl fails with EPERM for the given requests.

    The request is compared on its low 32 bits only: the kernel takes it as an
    `unsigned int`, so high bits set by the caller must not slip a request past.
    """
    block = [
        Instruction(JUMP_EQUAL, jt=0, jf=len(requests) + 3, k=number),
        Instruction(LOAD_WORD, k=OFFSET_ARGS + 8),
    ]
    for index, request in enumerate(requests):
        # On a match, jump over the remaining compares and the ALLOW to the EPERM.
        block.append(Instruction(JUMP_EQUAL, jt=len(requests) - index, jf=0, k=request))
    block += [Instruction(RETURN, k=SECCOMP_RET_ALLOW), _errno(errno.EPERM)]
    return block


__all__ = [
    "ARCHITECTURES",
    "Architecture",
    "Instruction",
    "UnsupportedArchitecture",
    "architecture",
    "filter_program",
    "instructions",
]
