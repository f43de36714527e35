"""A seccomp filter for the worker, as a classic-BPF program built here without libseccomp.

The worker's harness loads it (``prctl(PR_SET_SECCOMP)``) after importing numpy and before
importing any student code. From then on the process and its threads cannot create
processes, execute programs, open sockets, signal other processes, trace, mount, change
namespaces, load kernel objects or make IPC objects that outlive them (System V shared memory,
semaphores and message queues, POSIX message queues; the warm sandbox's next worker would
find them): those calls fail with ``EPERM``. Threads stay allowed
(``clone`` with ``CLONE_THREAD``); ``clone3`` fails with ``ENOSYS`` so that glibc falls back
to ``clone``, whose flags a classic filter can inspect.

Syscall numbers are per architecture; they were checked against the kernel headers
(``asm/unistd_64.h`` and ``asm-generic/unistd.h``). On an architecture not listed here the
seccomp layer is reported missing instead of guessed.
"""

from __future__ import annotations

import platform
import struct

# Classic BPF opcodes (linux/filter.h).
LD_W_ABS = 0x20
JEQ_K = 0x15
JGE_K = 0x35
JSET_K = 0x45
RET_K = 0x06

RET_ALLOW = 0x7FFF0000
RET_KILL_PROCESS = 0x80000000
RET_ERRNO = 0x00050000
EPERM, ENOSYS = 1, 38
CLONE_THREAD = 0x00010000
X32_SYSCALL_BIT = 0x40000000

# offsetof(struct seccomp_data, ...)
OFFSET_NR, OFFSET_ARCH, OFFSET_ARG0 = 0, 4, 16

ARCHES = {
    "x86_64": {
        "audit": 0xC000003E,
        "clone": 56,
        "clone3": 435,
        "denied": {
            "fork": 57,
            "vfork": 58,
            "execve": 59,
            "execveat": 322,
            "socket": 41,
            "socketpair": 53,
            "kill": 62,
            "tkill": 200,
            "tgkill": 234,
            "rt_sigqueueinfo": 129,
            "rt_tgsigqueueinfo": 297,
            "pidfd_open": 434,
            "pidfd_send_signal": 424,
            "pidfd_getfd": 438,
            "ptrace": 101,
            "process_vm_readv": 310,
            "process_vm_writev": 311,
            "mount": 165,
            "umount2": 166,
            "pivot_root": 155,
            "chroot": 161,
            "unshare": 272,
            "setns": 308,
            "setsid": 112,
            "bpf": 321,
            "perf_event_open": 298,
            "keyctl": 250,
            "add_key": 248,
            "request_key": 249,
            "userfaultfd": 323,
            "io_uring_setup": 425,
            "io_uring_enter": 426,
            "io_uring_register": 427,
            "kexec_load": 246,
            "kexec_file_load": 320,
            "init_module": 175,
            "finit_module": 313,
            "delete_module": 176,
            "reboot": 169,
            "swapon": 167,
            "swapoff": 168,
            "acct": 163,
            "open_by_handle_at": 304,
            "personality": 135,
            "fsopen": 430,
            "fsmount": 432,
            "move_mount": 429,
            "open_tree": 428,
            "mount_setattr": 442,
            "quotactl": 179,
            "mq_open": 240,
            "shmget": 29,
            "semget": 64,
            "msgget": 68,
            # The zygote checks its nice value, policy and CPUs before each child; these two
            # would change what it does not check (trial 62): its I/O priority, its utilization clamp.
            "ioprio_set": 251,
            "sched_setattr": 314,
        },
    },
    "aarch64": {
        "audit": 0xC00000B7,
        "clone": 220,
        "clone3": 435,
        "denied": {
            "execve": 221,
            "execveat": 281,
            "socket": 198,
            "socketpair": 199,
            "kill": 129,
            "tkill": 130,
            "tgkill": 131,
            "rt_sigqueueinfo": 138,
            "rt_tgsigqueueinfo": 240,
            "pidfd_open": 434,
            "pidfd_send_signal": 424,
            "pidfd_getfd": 438,
            "ptrace": 117,
            "process_vm_readv": 270,
            "process_vm_writev": 271,
            "mount": 40,
            "umount2": 39,
            "pivot_root": 41,
            "chroot": 51,
            "unshare": 97,
            "setns": 268,
            "setsid": 157,
            "bpf": 280,
            "perf_event_open": 241,
            "keyctl": 219,
            "add_key": 217,
            "request_key": 218,
            "userfaultfd": 282,
            "io_uring_setup": 425,
            "io_uring_enter": 426,
            "io_uring_register": 427,
            "kexec_load": 104,
            "kexec_file_load": 294,
            "init_module": 105,
            "finit_module": 273,
            "delete_module": 106,
            "reboot": 142,
            "swapon": 224,
            "swapoff": 225,
            "acct": 89,
            "open_by_handle_at": 265,
            "personality": 92,
            "fsopen": 430,
            "fsmount": 432,
            "move_mount": 429,
            "open_tree": 428,
            "mount_setattr": 442,
            "quotactl": 60,
            "mq_open": 180,
            "shmget": 194,
            "semget": 190,
            "msgget": 186,
            "ioprio_set": 30,
            "sched_setattr": 274,
        },
    },
}


class UnsupportedArchitecture(Exception):
    """No syscall table for this machine: the seccomp layer cannot be built."""


def _insn(code: int, jt: int, jf: int, k: int) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


def build_filter(machine: str | None = None) -> bytes:
    """The filter program for ``machine`` (default: this one), as ``struct sock_filter[]``."""
    machine = machine or platform.machine()
    if machine not in ARCHES:
        raise UnsupportedArchitecture(machine)
    arch = ARCHES[machine]
    denied = sorted(arch["denied"].values())  # type: ignore[attr-defined]

    # Program layout (BPF jumps only go forward; offsets count the instructions skipped):
    #   load arch; wrong arch -> kill; load nr; x32 ABI -> deny; clone -> flag check;
    #   clone3 -> ENOSYS; one "nr == denied -> deny" per call; allow;
    #   flag check: load clone's flags; CLONE_THREAD ? allow : deny; then the return blocks.
    n = len(denied)
    first_deny_check = 6
    clone_check_at = first_deny_check + n + 1
    thread_allow_at = clone_check_at + 2
    deny_at = thread_allow_at + 1
    kill_at = deny_at + 1
    enosys_at = kill_at + 1

    def to(target: int, here: int) -> int:
        offset = target - here - 1
        if not 0 <= offset <= 255:
            raise ValueError("BPF jump out of range")
        return offset

    prog = [
        _insn(LD_W_ABS, 0, 0, OFFSET_ARCH),
        _insn(JEQ_K, 0, to(kill_at, 1), int(arch["audit"])),  # type: ignore[call-overload]
        _insn(LD_W_ABS, 0, 0, OFFSET_NR),
        _insn(JGE_K, to(deny_at, 3), 0, X32_SYSCALL_BIT),
        _insn(JEQ_K, to(clone_check_at, 4), 0, int(arch["clone"])),  # type: ignore[call-overload]
        _insn(JEQ_K, to(enosys_at, 5), 0, int(arch["clone3"])),  # type: ignore[call-overload]
    ]
    for i, nr in enumerate(denied):
        prog.append(_insn(JEQ_K, to(deny_at, first_deny_check + i), 0, nr))
    prog.append(_insn(RET_K, 0, 0, RET_ALLOW))
    prog.append(_insn(LD_W_ABS, 0, 0, OFFSET_ARG0))  # clone's flags, low 32 bits
    prog.append(_insn(JSET_K, 0, to(deny_at, clone_check_at + 1), CLONE_THREAD))
    prog.append(_insn(RET_K, 0, 0, RET_ALLOW))
    prog.append(_insn(RET_K, 0, 0, RET_ERRNO | EPERM))
    prog.append(_insn(RET_K, 0, 0, RET_KILL_PROCESS))
    prog.append(_insn(RET_K, 0, 0, RET_ERRNO | ENOSYS))
    return b"".join(prog)


def denied_calls(machine: str | None = None) -> list[str]:
    """Names of the system calls the filter refuses (for ``normlab doctor`` and the docs)."""
    arch = ARCHES.get(machine or platform.machine())
    return sorted(arch["denied"]) if arch else []  # type: ignore[call-overload]
