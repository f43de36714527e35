"""The worker: imports a student's submission and answers calls, nothing else.

Runs as ``inside.harness`` in a separate ``python -I`` process (inside the sandbox when one
is available; ``grader.sandbox.launch`` starts it). It reads requests from one inherited pipe
and writes responses to another, in the format of ``protocol.py``. It never decides whether an
answer is right: it returns data, and the trusted process grades it. Everything this process
does can be subverted by the student's code once that code runs, so nothing in here is trusted
by the grader.

Standard library and numpy only; the grader package is not visible from here.
"""

from __future__ import annotations

import ctypes
import importlib
import json
import os
import sys
import tempfile
import types
from typing import Any

import numpy as np

from . import cells, protocol
from .calling import exception_report, invoke


class Channel:
    """The two pipes to the grader: requests in, responses out."""

    def __init__(self, requests: int, responses: int) -> None:
        self.requests, self.responses = requests, responses

    def send(self, message: dict[str, Any]) -> None:
        protocol.write_frame(self.responses, protocol.encode(message))

    def send_payload(self, payload: bytes) -> None:
        protocol.write_frame(self.responses, payload)

    def receive(self) -> Any:
        header = protocol.read_exact(self.requests, protocol.FRAME_HEADER_SIZE)
        n = protocol.frame_length(header, 1 << 31)
        return protocol.decode(protocol.read_exact(self.requests, n), requests=True)


def load_seccomp(program: np.ndarray) -> None:
    """Install a classic-BPF seccomp filter (built by the trusted side) on this process.

    From here on the denied system calls (fork, exec, socket, kill, ...) fail with EPERM for
    this process and every thread it starts.
    """

    class SockFprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    libc = ctypes.CDLL(None, use_errno=True)
    raw = np.ascontiguousarray(program, dtype=np.uint8).tobytes()
    buf = ctypes.create_string_buffer(raw, len(raw))
    prog = SockFprog(len(raw) // 8, ctypes.cast(buf, ctypes.c_void_p))
    pr_set_no_new_privs, pr_set_seccomp, seccomp_mode_filter = 38, 22, 2
    if libc.prctl(pr_set_no_new_privs, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
    if libc.prctl(pr_set_seccomp, seccomp_mode_filter, ctypes.byref(prog), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_SECCOMP) failed")


REPORTED_CELLS = 100
"""Cells whose failure the worker reports (the report shows fewer still)."""


class Submission:
    """The student's modules, imported lazily, one import attempt each."""

    def __init__(self, channel: Channel, directory: str, modules: dict[str, str], single: str | None) -> None:
        self.channel = channel
        self.directory, self.modules, self.single = directory, modules, single
        self.loaded: dict[str, types.ModuleType] = {}
        # Appended, not prepended: a student file named numpy.py must not shadow numpy.
        sys.path.append(directory)
        if single is not None:
            # A notebook or single file defines everything in one module; let
            # `from rmsnorm import rmsnorm` written inside it find that same module.
            for name in set(modules.values()):
                sys.modules[name] = _Alias(single)

    def module_for(self, function: str) -> str:
        return self.single or self.modules[function]

    def run_notebook(self, cells_file: str, skip: set[int], seconds: float | None) -> list[dict[str, Any]]:
        """Run a notebook's cells in order, as a kernel would, before any call arrives: no
        test's input is in this process while the student's cells run. Each cell's start is
        announced, so a cell that hangs or kills the process can be skipped next time."""
        assert self.single is not None
        module = cells.notebook_module(self.single)
        sys.modules[self.single] = self.loaded[self.single] = module
        with open(os.path.join(self.directory, cells_file), encoding="utf-8") as handle:
            notebook = json.load(handle)
        outcomes: list[dict[str, Any]] = []
        for cell in notebook:
            if cell["number"] in skip:
                continue
            self.channel.send({"event": "cell_start", "cell": cell["number"]})
            outcome = cells.run(cell, module, seconds)
            if outcome["status"] != "ok" and len(outcomes) < REPORTED_CELLS:  # only what went wrong
                outcomes.append(outcome)
        cells.cells_done(module.__dict__)
        return outcomes

    def get(self, function: str, nonce: str) -> tuple[str, Any]:
        name = self.module_for(function)
        if name not in self.loaded:
            self.channel.send({"event": "import_start", "module": name, "nonce": nonce})
            self.loaded[name] = importlib.import_module(name)
            self.channel.send({"event": "import_done", "module": name, "nonce": nonce})
        return name, getattr(self.loaded[name], function, None)


class _Alias(types.ModuleType):
    """A module that forwards attribute access to the single submission module."""

    def __init__(self, target: str) -> None:
        super().__init__(target)
        self._target = target

    def __getattr__(self, attr: str) -> Any:
        return getattr(sys.modules[self._target], attr)


def call(sub: Submission, request: dict[str, Any], scratch: str) -> dict[str, Any]:
    function = str(request["function"])
    try:
        module, fn = sub.get(function, str(request.get("nonce")))
    except BaseException as exc:  # the student's import may raise anything, SystemExit included
        return {"status": "import_error", "module": sub.module_for(function), **exception_report(exc, sub.directory)}
    if not callable(fn):
        return {"status": "missing", "module": module, "found": None if fn is None else type(fn).__name__}
    stop_after = request.get("stop_after")
    stop_after = float(stop_after) if isinstance(stop_after, int | float) else None
    return invoke(fn, request.get("args", []), request.get("kwargs", {}), scratch, sub.directory, stop_after)


def main() -> None:
    # The grader passes the request and response pipe descriptors as the last two arguments.
    serve(int(sys.argv[-2]), int(sys.argv[-1]))


def serve(requests: int, responses: int) -> None:
    """Serve one submission on the two pipes until the grader closes its end; never returns.
    Run by ``main`` in a fresh interpreter, or in a child forked by the warm sandbox's zygote."""
    channel = Channel(requests, responses)
    setup = channel.receive()
    sub = Submission(channel, setup["directory"], setup["modules"], setup.get("single"))
    scratch = tempfile.mkdtemp(prefix="normlab-")
    # The working directory is private scratch space, first on sys.path as a kernel's is: a
    # notebook's %%writefile module can be imported by a later cell. The data that ships
    # beside the lab (the config bank) is there too, as it is beside a student's notebook.
    os.chdir(scratch)
    for name in setup.get("data", ()):
        if os.path.isdir(os.path.join(setup["directory"], name)):
            os.symlink(os.path.join(setup["directory"], name), name)
    if setup.get("seccomp") is not None:
        load_seccomp(setup["seccomp"])
    ready: dict[str, Any] = {"event": "ready", "uid": os.getuid(), "pid": os.getpid()}
    ready["seccomp"] = setup.get("seccomp") is not None
    if setup.get("cells"):
        sys.path.insert(0, scratch)
        seconds = setup.get("cell_seconds")
        seconds = float(seconds) if isinstance(seconds, int | float) else None
        ready["cells"] = sub.run_notebook(setup["cells"], set(setup.get("skip_cells", ())), seconds)
    channel.send(ready)
    while True:
        try:
            request = channel.receive()
        except EOFError:
            break
        if request.get("op") == "call":
            # The grader tags each call; the answer carries the tag back (see client.Worker._wait).
            response = {**call(sub, request, scratch), "nonce": request.get("nonce")}
            try:
                payload = protocol.encode(response)
            except Exception as exc:  # a result numpy cannot save, e.g. a structured array
                detail = f"{type(exc).__name__}: {exc}"[:500]
                payload = protocol.encode({"status": "unencodable", "detail": detail, "nonce": request.get("nonce")})
            channel.send_payload(payload)
    # Threads the student left running must not keep the process alive.
    os._exit(0)


if __name__ == "__main__":
    main()
