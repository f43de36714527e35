"""Tight default limits, calibrated once when an assignment is released.

The per-call wall-clock limit follows the reference's own time: a multiple of its slowest test
with a floor; the budget of a whole submission, a multiple of the reference's whole grading
with a floor. ``normlab release`` measures them by grading the reference (the real path, in
the sandbox) and writes them into the course file, where every later grading reads them, so
grading stays deterministic and a submission that hangs in every function costs seconds, not
the flat limits' minutes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from grader.settings import Settings

CALL_FLOOR = 3.0
"""Seconds a call may always take: room for a loaded machine and a notebook cell's imports
(a cell has the same limit)."""
CALL_MULTIPLE = 50.0
SUBMISSION_FLOOR = 30.0
SUBMISSION_MULTIPLE = 30.0


@dataclass(frozen=True)
class Calibration:
    slowest_test: float
    """Wall seconds of the reference's slowest test (calls and checks)."""
    reference_seconds: float
    """Wall seconds of the reference's whole grading."""
    call_seconds: float
    submission_seconds: float


def _up(seconds: float) -> float:
    """Rounded up to half a second, so the course file holds a plain number."""
    return math.ceil(seconds * 2) / 2


def limits_for(slowest_test: float, reference_seconds: float) -> Calibration:
    """The limits that follow from the reference's times."""
    call = max(CALL_FLOOR, _up(CALL_MULTIPLE * slowest_test))
    submission = max(SUBMISSION_FLOOR, _up(SUBMISSION_MULTIPLE * reference_seconds))
    return Calibration(slowest_test, reference_seconds, call, submission)


ROUNDS = 2
"""Gradings of the reference; each test's time is its fastest: a test slowed once by a busy
machine (or by the first call's warm-up) does not loosen every student's limit."""


def calibrate(settings: Settings) -> Calibration:
    """Grade the reference ``ROUNDS`` times and derive the limits from its fastest times. Raises
    :class:`~grader.faults.GraderFault` when the reference cannot be graded."""
    from grader import course
    from grader.faults import GraderFault
    from grader.runner import Options, grade

    fastest: dict[str, float] = {}
    total = float("inf")
    for _ in range(ROUNDS):
        report = grade(course.solutions_dir(), Options(settings=settings))
        if report.score != report.max_score:
            raise GraderFault("the reference lost points while calibrating the limits")
        for result in report.results:
            fastest[result.name] = min(fastest.get(result.name, result.seconds), result.seconds)
        total = min(total, report.seconds)
    return limits_for(max(fastest.values(), default=0.0), total)
