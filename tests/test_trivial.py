"""Every hidden test gives zero to code that does none of the maths (see ``trivial.py``), and
no check's wording has to be withheld on the way."""

from __future__ import annotations

import pytest
from trivial import KINDS, frozen_answers, write

from grader.model import Status, Visibility
from grader.runner import Options, grade

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def answers():
    return frozen_answers()


@pytest.mark.parametrize("kind", KINDS)
def test_no_hidden_test_gives_points_to_trivial_code(kind, answers, tmp_path):
    report = grade(write(kind, tmp_path / kind, answers), Options(suites=("hidden",)))
    hidden = [r for r in report.results if r.visibility is Visibility.HIDDEN]
    assert len(hidden) > 90
    earned = [f"{r.name} ({r.score:g})" for r in hidden if r.score > 0 or r.status is Status.PASSED]
    assert earned == [], f"{kind}: points without the maths: {earned}"
    withheld = [r.name for r in hidden if any(m.id == "check.withheld" for m in r.messages)]
    assert withheld == [], f"{kind}: a check's wording was not ours: {withheld}"
