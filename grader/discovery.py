"""The tests of a suite and what each needs: its points, its seed and its fixtures.

One module for the three ways a suite runs: the pytest plugin (``normlab check`` and
``grade``), the in-kernel runner of nbgrader's native path, and the release (which sums the
points of each test cell). Whatever runs a test, it gets the same points, the same seeded
inputs and the same fixtures, so an honest submission scores the same on every path.
"""

from __future__ import annotations

import importlib
import inspect
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np

from grader import checks, course
from grader.expected import Expected
from grader.twins import TwinExpected

DEFAULT_POINTS = 1.0
FIXTURE_NAMES = ("student", "reference", "rng", "sublayer", "expected")


def points(marks: list[Any]) -> float:
    """The points of a test from its pytest marks (``@pytest.mark.points(n)``; default 1)."""
    for mark in marks:
        if mark.name == "points" and mark.args:
            return float(mark.args[0])
    return DEFAULT_POINTS


def seed(module: str, test: str) -> int:
    """A test's random seed, from its file's stem and its name only: the same on every
    machine and on every path (``test_rmsnorm`` + ``test_rmsnorm_small_example``)."""
    return zlib.crc32(f"{module}::{test}".encode())


def description(doc: str | None, name: str) -> str:
    """What the test checks, in the words a student sees: its docstring on one line."""
    return " ".join((doc or name).split())


@dataclass(frozen=True)
class SuiteTest:
    """One test function of a suite."""

    name: str
    function: Callable[..., None]
    points: float
    description: str


def hidden_suite(exercise: str) -> list[SuiteTest]:
    """The hidden tests of one exercise, in the order they are written."""
    module = importlib.import_module(f"grader.suites.test_{exercise}")
    found = [fn for name, fn in vars(module).items() if name.startswith("test_") and inspect.isfunction(fn)]
    found.sort(key=lambda fn: fn.__code__.co_firstlineno)
    return [
        SuiteTest(fn.__name__, fn, points(getattr(fn, "pytestmark", [])), description(fn.__doc__, fn.__name__))
        for fn in found
    ]


@dataclass(frozen=True)
class FixtureContext:
    """What the fixtures of one test are made from."""

    student: Any
    reference: Any | None
    seed: int


def _reference(context: FixtureContext) -> Any:
    if context.reference is None:
        raise RuntimeError("the reference solution is not loaded for this run")
    return context.reference


@cache
def course_expected() -> Expected:
    """The checks of the public tests, on the course's answers file."""
    return Expected.load(course.exercises_dir())


FIXTURES: dict[str, Callable[[FixtureContext], Any]] = {
    "student": lambda context: context.student,
    "reference": _reference,
    "rng": lambda context: np.random.default_rng(context.seed),
    # ``sublayer("scale", factor=0.01)``: a sublayer that crosses to the worker as data.
    "sublayer": lambda context: checks.Sublayer,
    # The public tests' answers, from the course's own copy (never the submission's); in a
    # final grading (the reference loaded), each check also judged on its twin (twins.py).
    "expected": lambda context: (
        course_expected() if context.reference is None else TwinExpected(course_expected(), context.reference)
    ),
}


def arguments(function: Callable[..., Any], context: FixtureContext) -> dict[str, Any]:
    """The fixtures ``function`` asks for by parameter name, built from ``context``."""
    return {name: FIXTURES[name](context) for name in inspect.signature(function).parameters}
