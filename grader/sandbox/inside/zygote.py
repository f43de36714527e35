"""The warm sandbox's zygote: a worker interpreter started once per slot, numpy imported and no
student code ever run in it, that forks a fresh worker per request.

It runs inside the slot's sandbox (bubblewrap, the slot's uid) exactly where a worker would, and
serves the trusted side on one control socket, one request per datagram:

* ``spawn`` with four descriptors (requests, responses, stdout, stderr): fork a child that
  becomes an ordinary worker (``harness.serve``); it loads the seccomp filter itself, before any
  student code, so every submission starts from this clean address space;
* ``reap`` a child: wait ``grace`` seconds for it to end, then SIGKILL it; answer its status.

The zygote never reads anything a child can write. It is not dumpable, so a child (same uid)
cannot open its memory or its ``/proc`` files; the child's filter forbids signals, ptrace and
fork. Whether the slot is left empty after a child is checked by the trusted side, not here.
"""

from __future__ import annotations

import ctypes
import json
import os
import signal
import socket
import sys
import time
from typing import Any

import numpy as np

# numpy loads these on first use; loaded here, once a slot, they are in every child's memory
# already (np.median loads numpy.ma, about 12 ms a submission that calls it).
import numpy.ma
import numpy.random

from . import harness

PR_SET_PDEATHSIG, PR_SET_DUMPABLE = 1, 4
MESSAGE_BYTES = 4096
CHILD_FDS = 4


def _prctl(option: int, value: int) -> None:
    if ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), f"prctl({option}) failed")


def _become_worker(zygote: int, fds: list[int]) -> None:
    """In the forked child: keep only its own four descriptors, then serve as a worker."""
    requests, responses, out, err = fds
    _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != zygote:  # the zygote died between fork and prctl
        os._exit(1)
    os.setsid()
    null = os.open(os.devnull, os.O_RDONLY)
    for source, target in ((null, 0), (out, 1), (err, 2)):
        os.dup2(source, target)
    keep = {0, 1, 2, requests, responses}
    for fd in map(int, os.listdir("/proc/self/fd")):
        if fd not in keep:
            try:
                os.close(fd)
            except OSError:  # the listing's own descriptor, already closed
                pass
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    sys.argv = [sys.argv[0], str(requests), str(responses)]  # as a worker started cold sees it
    np.random.seed()  # a fresh process draws fresh entropy; so must a forked one
    harness.serve(requests, responses)


def _spawn(control: socket.socket, fds: list[int]) -> dict[str, Any]:
    if len(fds) != CHILD_FDS:
        for fd in fds:
            os.close(fd)
        return {"error": f"spawn needs {CHILD_FDS} descriptors, got {len(fds)}"}
    zygote = os.getpid()
    pid = os.fork()
    if pid == 0:
        try:
            control.close()
            _become_worker(zygote, fds)
        finally:
            os._exit(1)
    for fd in fds:
        os.close(fd)
    return {"pid": pid}


def _status(raw: int) -> int:
    """A wait status as a return code: the exit code, or minus the signal that killed it."""
    return -os.WTERMSIG(raw) if os.WIFSIGNALED(raw) else os.WEXITSTATUS(raw)


def _reap(pid: int, grace: float) -> dict[str, Any]:
    deadline = time.monotonic() + grace
    try:
        while time.monotonic() < deadline:
            done, raw = os.waitpid(pid, os.WNOHANG)
            if done:
                return {"pid": pid, "code": _status(raw), "exited": True}
            time.sleep(0.005)
        os.kill(pid, signal.SIGKILL)
        _, raw = os.waitpid(pid, 0)
    except ChildProcessError:
        return {"pid": pid, "error": "no such child"}
    return {"pid": pid, "code": _status(raw), "exited": False}


def serve(control: socket.socket) -> None:
    while True:
        try:
            data, fds, _, _ = socket.recv_fds(control, MESSAGE_BYTES, CHILD_FDS + 1)
        except OSError:
            break
        if not data:
            break
        request = json.loads(data)
        if request.get("op") == "spawn":
            reply = _spawn(control, fds)
        elif request.get("op") == "reap":
            reply = _reap(int(request["pid"]), float(request.get("grace", 0.0)))
        else:
            reply = {"error": f"unknown op {request.get('op')!r}"}
        control.send(json.dumps(reply).encode())


def main() -> None:
    # The trusted side passes the control socket's descriptor as the last argument.
    control = socket.socket(fileno=int(sys.argv[-1]))
    _prctl(PR_SET_DUMPABLE, 0)
    control.send(json.dumps({"event": "ready", "pid": os.getpid(), "uid": os.getuid()}).encode())
    serve(control)
    os._exit(0)
