"""The warm sandbox: workers forked from a slot's zygote, and the slot left empty between them.

Real parts only: real bubblewrap, the slot's own uid, the real seccomp filter. A "leaver"
submission tries everything it can to leave something behind in the slot (files, a locked
directory, a FIFO, IPC objects, a lowered limit or priority of the zygote, a module attribute,
an environment variable, a thread); the next submission graded in the same slot looks for all
of it and must find nothing. The checks between workers are made to fail from outside too
(a process of the slot's uid, an IPC object in the sandbox's namespace), so a check that can
never fire would be caught.
"""

from __future__ import annotations

import ctypes
import os
import subprocess
import threading
import time
from pathlib import Path

import pytest

from grader.runner import Options, grade
from grader.sandbox import policy as sandbox_policy
from grader.sandbox import slots, zygote
from grader.sandbox.client import ReplyKind, Worker
from grader.settings import current as current_settings
from grader.submission import prepare

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or sandbox_policy.machine().bwrap is None,
    reason="the warm sandbox needs bubblewrap and root (the slot's own uid)",
)

LEAVER = """
import ctypes, errno, os, resource, stat, threading, time
import numpy as np

def _errno(call):
    try:
        value = call()
    except OSError as exc:
        return exc.errno
    return ctypes.get_errno() if isinstance(value, int) and value < 0 else "allowed"

def leave():
    seen = {}
    with open("/tmp/leftover.txt", "w") as handle:
        handle.write("hidden input, maybe")
    os.makedirs("/tmp/locked/inner", exist_ok=True)
    open("/tmp/locked/inner/file", "w").close()
    os.chmod("/tmp/locked/inner", 0)
    os.chmod("/tmp/locked", 0)
    os.mkfifo("/tmp/fifo")
    os.symlink("/submission", "/tmp/link")
    libc = ctypes.CDLL(None, use_errno=True)
    seen["shmget"] = _errno(lambda: libc.shmget(0, 4096, 0o1666))
    seen["semget"] = _errno(lambda: libc.semget(0, 1, 0o1666))
    seen["msgget"] = _errno(lambda: libc.msgget(0, 0o1666))
    seen["mq_open"] = _errno(lambda: libc.mq_open(b"/leak", 0o100 | 2, 0o666, None))
    seen["fork"] = _errno(os.fork)
    zygote = os.getppid()
    seen["nice"] = _errno(lambda: os.setpriority(os.PRIO_PROCESS, zygote, 19))
    seen["prlimit"] = _errno(lambda: resource.prlimit(zygote, resource.RLIMIT_NOFILE, (32, 32)))
    seen["affinity"] = _errno(lambda: os.sched_setaffinity(zygote, {0}))
    seen["ioprio_set"] = _errno(lambda: libc.syscall(251, 1, zygote, (3 << 13) | 7))  # idle class, x86_64
    seen["sched_setattr"] = _errno(lambda: libc.syscall(314, zygote, None, 0))
    seen["mem"] = _errno(lambda: os.open(f"/proc/{zygote}/mem", os.O_RDWR))
    seen["kill"] = _errno(lambda: os.kill(zygote, 9))
    np.leaked = "A"
    os.environ["LEAKED"] = "A"
    threading.Thread(target=time.sleep, args=(3600,), daemon=False).start()
    seen["draw"] = float(np.random.random())
    return seen

def look():
    scratch = os.getcwd()  # the worker's own scratch directory, in /tmp
    writable = []
    for top in ("/", "/dev", "/proc/sys", "/submission", "/normlab", "/usr", "/etc"):
        if os.path.isdir(top) and os.access(top, os.W_OK):
            writable.append(top)
    return {
        "tmp": sorted(name for name in os.listdir("/tmp") if os.path.join("/tmp", name) != scratch),
        "writable": writable,
        "numpy": hasattr(np, "leaked"),
        "environ": os.environ.get("LEAKED"),
        "nice": os.getpriority(os.PRIO_PROCESS, 0),
        "nofile": list(resource.getrlimit(resource.RLIMIT_NOFILE)),
        "affinity": sorted(os.sched_getaffinity(0)),
        "sysv": [open(f"/proc/sysvipc/{k}").read().splitlines()[1:] for k in ("shm", "msg", "sem")],
        "pids": sorted(int(n) for n in os.listdir("/proc") if n.isdigit()),
        "me": os.getpid(),
        "uid": os.getuid(),
        "seccomp": [l.split()[1] for l in open("/proc/self/status") if l.startswith("Seccomp:")],
        "draw": float(np.random.random()),
    }
"""


class Slot:
    """One held slot and its warm sandbox, driven worker by worker as the runner drives it."""

    def __init__(self, tmp_path: Path) -> None:
        self.settings = current_settings()
        self.lease = slots.lease(self.settings.slot_dir)
        self.number = self.lease.__enter__().number
        self.uid = self.settings.uid_base + self.number
        self.tmp_path = tmp_path

    def call(self, source: str, function: str) -> dict:
        path = self.tmp_path / f"{function}.py"
        path.write_text(source)
        prepared = prepare(path)
        try:
            plan = sandbox_policy.plan(prepared.directory, self.settings, slot=self.number, warm=True)
            worker = Worker(plan.launcher, prepared.setup(), self.settings.limits)
            try:
                reply = worker.call(function, [], {})
            finally:
                worker.close()
        finally:
            prepared.cleanup()
        assert reply.kind is ReplyKind.ANSWER and reply.message["status"] == "ok", (reply, worker.stderr)
        return reply.message["result"]

    @property
    def zygote(self) -> zygote.Zygote | None:
        return zygote.warm_slot(self.uid, self.settings.slot_dir or slots.default_directory()).zygote

    def close(self) -> None:
        self.lease.__exit__(None, None, None)


@pytest.fixture
def slot(tmp_path):
    held = Slot(tmp_path)
    yield held
    held.close()


def test_a_clean_worker_is_forked_from_the_warm_zygote_with_every_layer_on(slot):
    first = slot.call(LEAVER, "look")
    host_pid = slot.zygote.host_pid
    second = slot.call(LEAVER, "look")
    assert slot.zygote is not None and slot.zygote.host_pid == host_pid  # the same zygote served both
    for seen in (first, second):
        assert seen["uid"] == slot.uid and seen["seccomp"] == ["2"]
        assert seen["pids"] == sorted([1, slot.zygote.inner_pid, seen["me"]])  # its own PID namespace
        assert seen["writable"] == [] and seen["tmp"] == []
    assert first["me"] != second["me"]  # a fresh process each time
    assert first["draw"] != second["draw"]  # with fresh entropy, as a new process has


def test_nothing_a_worker_leaves_reaches_the_next_one(slot):
    slot.call(LEAVER, "look")
    before = slot.zygote
    seen = slot.call(LEAVER, "leave")
    errnos = {k: v for k, v in seen.items() if k != "draw"}
    # Refused by the worker's filter or by the zygote being undumpable:
    for name in ("shmget", "semget", "msgget", "mq_open", "fork", "kill", "ioprio_set", "sched_setattr"):
        assert errnos[name] == 1, (name, errnos)  # EPERM
    assert errnos["mem"] == 13  # EACCES: the zygote is not dumpable
    # Allowed to a process of the same uid, so the zygote was checked, found changed, and dropped:
    assert errnos["nice"] == "allowed"
    assert not before.healthy and "priority" in before.problem
    after = slot.call(LEAVER, "look")
    assert slot.zygote is not before and slot.zygote.healthy
    assert after["tmp"] == [] and after["sysv"] == [[], [], []]
    assert after["numpy"] is False and after["environ"] is None
    assert after["nice"] == 0 and after["affinity"] == sorted(os.sched_getaffinity(0))
    assert after["pids"] == sorted([1, slot.zygote.inner_pid, after["me"]])


def test_a_process_of_the_slots_uid_is_found_and_the_worker_starts_cold(slot):
    slot.call(LEAVER, "look")
    warm = slot.zygote
    stray = subprocess.Popen(["sleep", "60"], user=slot.uid, group=slot.uid)
    try:
        seen = slot.call(LEAVER, "look")  # the check before forking finds the stray process
        assert not warm.healthy and f"uid {slot.uid}" in warm.problem
        assert slot.zygote is None  # no new zygote beside a process it cannot account for...
        assert seen["uid"] == slot.uid and seen["seccomp"] == ["2"] and seen["tmp"] == []  # ...a cold one
    finally:
        stray.kill()
        stray.wait()
    slot.call(LEAVER, "look")
    assert slot.zygote is not None and slot.zygote.healthy  # warm again once the uid is free


def test_an_ipc_object_in_the_sandbox_is_found(slot):
    slot.call(LEAVER, "look")
    warm = slot.zygote
    made = []

    def make() -> None:  # as root, from outside: join the sandbox's IPC namespace and make one
        libc = ctypes.CDLL(None, use_errno=True)
        fd = os.open(f"/proc/{warm.host_pid}/ns/ipc", os.O_RDONLY)
        assert libc.setns(fd, zygote.CLONE_NEWIPC) == 0
        os.close(fd)
        made.append(libc.shmget(0, 4096, 0o1600))

    thread = threading.Thread(target=make)
    thread.start()
    thread.join()
    assert made and made[0] >= 0
    # Planted by root, not by a worker (whose filter refuses shmget): the next worker may see it,
    # and the check after that worker finds it and discards the sandbox.
    slot.call(LEAVER, "look")
    assert not warm.healthy and "System V" in warm.problem
    assert slot.call(LEAVER, "look")["sysv"] == [[], [], []]


def test_gradings_in_one_process_share_the_slots_zygote_and_agree_with_cold_ones(tmp_path):
    solutions = Path(__file__).resolve().parent.parent / "solutions"
    settings = current_settings()
    warm = [grade(solutions, Options(settings=settings)) for _ in range(2)]
    cold = grade(solutions, Options(settings=settings.replace(warm_sandbox=False)))
    scores = {tuple((r.name, r.score) for r in report.results) for report in [*warm, cold]}
    assert len(scores) == 1
    assert any(s.zygote is not None and s.zygote.healthy for s in zygote._SLOTS.values())


def test_the_zygote_outlives_the_thread_that_first_needed_it(slot):
    """Dask grades in threads that may end: the sandbox's parent-death signal follows the thread
    that started it, so a zygote started for a thread that has ended must still serve."""
    seen: list[dict] = []
    thread = threading.Thread(target=lambda: seen.append(slot.call(LEAVER, "look")))
    thread.start()
    thread.join()
    warm = slot.zygote
    assert seen and warm is not None and warm.healthy
    again = slot.call(LEAVER, "look")
    assert slot.zygote is warm and warm.healthy and again["tmp"] == []


STOPS_READING = """
import sys, time
def stop():
    sys.modules["inside.protocol"].read_exact = lambda fd, n: time.sleep(1e9)
    return 1
def total(x):
    return float(x.sum())
"""


def test_a_worker_that_stops_reading_cannot_hold_a_call_past_its_limit(slot, tmp_path):
    """The student's code replaces the worker's request reader: the next request, larger than a
    pipe holds, is never taken. The call ends at its limit as a timeout, not in a write that
    waits for ever, and the next call gets a fresh worker."""
    import numpy as np

    path = tmp_path / "mod.py"
    path.write_text(STOPS_READING)
    prepared = prepare(path)
    plan = sandbox_policy.plan(prepared.directory, slot.settings, slot=slot.number, warm=True)
    setup = dict(prepared.setup(), modules={"stop": "mod", "total": "mod"})
    worker = Worker(plan.launcher, setup, slot.settings.limits)
    outcome: dict[str, object] = {}

    def calls() -> None:
        outcome["stop"] = worker.call("stop", [], {}, seconds=10).kind
        started = time.monotonic()
        outcome["big"] = worker.call("total", [np.ones(200_000)], {}, seconds=1.0).kind
        outcome["waited"] = time.monotonic() - started
        outcome["after"] = worker.call("total", [np.ones(200_000)], {}, seconds=10).message.get("result")

    try:
        caller = threading.Thread(target=calls, daemon=True)
        caller.start()
        caller.join(30)
        assert not caller.is_alive(), "the grader is still writing a request the worker never reads"
    finally:
        worker.close()
        prepared.cleanup()
    assert outcome["stop"] is ReplyKind.ANSWER
    assert outcome["big"] is ReplyKind.TIMEOUT and 0.9 <= float(outcome["waited"]) < 5.0  # type: ignore[arg-type]
    assert outcome["after"] == 200_000.0
