"""A worker's answer to one call, parsed once, at the edge, into a typed value with bounds.

Everything in a response frame was written by the student's process. Nothing deeper in the
trusted code reads the raw response: the proxy gets one of the types below, whose strings are
capped, whose names are limited to the names of the arguments we passed, and whose counts are
bounded. A response that does not fit the schema is :class:`Malformed` (the student's fault).
(Strings arrive with any lone surrogate already escaped: see ``inside/protocol.py``.)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from grader.course import MODULE_OF
from grader.sandbox.inside.wire import WireCallable

EXC_TYPE_CAP = 200
MESSAGE_CAP = 2000
TRACEBACK_CAP = 4000
OUTPUT_CAP = 16 * 1024
NAME_CAP = 100
MAX_CALLS = 10**9
RECORDED_INPUTS = 2


@dataclass(frozen=True)
class SublayerRecord:
    """What one sublayer passed to the student's function saw."""

    calls: int
    inputs: tuple[np.ndarray, ...]
    """Its first inputs (at most two), as plain arrays."""


@dataclass(frozen=True)
class Returned:
    result: Any
    mutated: tuple[str, ...]
    """Arguments the function changed in place: only names of arguments we passed."""
    sublayers: tuple[SublayerRecord, ...] | None
    """One record per sublayer we passed; None when the worker's record was unreadable."""
    output: str
    seconds: float


@dataclass(frozen=True)
class Raised:
    """The function (or, for :class:`ImportFailed`, the import of its module) raised."""

    exc_type: str
    """The exception's class name: the student's choice, shown on public tests only."""
    builtin_type: str
    """Its nearest built-in base class as the worker reports it (checked against the list of
    built-in names before it is shown anywhere)."""
    message: str
    traceback: str
    output: str
    missing_name: str = ""
    """For a NameError: the name that was not defined (an identifier, or empty)."""
    raised_in: str = ""
    """The graded function of the student's code the exception left from (empty when it is not
    one of the course's graded functions: only those names are ever shown)."""
    stub: bool = False
    """The worker's word that the function is an untouched stub: it raises NotImplementedError
    whatever its arguments. Only that student's own later calls can rest on it."""


@dataclass(frozen=True)
class ImportFailed(Raised):
    pass


@dataclass(frozen=True)
class Missing:
    found: str | None
    """The type name of what the module defines under the function's name, if anything."""
    output: str


@dataclass(frozen=True)
class Malformed:
    detail: str


Answer = Returned | Raised | ImportFailed | Missing | Malformed


def text(value: object, cap: int) -> str:
    """A string from the worker, capped (anything else becomes its type's name)."""
    if not isinstance(value, str):
        return "" if value is None else f"<{type(value).__name__}>"
    return value if len(value) <= cap else value[:cap] + f" [... {len(value) - cap} more characters]"


def argument_names(args: list[Any], kwargs: dict[str, Any]) -> frozenset[str]:
    """The names the worker may report as modified: as ``calling.snapshot`` forms them from
    the arguments we sent (``arg0``, a keyword's name, ``params['w_o']``)."""
    named = {f"arg{i}": a for i, a in enumerate(args)} | kwargs
    names = set()
    for name, value in named.items():
        if isinstance(value, np.ndarray):
            names.add(name)
        elif isinstance(value, dict):
            names.add(name)  # its entries replaced, added or removed
            names.update(f"{name}[{k!r}]" for k, v in value.items() if isinstance(v, np.ndarray))
        elif isinstance(value, list):
            names.add(name)
            names.update(f"{name}[{i}]" for i, v in enumerate(value) if isinstance(v, np.ndarray))
    return frozenset(names)


def _seconds(value: object) -> float:
    if isinstance(value, (int, float)) and not isinstance(value, bool) and 0.0 <= value < 1e9:
        return float(value)
    return 0.0


def _sublayers(records: object, sent: int) -> tuple[SublayerRecord, ...] | None:
    if not isinstance(records, list) or len(records) != sent:
        return None
    out = []
    for record in records:
        if not isinstance(record, dict) or set(record) != {"calls", "inputs"}:
            return None
        calls, inputs = record["calls"], record["inputs"]
        if type(calls) is not int or not 0 <= calls <= MAX_CALLS or not isinstance(inputs, list):
            return None
        if len(inputs) > RECORDED_INPUTS or not all(type(a) is np.ndarray for a in inputs):
            return None
        out.append(SublayerRecord(calls, tuple(inputs)))
    return tuple(out)


def _returned(message: dict[str, Any], output: str, names: frozenset[str], sublayers: int) -> Answer:
    mutated = message.get("mutated")
    if not isinstance(mutated, list) or len(mutated) > len(names):
        return Malformed("malformed record of modified arguments")
    if not all(isinstance(m, str) and m in names for m in mutated):
        return Malformed("the record of modified arguments names arguments that were not passed")
    return Returned(
        result=message["result"],
        mutated=tuple(dict.fromkeys(mutated)),
        sublayers=_sublayers(message.get("callables"), sublayers),
        output=output,
        seconds=_seconds(message.get("seconds")),
    )


def _raised(message: dict[str, Any], output: str, kind: type[Raised]) -> Raised:
    name = message.get("name")
    return kind(
        exc_type=text(message.get("exc_type"), EXC_TYPE_CAP),
        builtin_type=text(message.get("builtin_type"), EXC_TYPE_CAP),
        message=text(message.get("message"), MESSAGE_CAP),
        traceback=text(message.get("traceback"), TRACEBACK_CAP),
        output=output,
        missing_name=name if isinstance(name, str) and name.isidentifier() and len(name) <= NAME_CAP else "",
        raised_in=inside if isinstance(inside := message.get("raised_in"), str) and inside in MODULE_OF else "",
        stub=message.get("stub") is True and message.get("builtin_type") == "NotImplementedError" and not output,
    )


def parse(message: dict[str, Any], args: list[Any], kwargs: dict[str, Any]) -> Answer:
    """The typed answer in a worker's response to a call with ``args`` and ``kwargs``."""
    output = "".join(text(message.get(k), OUTPUT_CAP) for k in ("stdout", "stderr"))
    status = message.get("status")
    if status == "ok" and "result" in message:
        sent = sum(1 for a in [*args, *kwargs.values()] if isinstance(a, WireCallable))
        return _returned(message, output, argument_names(args, kwargs), sent)
    if status == "raised":
        return _raised(message, output, Raised)
    if status == "import_error":
        return _raised(message, output, ImportFailed)
    if status == "missing":
        found = message.get("found")
        return Missing(None if found is None else text(found, NAME_CAP), output)
    if status == "unencodable":
        return Malformed(text(message.get("detail"), 500))
    return Malformed("malformed response")
