"""Hidden tests inside the student's own kernel: nbgrader's native autograde path.

The released notebook's hidden test cells call :func:`run_hidden`. It runs the very same
hidden suite functions that ``normlab grade`` runs, with the notebook's globals standing in
for the sandboxed worker, and returns the points earned, which nbgrader reads as the cell's
partial credit. Calls go through the same argument rebuilding, mutation detection and wire
round trip as in the worker, so an honest notebook gets the same score on both paths.

This path is NOT tamper-proof: the tests run in the student's process, where the student's
code can patch numpy, pytest, IPython or this module before the tests run. Use
``normlab autograde`` where grades matter.
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import io
import tempfile
import warnings
import zlib
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from grader import checks, paths
from grader.client import Reply
from grader.faults import StudentFault
from grader.messages import Message, describe, render_all
from grader.proxy import StudentProxy
from grader.reference import Reference
from grader.sandbox.limits import Limits
from grader.submission import Prepared
from grader.worker import calling, protocol

NOTEBOOK_MODULE = "notebook"


class InKernelWorker:
    """Answers calls from a namespace in this process, exactly as the worker would."""

    def __init__(self, namespace: dict[str, Any]) -> None:
        self.namespace = namespace
        self.scratch = tempfile.mkdtemp(prefix="normlab-native-")

    def call(self, function: str, args: list[Any], kwargs: dict[str, Any], seconds: float | None = None) -> Reply:
        fn = self.namespace.get(function)
        if not callable(fn):
            message: dict[str, Any] = {
                "status": "missing",
                "module": NOTEBOOK_MODULE,
                "found": None if fn is None else type(fn).__name__,
            }
        else:
            request = protocol.decode(protocol.encode({"args": args, "kwargs": kwargs}), requests=True)
            message = calling.invoke(fn, request["args"], request["kwargs"], self.scratch, "<notebook>")
        try:
            return Reply("answer", message=protocol.decode(protocol.encode(message)))
        except protocol.ProtocolError as exc:
            return Reply("invalid", detail=str(exc))


def local_student(namespace: dict[str, Any]) -> StudentProxy:
    """A ``student`` fixture over a notebook's globals."""
    prepared = Prepared(
        origin="<notebook>",
        directory=Path(tempfile.gettempdir()),
        kind="notebook",
        single=NOTEBOOK_MODULE,
        present={NOTEBOOK_MODULE},
    )
    return StudentProxy(prepared, InKernelWorker(namespace), Limits())  # type: ignore[arg-type]


def _points(func: Any) -> float:
    for mark in getattr(func, "pytestmark", []):
        if mark.name == "points" and mark.args:
            return float(mark.args[0])
    return 1.0


def hidden_tests(exercise: str) -> list[tuple[str, Any]]:
    """The hidden suite's test functions for one exercise, in definition order."""
    module = importlib.import_module(f"grader.suites.test_{exercise}")
    found = [(name, fn) for name, fn in vars(module).items() if name.startswith("test_") and inspect.isfunction(fn)]
    return sorted(found, key=lambda item: item[1].__code__.co_firstlineno)


def run_hidden(exercise: str, namespace: dict[str, Any], lang: str = "en") -> float:
    """Run the hidden tests of ``exercise`` against a notebook's functions; return the points.

    Prints one line per test (what it checks, and why it failed) using the same guarded
    messages as the sandboxed grader: no hidden input or expected value is shown.
    """
    student = local_student(namespace)
    reference = Reference(paths.solutions_dir())
    checks.set_hidden(True)
    earned, total = 0.0, 0.0
    for name, func in hidden_tests(exercise):
        points = _points(func)
        total += points
        fixtures = {
            "student": student,
            "reference": reference,
            "rng": np.random.default_rng(zlib.crc32(f"test_{exercise}::{name}".encode())),
            "sublayer": checks.Sublayer,
        }
        kwargs = {p: fixtures[p] for p in inspect.signature(func).parameters}
        doc = describe(f"{exercise}/hidden/{name}", " ".join((func.__doc__ or name).split()), lang)
        # Warnings and stderr from the student's code would make nbgrader zero the cell.
        sink = io.StringIO()
        try:
            with warnings.catch_warnings(), contextlib.redirect_stderr(sink):
                warnings.simplefilter("ignore")
                func(**kwargs)
        except (StudentFault, checks.Mismatch) as exc:
            print(f"FAIL  {doc}  (0/{points:g})\n      " + render_all(exc.messages, lang).replace("\n", "\n      "))
            continue
        except (AssertionError, pytest.fail.Exception):
            print(f"FAIL  {doc}  (0/{points:g})\n      " + render_all([Message("check.failed_hidden")], lang))
            continue
        earned += points
        print(f"PASS  {doc}  ({points:g}/{points:g})")
    reference.close()
    print(f"{exercise}: {earned:g}/{total:g} points from hidden tests")
    return earned
