"""Calling a student's function and describing what happened, as data.

Shared by the worker's harness and by the in-kernel runner of the native nbgrader path, so
both observe a call the same way: arguments rebuilt from their wire descriptions, print
output captured with a cap, in-place changes to array arguments detected, exceptions turned
into a report. Standard library and numpy only: this runs inside the sandbox.
"""

from __future__ import annotations

import builtins
import dis
import io
import os
import pathlib
import signal
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from typing import Any

import numpy as np

from . import callables

OUTPUT_CAP = 16 * 1024  # characters of print output kept per call
MESSAGE_CAP = 2000  # characters of an exception message kept
TRACEBACK_CAP = 4000  # characters of a traceback kept: its last frames and the exception


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


def own_frames(exc: BaseException, directory: str) -> list[traceback.FrameSummary]:
    """The traceback's frames in the student's own files (or notebook cells)."""
    return [f for f in traceback.extract_tb(exc.__traceback__) if f.filename.startswith((directory, "<cell "))]


def student_traceback(exc: BaseException, frames: list[traceback.FrameSummary]) -> str:
    """The traceback restricted to the student's own ``frames`` (see ``own_frames``)."""
    last = "".join(traceback.format_exception_only(type(exc), exc))
    if len(last) > MESSAGE_CAP:  # a huge message must not push the type and the frames out
        last = f"{last[:MESSAGE_CAP]} [... {len(last) - MESSAGE_CAP} more characters]\n"
    return ("".join(traceback.format_list(frames)) + last)[-TRACEBACK_CAP:]


def exception_report(exc: BaseException, directory: str) -> dict[str, Any]:
    """What the trusted side needs to know about an exception, as data.

    ``builtin_type`` is the nearest built-in base class (numpy's MemoryError subclass reports
    ``MemoryError``): a fixed vocabulary, safe to show on a hidden test. ``exc_type`` is the
    real class name, which the student chooses and which is shown on public tests only.
    """
    cls = type(exc)
    nearest = next(
        (c for c in cls.__mro__ if c.__module__ == "builtins" and getattr(builtins, c.__name__, None) is c),
        BaseException,
    )
    own = own_frames(exc, directory)  # extracting a traceback reads source lines: once
    report = {
        "exc_type": cls.__name__[:200],
        "builtin_type": nearest.__name__,
        "message": str(exc)[:MESSAGE_CAP] if not isinstance(exc, SystemExit) else repr(exc.code)[:MESSAGE_CAP],
        "traceback": student_traceback(exc, own),
    }
    if isinstance(exc, NameError) and isinstance(exc.name, str):
        report["name"] = exc.name[:100]  # the name that was missing
    if own:
        report["raised_in"] = own[-1].name[:100]  # the student's function the exception left from
    return report


_NO_EFFECT = frozenset({"RESUME", "NOP", "CACHE", "PUSH_NULL", "PRECALL", "KW_NAMES"})
"""Instructions that neither compute nor branch (3.11 and 3.12 bytecode)."""


def is_untouched_stub(fn: Callable[..., Any]) -> bool:
    """``fn``'s whole body is ``raise NotImplementedError`` (with no message or a constant one),
    as the released stubs are: every call of it raises the same error, whatever its arguments."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return False
    ops = [(i.opname, i.argval) for i in dis.get_instructions(code) if i.opname not in _NO_EFFECT]
    if ops[:1] != [("LOAD_GLOBAL", "NotImplementedError")] or ops[-1:] != [("RAISE_VARARGS", 1)]:
        return False
    middle = ops[1:-1]  # nothing, a call without arguments, or one with a constant message
    if middle in ([], [("CALL", 0)]):
        return True
    message_const = len(middle) == 2 and middle[0][0] == "LOAD_CONST" and isinstance(middle[0][1], str)
    return message_const and middle[1] == ("CALL", 1)


def materialize(node: Any, built: list[callables.Recorded], scratch: str) -> Any:
    """Turn request data into call arguments: callables and files become real objects."""
    kind = type(node)
    if kind is not dict and kind is not list and kind is not tuple:
        return node  # decoded request data: a value of exactly one of these types, or a leaf
    if isinstance(node, dict) and len(node) == 1 and "$callable" in node:
        built.append(callables.build(node["$callable"]))
        return built[-1]
    if isinstance(node, dict) and len(node) == 1 and "$file" in node:
        spec = node["$file"]
        path = os.path.join(tempfile.mkdtemp(dir=scratch), os.path.basename(str(spec["name"])))
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(str(spec["text"]))
        return pathlib.Path(path) if spec.get("path") is True else path
    if isinstance(node, list):
        return [materialize(v, built, scratch) for v in node]
    if isinstance(node, tuple):
        return tuple(materialize(v, built, scratch) for v in node)
    if isinstance(node, dict):
        return {k: materialize(v, built, scratch) for k, v in node.items()}
    return node


def _named(args: list[Any], kwargs: dict[str, Any]) -> dict[str, Any]:
    return {f"arg{i}": a for i, a in enumerate(args)} | kwargs


def _arrays(args: list[Any], kwargs: dict[str, Any]) -> dict[str, np.ndarray]:
    """The call's array arguments by name, and the arrays of its dict and list arguments
    (``params['w_o']``, ``weights[0]``)."""
    out: dict[str, np.ndarray] = {}
    for name, value in _named(args, kwargs).items():
        if isinstance(value, np.ndarray):
            out[name] = value
        elif isinstance(value, dict):
            out.update({f"{name}[{k!r}]": v for k, v in value.items() if isinstance(v, np.ndarray)})
        elif isinstance(value, list):
            out.update({f"{name}[{i}]": v for i, v in enumerate(value) if isinstance(v, np.ndarray)})
    return out


def _entries(args: list[Any], kwargs: dict[str, Any]) -> dict[str, tuple[Any, ...]]:
    """Each dict and list argument's entries, the objects themselves (a dict's as key-value
    pairs), and those of the containers inside it: an entry replaced (by a cast copy, even of
    equal values), added or removed changes the caller's container (trial 60:
    ``params[key] = params[key].astype(x.dtype)``), and so does a nested one (a config's
    ``text_config`` filled in with ``setdefault``)."""
    return {name: _tree(value, 0) for name, value in _named(args, kwargs).items() if isinstance(value, (dict, list))}


MAX_ENTRY_DEPTH = 8
"""Containers inside containers followed this deep: a config nests two or three levels."""


def _tree(value: dict[Any, Any] | list[Any], depth: int) -> tuple[Any, ...]:
    """``value``'s entries as (key, object, the object's own entries if it is a container)."""
    pairs = value.items() if isinstance(value, dict) else ((None, v) for v in value)
    # Only exact dicts and lists are followed: before the call they are ours (request data).
    return tuple(
        (k, v, _tree(v, depth + 1) if type(v) in (dict, list) and depth < MAX_ENTRY_DEPTH else None) for k, v in pairs
    )


def _same_entries(old: tuple[Any, ...], value: dict[Any, Any] | list[Any]) -> bool:
    """Whether ``value`` (a container of ours) still holds the entries ``old`` recorded. Only
    what was there before is walked: a new object is a change, whatever it holds."""
    if len(value) != len(old):
        return False
    current = value.items() if isinstance(value, dict) else ((None, v) for v in value)
    for (old_key, old_value, inside), (key, entry) in zip(old, current, strict=True):
        # Our keys are strings: a key the student's code put there is not compared with ==,
        # which would run its own __eq__ here, outside the call and its time limit.
        if not (old_key is key or (type(old_key) is str and type(key) is str and old_key == key)):
            return False
        if inside is not None:
            if old_value is not entry or not _same_entries(inside, entry):
                return False
        elif old_value is not entry and not _same_plain_value(old_value, entry):
            return False
    return True


_PLAIN = (str, int, float, bool, type(None))


def _same_plain_value(old: Any, new: Any) -> bool:
    """A string or number written back equal (``config["model_type"].lower()`` of a lower-case
    one) changes nothing the caller sees; both are of exact built-in types, so ``==`` runs none
    of the student's code."""
    return type(old) is type(new) and type(old) in _PLAIN and old == new


def snapshot(args: list[Any], kwargs: dict[str, Any]) -> dict[str, Any]:
    """What the call's arguments hold: copies of their arrays, and their containers' entries."""
    copies: dict[str, Any] = {name: array.copy() for name, array in _arrays(args, kwargs).items()}
    return copies | {f"{name}[:]": entries for name, entries in _entries(args, kwargs).items()}


def mutated(before: dict[str, Any], args: list[Any], kwargs: dict[str, Any]) -> list[str]:
    after = _arrays(args, kwargs)  # compared as they are now: no second copy
    named = _named(args, kwargs)
    changed = []
    for name, old in before.items():
        if name.endswith("[:]"):  # a container whose entries were replaced, added or removed
            container = named.get(name[:-3])
            if not isinstance(container, (dict, list)) or not _same_entries(old, container):
                changed.append(name[:-3])
        elif name not in after or _changed(old, after[name]):
            changed.append(name)
    return changed


def _changed(old: np.ndarray, new: np.ndarray) -> bool:
    """Whether ``new`` no longer holds ``old``'s values (NaN where NaN was). The same bytes
    mean the same values, and comparing bytes takes a fraction of ``array_equal``'s time on
    the small arrays of most calls; different bytes may still be equal values (``-0.0``)."""
    if new.shape != old.shape:
        return True
    if new.dtype == old.dtype and new.tobytes() == old.tobytes():
        return False
    return not np.array_equal(new, old, equal_nan=True)


class CallStopped(BaseException):
    """Raised into the student's function when its time is up, as Jupyter's Interrupt raises
    KeyboardInterrupt: the traceback says which line was running. A function that swallows it
    runs on until the trusted side kills the worker, as it would without it."""


_calling = [False]
"""The student's function is running (the stop must never land in the harness's own code)."""


def _stop_call(signum: int, frame: Any) -> None:
    if _calling[0]:
        _calling[0] = False  # raised once: a handler of the student's that catches it is on its own
        raise CallStopped


def _timed_call(fn: Callable[..., Any], args: list[Any], kwargs: dict[str, Any], stop_after: float | None) -> Any:
    """``fn(*args, **kwargs)``, interrupted after ``stop_after`` seconds (None: never)."""
    if not stop_after or stop_after <= 0:
        return fn(*args, **kwargs)
    previous = signal.signal(signal.SIGALRM, _stop_call)
    signal.setitimer(signal.ITIMER_REAL, stop_after)
    _calling[0] = True
    try:
        return fn(*args, **kwargs)
    finally:
        _calling[0] = False
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def invoke(
    fn: Callable[..., Any],
    args_node: Any,
    kwargs_node: Any,
    scratch: str,
    directory: str,
    stop_after: float | None = None,
) -> dict[str, Any]:
    """Call ``fn`` with arguments rebuilt from request data; report the outcome as data.
    ``stop_after``: the call's time limit, past which the function is interrupted and the
    report (status ``stopped``) says where it was."""
    built: list[callables.Recorded] = []
    args = materialize(args_node, built, scratch)
    kwargs = materialize(kwargs_node, built, scratch)
    before = snapshot(args, kwargs)
    out, err = CappedText(OUTPUT_CAP), CappedText(OUTPUT_CAP)
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = out, err
    start = time.perf_counter()
    try:
        result = _timed_call(fn, args, kwargs, stop_after)
        status: dict[str, Any] = {"status": "ok", "result": result}
    except CallStopped as exc:
        where = "".join(traceback.format_list(own_frames(exc, directory)))[-TRACEBACK_CAP:]
        status = {"status": "stopped", "traceback": where}
    except BaseException as exc:
        status = {"status": "raised", **exception_report(exc, directory)}
        if isinstance(exc, NotImplementedError) and is_untouched_stub(fn):
            status["stub"] = True  # the grader may give its later calls this same answer
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
