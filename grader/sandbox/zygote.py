"""The warm sandbox: one zygote per worker slot, started once, forking a fresh worker per
submission; and the checks that the slot is left empty between two workers.

Starting a sandboxed worker costs bubblewrap, an interpreter and ``import numpy`` (about 0.2 s
of a grading). The zygote (``inside/zygote.py``) pays that once per slot: it runs in the slot's
sandbox as the slot's uid, imports numpy, runs no student code, and forks a child per worker.
The child loads the seccomp filter and then the student's code, so each submission has a fresh
address space. The submission reaches the sandbox through the slot's *box*, a host directory
bound read-only at ``/submission`` and refilled for each grading.

A child runs as the same uid as the zygote and shares its /tmp and IPC namespace, so after
every child the trusted side checks, from outside and not on the zygote's word:

* no process is left in the sandbox's PID namespace but its init and the zygote, and no process
  of the slot's uid on the host but the zygote;
* the sandbox's /tmp (the one place the uid can write) is wiped, and found empty;
* its IPC namespace holds no System V object (the child's filter refuses to make them, and POSIX
  message queues; POSIX shared memory would be files in a /dev/shm the uid cannot write);
* the zygote's limits, priority and CPU affinity are what they were when it started (a child of
  the same uid could lower them for the next submission).

Any failed check discards the zygote and its whole sandbox; the next worker starts a new one.
A slot's zygote lives while this process holds the slot (``slots.lease``) and dies with it.
"""

from __future__ import annotations

import atexit
import ctypes
import json
import os
import shutil
import signal
import socket
import stat
import subprocess
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from grader.faults import GraderFault
from grader.sandbox.client import CappedBuffer, drain, start_process
from grader.sandbox.launch import Launch
from grader.sandbox.limits import Limits

CLONE_NEWIPC = 0x08000000
START_SECONDS = 30.0
REPLY_SECONDS = 10.0
"""How long the zygote may take to answer (it forks or waits; a loaded machine is slow)."""
MESSAGE_BYTES = 4096
LEFTOVER_SECONDS = 3.0
MAX_CHILDREN = 1000
"""Workers one zygote forks before it is replaced by a fresh one (a few seconds of its own CPU,
well inside the CPU rlimit it runs under)."""


Reply = dict[str, Any]
"""A message on the control channel, either way."""


class SlotNotEmpty(Exception):
    """Something of a finished worker is left in the slot (the message says what)."""


class Unavailable(Exception):
    """The slot's uid is in use by processes that are not ours (another grader configured with
    the same uids): no zygote is started, and workers start cold."""


def _processes_of(uid: int) -> list[int]:
    """Host processes whose real, effective, saved or file-system uid is ``uid`` (read from
    ``status``: the zygote and its workers are not dumpable, so their ``/proc`` entries are
    owned by root whatever their uid)."""
    wanted = str(uid).encode()
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            fd = os.open(f"/proc/{name}/status", os.O_RDONLY)
        except OSError:  # it ended while we looked
            continue
        try:
            head = os.read(fd, 1024)  # the Uid line is the ninth, well inside this
        except OSError:
            continue
        finally:
            os.close(fd)
        start = head.find(b"\nUid:")
        if start >= 0 and wanted in head[start + 5 : head.find(b"\n", start + 1)].split():
            found.append(int(name))
    return found


def _settled(uid: int, seconds: float = LEFTOVER_SECONDS) -> list[int]:
    """Processes of ``uid`` still there after ``seconds``. The slot's last holder may have just
    been killed: its sandbox dies with it, a moment after the slot's lock is free."""
    deadline = time.monotonic() + seconds
    while (found := _processes_of(uid)) and time.monotonic() < deadline:
        time.sleep(0.02)
    return found


def _sysv_objects(pid: int) -> list[str]:
    """System V IPC objects in ``pid``'s IPC namespace, read from a thread that joins it (the
    thread's namespace ends with the thread; the grader's own is never changed)."""
    lines: list[str] = []
    problem: list[str] = []

    def look() -> None:
        libc = ctypes.CDLL(None, use_errno=True)
        fd = os.open(f"/proc/{pid}/ns/ipc", os.O_RDONLY)
        try:
            if libc.setns(fd, CLONE_NEWIPC) != 0:
                problem.append(os.strerror(ctypes.get_errno()))
                return
        finally:
            os.close(fd)
        for kind in ("shm", "msg", "sem"):
            lines.extend(f"{kind}: {row}" for row in Path(f"/proc/sysvipc/{kind}").read_text().splitlines()[1:])

    thread = threading.Thread(target=look, name="normlab-ipc-check")
    thread.start()
    thread.join()
    if problem:
        raise SlotNotEmpty(f"its IPC namespace could not be inspected ({problem[0]})")
    return lines


def _scheduling(pid: int) -> tuple[str, ...]:
    """What a process of the same uid could change about the zygote for its later children:
    its resource limits, nice value, scheduling policy and CPU affinity."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    affinity = [line for line in Path(f"/proc/{pid}/status").read_text().splitlines() if "Cpus_allowed" in line]
    # stat's fields after the name: nice is field 19, rt_priority 40, policy 41 (proc(5)).
    return (Path(f"/proc/{pid}/limits").read_text(), fields[16], fields[37], fields[38], *affinity)


def _wipe(directory: Path) -> None:
    """Remove everything in ``directory`` (root may, whatever the modes a child set); symlinks
    are removed, never followed."""
    for entry in os.scandir(directory):
        if entry.is_dir(follow_symlinks=False):
            shutil.rmtree(entry.path, ignore_errors=True)
        else:
            try:
                os.unlink(entry.path)
            except FileNotFoundError:
                pass


@dataclass
class ZygoteChild:
    """One worker forked by a zygote: what ``client.Worker`` holds as its process."""

    zygote: Zygote
    pid: int
    """Its PID inside the sandbox's namespace (only the zygote uses it)."""
    code: int | None = None
    reaped: bool = False

    def wait(self, timeout: float) -> int | None:
        """Its return code once it has ended by itself within ``timeout`` s; it is killed after
        that (a worker that closed its pipes has nothing more to say), and None returned."""
        if not self.reaped:
            self.code, exited = self.zygote.reap(self.pid, timeout)
            self.reaped = True
            return self.code if exited else None
        return self.code

    def kill(self) -> None:
        if not self.reaped:
            self.wait(0.0)


class Zygote:
    """A running zygote in its slot's sandbox, and the trusted side's view of it."""

    def __init__(self, launch: Launch, uid: int) -> None:
        self.uid = uid
        self.healthy = False
        self.busy = False
        self.problem = ""
        """Why it was discarded, if it was."""
        self.children = 0
        if leftover := _settled(uid):
            raise Unavailable(f"uid {uid} has processes {leftover}")
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.control = ours
        self.stderr = CappedBuffer(64 << 10)
        err_r, err_w = os.pipe()
        try:
            # Started from the process's own starter thread: the sandbox gets its parent-death
            # signal when the thread that started it ends, and a grading thread (Dask's) may
            # end while a later grading of this process still uses the zygote.
            started = _STARTER.submit(start_process, launch, [theirs.fileno()], subprocess.DEVNULL, err_w)
            self.proc = started.result()
        finally:
            theirs.close()
            os.close(err_w)
        threading.Thread(target=drain, args=(os.fdopen(err_r, "rb"), self.stderr), daemon=True).start()
        ready = self._receive(START_SECONDS)
        if ready.get("event") != "ready":
            self.close()
            raise GraderFault(f"the warm sandbox did not start: {ready} {self.stderr.text()[-2000:]}")
        self.inner_pid = int(ready["pid"])
        host = _processes_of(uid)
        if len(host) != 1:
            self.close()
            raise GraderFault(f"the warm sandbox's zygote is not the only process of uid {uid}: {host}")
        self.host_pid = host[0]
        self.baseline = _scheduling(self.host_pid)
        self.healthy = True

    # -- the control channel ------------------------------------------------------------------

    def _receive(self, seconds: float) -> Reply:
        self.control.settimeout(seconds)
        try:
            data = self.control.recv(MESSAGE_BYTES)
        except OSError as exc:
            return {"error": f"no answer ({type(exc).__name__})"}
        try:
            reply = json.loads(data) if data else {"error": "the zygote ended"}
        except ValueError:
            reply = {"error": "an unreadable answer"}
        return reply if isinstance(reply, dict) else {"error": "an unreadable answer"}

    def _ask(self, request: Reply, fds: list[int] | None = None, seconds: float = REPLY_SECONDS) -> Reply:
        try:
            socket.send_fds(self.control, [json.dumps(request).encode()], fds or [])
        except OSError as exc:
            return {"error": f"not reachable ({type(exc).__name__})"}
        return self._receive(seconds)

    # -- workers ------------------------------------------------------------------------------

    def spawn(self, fds: list[int]) -> ZygoteChild:
        """Fork a worker that serves on ``fds`` (requests, responses, stdout, stderr)."""
        if not self.healthy or self.busy:
            raise GraderFault("the warm sandbox was asked for a second worker at once")
        reply = self._ask({"op": "spawn"}, fds)
        if not isinstance(reply.get("pid"), int):
            self.close()
            raise GraderFault(f"the warm sandbox could not start a worker: {reply.get('error', reply)}")
        self.busy = True
        self.children += 1
        return ZygoteChild(self, reply["pid"])

    def reap(self, pid: int, grace: float) -> tuple[int | None, bool]:
        """Wait up to ``grace`` s for worker ``pid`` to end, then kill it; check the slot is empty.
        Returns its return code (None if unknown) and whether it ended by itself."""
        reply = self._ask({"op": "reap", "pid": pid, "grace": grace}, seconds=grace + REPLY_SECONDS)
        self.busy = False
        code = reply.get("code")
        self.keep_if(self.check_empty)
        if not isinstance(code, int):
            self.close()
            return None, False
        return code, bool(reply.get("exited"))

    # -- the slot between workers -------------------------------------------------------------

    def keep_if(self, check: Callable[[], None]) -> None:
        """Run one of the checks below; a slot found not empty discards the whole sandbox."""
        try:
            check()
        except SlotNotEmpty as exc:
            self.problem = str(exc)
            self.close()

    def check_empty(self) -> None:
        """After a worker: wipe the sandbox's /tmp, then check the slot holds nothing of it."""
        self.check_unchanged()
        root = Path(f"/proc/{self.host_pid}/root")
        inside = {int(n) for n in os.listdir(root / "proc") if n.isdigit()}
        if inside - {1, self.inner_pid}:
            raise SlotNotEmpty(f"processes left in the sandbox: {sorted(inside - {1, self.inner_pid})}")
        _wipe(root / "tmp")
        if left := os.listdir(root / "tmp"):
            raise SlotNotEmpty(f"files left in /tmp: {len(left)}")
        if objects := _sysv_objects(self.host_pid):
            raise SlotNotEmpty(f"System V IPC objects left: {len(objects)}")

    def check_unchanged(self) -> None:
        """Before a worker too: the zygote runs, is the uid's only process on the host (a worker
        cannot leave its PID namespace, but another grader may share the uid), and nothing
        changed its limits or scheduling since it started."""
        if not self.healthy or self.proc.poll() is not None:
            raise SlotNotEmpty("the zygote has ended")
        host = _processes_of(self.uid)
        if host != [self.host_pid]:
            raise SlotNotEmpty(f"processes of uid {self.uid} on the host besides the zygote: {host}")
        if _scheduling(self.host_pid) != self.baseline:
            raise SlotNotEmpty("the zygote's limits, priority or affinity were changed")

    def close(self, graceful: bool = False) -> None:
        """Kill the whole sandbox (its init takes every process of its namespace with it). With
        ``graceful``, a healthy zygote is first asked to exit by closing its control socket, so
        its CPU time and its workers' reach ``getrusage`` (the class benchmark reads it)."""
        if graceful and self.healthy and not self.busy:
            try:
                self.control.shutdown(socket.SHUT_RDWR)
                self.proc.wait(timeout=2)
            except (OSError, subprocess.TimeoutExpired):
                pass
        self.healthy = False
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            self.proc.kill()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        self.control.close()


class WarmSlot:
    """A slot this process holds: its box (the submission's directory) and its zygote."""

    def __init__(self, uid: int, folder: Path) -> None:
        self.uid = uid
        # Beside the slot's lock file: one box per slot on this host, whoever holds the slot, so
        # a process killed before it could remove its box leaves nothing that accumulates.
        self.box = folder / f"box-{uid}"
        self.box.mkdir(mode=0o755, exist_ok=True)
        info = os.lstat(self.box)
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid():
            raise GraderFault(f"{self.box} is not a directory of this user; remove it")
        self.box.chmod(0o755)
        self.zygote: Zygote | None = None
        self.key: tuple[Any, ...] = ()

    def fill(self, prepared: Path) -> None:
        """Put a prepared submission in the box (read-only inside): what the next workers see."""
        _wipe(self.box)
        shutil.copytree(prepared, self.box, dirs_exist_ok=True, symlinks=True)

    def zygote_for(self, launch: Launch, limits: Limits) -> Zygote:
        """This slot's zygote for ``launch`` (whose rlimits, from ``limits``, its children
        inherit), started again if it is not running as asked or has served its share.
        Raises :class:`Unavailable` when the slot's uid is busy with processes not ours."""
        key = (launch.argv, launch.options, tuple(sorted(launch.env.items())), limits)
        if self.zygote is not None and self.zygote.children >= MAX_CHILDREN:
            self.zygote.close(graceful=True)  # its own CPU time counts against the rlimit it lives under
        if self.zygote is not None and key == self.key:
            self.zygote.keep_if(self.zygote.check_unchanged)  # whatever happened since its last worker
        if self.zygote is not None and (not self.zygote.healthy or key != self.key):
            self.zygote.close(graceful=True)
            self.zygote = None
        if self.zygote is None:
            self.zygote, self.key = Zygote(launch, self.uid), key
        return self.zygote

    def close(self) -> None:
        if self.zygote is not None:
            self.zygote.close(graceful=True)
        shutil.rmtree(self.box, ignore_errors=True)


_STARTER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="normlab-zygote-starter")
"""One thread, alive as long as the process, that starts every zygote of this process."""
_SLOTS: dict[int, WarmSlot] = {}
_SLOTS_LOCK = threading.Lock()


def warm_slot(uid: int, folder: Path) -> WarmSlot:
    """This process's warm state for the slot whose uid is ``uid`` (the caller holds its lease;
    ``folder`` is where the slots' lock files are). Keyed by uid, not slot number: the uid is
    what the sandbox's processes share."""
    with _SLOTS_LOCK:
        if uid not in _SLOTS:
            _SLOTS[uid] = WarmSlot(uid, folder)
        return _SLOTS[uid]


def _close_all() -> None:
    for slot in list(_SLOTS.values()):
        slot.close()


atexit.register(_close_all)
