"""The worker: imports a student's submission and answers calls, nothing else.

Runs as ``python -I harness.py`` in a separate process (inside the sandbox when one is
available). It reads requests from one inherited pipe and writes responses to another, in the format of
``protocol.py``. It never decides whether an answer is right: it returns data, and the
trusted process grades it. Everything this process does can be subverted by the student's
code once that code runs, so nothing in here is trusted by the grader.

Standard library and numpy only; the grader package is not visible from here.
"""

from __future__ import annotations

import builtins
import ctypes
import importlib
import io
import os
import sys
import tempfile
import time
import traceback
import types
from typing import Any

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import callables
import protocol

# The grader passes the request and response pipe descriptors as the last two arguments.
REQUESTS, RESPONSES = int(sys.argv[-2]), int(sys.argv[-1])
OUTPUT_CAP = 16 * 1024  # characters of print output kept per call
MESSAGE_CAP = 2000  # characters of an exception message kept


class CappedText(io.TextIOBase):
    """A text sink that keeps the first ``cap`` characters and counts the rest."""

    def __init__(self, cap: int) -> None:
        self.cap, self.size, self.dropped = cap, 0, 0
        self.parts: list[str] = []

    def writable(self) -> bool:
        return True

    def write(self, s: str) -> int:
        s = str(s)
        room = self.cap - self.size
        if room > 0:
            self.parts.append(s[:room])
            self.size += min(room, len(s))
        self.dropped += max(0, len(s) - max(room, 0))
        return len(s)

    def text(self) -> str:
        tail = f"\n[... {self.dropped} more characters not shown]" if self.dropped else ""
        return "".join(self.parts) + tail


def send(message: dict[str, Any]) -> None:
    protocol.write_frame(RESPONSES, protocol.encode(message))


def receive() -> Any:
    header = protocol.read_exact(REQUESTS, protocol.FRAME_HEADER_SIZE)
    n = protocol.frame_length(header, 1 << 31)
    return protocol.decode(protocol.read_exact(REQUESTS, n), requests=True)


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


class Submission:
    """The student's modules, imported lazily, one import attempt each."""

    def __init__(self, directory: str, modules: dict[str, str], single: str | None) -> None:
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

    def get(self, function: str) -> tuple[str, Any]:
        name = self.module_for(function)
        if name not in self.loaded:
            send({"event": "import_start", "module": name})
            self.loaded[name] = importlib.import_module(name)
            send({"event": "import_done", "module": name})
        return name, getattr(self.loaded[name], function, None)


class _Alias(types.ModuleType):
    """A module that forwards attribute access to the single submission module."""

    def __init__(self, target: str) -> None:
        super().__init__(target)
        self._target = target

    def __getattr__(self, attr: str) -> Any:
        return getattr(sys.modules[self._target], attr)


def student_traceback(exc: BaseException, directory: str) -> str:
    """The traceback restricted to frames in the student's own files."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename.startswith(directory)]
    lines = traceback.format_list(frames) + traceback.format_exception_only(type(exc), exc)
    return "".join(lines)[-4000:]


def exception_report(exc: BaseException, directory: str) -> dict[str, Any]:
    cls = type(exc)
    return {
        "exc_type": cls.__name__,
        "builtin": cls.__module__ == "builtins" and getattr(builtins, cls.__name__, None) is cls,
        "message": str(exc)[:MESSAGE_CAP] if not isinstance(exc, SystemExit) else repr(exc.code),
        "traceback": student_traceback(exc, directory),
    }


def materialize(node: Any, built: list[callables.Recorded], scratch: str) -> Any:
    """Turn request data into call arguments: callables and files become real objects."""
    if isinstance(node, dict) and len(node) == 1 and "$callable" in node:
        built.append(callables.build(node["$callable"]))
        return built[-1]
    if isinstance(node, dict) and len(node) == 1 and "$file" in node:
        spec = node["$file"]
        path = os.path.join(tempfile.mkdtemp(dir=scratch), os.path.basename(str(spec["name"])))
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(str(spec["text"]))
        return path
    if isinstance(node, list):
        return [materialize(v, built, scratch) for v in node]
    if isinstance(node, tuple):
        return tuple(materialize(v, built, scratch) for v in node)
    if isinstance(node, dict):
        return {k: materialize(v, built, scratch) for k, v in node.items()}
    return node


def snapshot(args: list[Any], kwargs: dict[str, Any]) -> dict[str, np.ndarray]:
    named = {f"arg{i}": a for i, a in enumerate(args)} | kwargs
    out: dict[str, np.ndarray] = {}
    for name, value in named.items():
        if isinstance(value, np.ndarray):
            out[name] = value.copy()
        elif isinstance(value, dict):
            out.update({f"{name}[{k!r}]": v.copy() for k, v in value.items() if isinstance(v, np.ndarray)})
    return out


def mutated(before: dict[str, np.ndarray], args: list[Any], kwargs: dict[str, Any]) -> list[str]:
    after = snapshot(args, kwargs)
    return [
        name
        for name, old in before.items()
        if name not in after or after[name].shape != old.shape or not np.array_equal(after[name], old, equal_nan=True)
    ]


def call(sub: Submission, request: dict[str, Any], scratch: str) -> dict[str, Any]:
    function = str(request["function"])
    try:
        module, fn = sub.get(function)
    except BaseException as exc:  # the student's import may raise anything, SystemExit included
        return {"status": "import_error", "module": sub.module_for(function), **exception_report(exc, sub.directory)}
    if not callable(fn):
        return {"status": "missing", "module": module, "found": None if fn is None else type(fn).__name__}
    built: list[callables.Recorded] = []
    args = materialize(request.get("args", []), built, scratch)
    kwargs = materialize(request.get("kwargs", {}), built, scratch)
    before = snapshot(args, kwargs)
    out, err = CappedText(OUTPUT_CAP), CappedText(OUTPUT_CAP)
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = out, err
    start = time.perf_counter()
    try:
        result = fn(*args, **kwargs)
        status: dict[str, Any] = {"status": "ok", "result": result}
    except BaseException as exc:
        status = {"status": "raised", **exception_report(exc, sub.directory)}
    finally:
        sys.stdout, sys.stderr = saved
    return {
        **status,
        "seconds": time.perf_counter() - start,
        "stdout": out.text(),
        "stderr": err.text(),
        "mutated": mutated(before, args, kwargs),
        "callables": [{"calls": c.calls, "inputs": c.inputs} for c in built],
    }


def main() -> None:
    setup = receive()
    sub = Submission(setup["directory"], setup["modules"], setup.get("single"))
    scratch = tempfile.mkdtemp(prefix="normlab-")
    if setup.get("seccomp") is not None:
        load_seccomp(setup["seccomp"])
    send({"event": "ready", "uid": os.getuid(), "pid": os.getpid(), "seccomp": setup.get("seccomp") is not None})
    while True:
        try:
            request = receive()
        except EOFError:
            break
        if request.get("op") == "call":
            response = call(sub, request, scratch)
            try:
                payload = protocol.encode(response)
            except Exception as exc:  # a result numpy cannot save, e.g. a structured array
                payload = protocol.encode({"status": "unencodable", "detail": f"{type(exc).__name__}: {exc}"[:500]})
            protocol.write_frame(RESPONSES, payload)
    # Threads the student left running must not keep the process alive.
    os._exit(0)


if __name__ == "__main__":
    main()
