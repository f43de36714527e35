"""Tight default limits: calibrated on the reference when the assignment is released, written
into the course file, and read from it by every grading in the course."""

from __future__ import annotations

import tomllib

import pytest
from test_nbgrader import ASSIGNMENT, ROOT, normlab

from grader.calibration import CALL_FLOOR, CALL_MULTIPLE, SUBMISSION_FLOOR, SUBMISSION_MULTIPLE, limits_for
from grader.sandbox.limits import Limits
from grader.settings import load


def test_the_limits_are_a_multiple_of_the_reference_with_a_floor():
    fast = limits_for(0.001, 0.5)
    assert (fast.call_seconds, fast.submission_seconds) == (CALL_FLOOR, SUBMISSION_FLOOR)
    slow = limits_for(0.2, 3.0)
    assert slow.call_seconds == CALL_MULTIPLE * 0.2 and slow.submission_seconds == SUBMISSION_MULTIPLE * 3.0
    assert limits_for(0.0613, 1.0).call_seconds == 3.5  # rounded up to half a second


@pytest.mark.slow
def test_release_writes_calibrated_limits_that_grading_reads(tmp_path):
    course = tmp_path / "course"
    normlab("release", "--course-dir", course, "--assignment", ASSIGNMENT, cwd=ROOT)
    text = (course / "normlab.toml").read_text()
    assert "Calibrated by `normlab release` on the reference" in text
    limits = tomllib.loads(text)["limits"]
    defaults = Limits()
    # The reference grades in well under a second: the floors, far below the flat defaults.
    assert CALL_FLOOR <= limits["call_seconds"] < defaults.call_seconds
    assert SUBMISSION_FLOOR <= limits["submission_seconds"] < defaults.submission_seconds
    settings = load(environ={}, course_dir=course)
    assert settings.limits.call_seconds == limits["call_seconds"]
    assert settings.limits.submission_seconds == limits["submission_seconds"]
    # A second release never overwrites the instructor's course file.
    (course / "normlab.toml").write_text(text.replace(f"call_seconds = {limits['call_seconds']}", "call_seconds = 7.0"))
    normlab("release", "--course-dir", course, "--assignment", ASSIGNMENT, cwd=ROOT)
    assert load(environ={}, course_dir=course).limits.call_seconds == 7.0
