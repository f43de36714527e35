"""The instructor's summary at the end of a class: counts, the score histogram (text and
image), the slowest gradings and the tests failed most often."""

from __future__ import annotations

import re

from grader.classgrade import State, StudentOutcome
from grader.classsummary import BINS, summarize, summary_text, write_histogram
from grader.model import CheckResult, Report, Status, Visibility


def _report(passed: list[bool], seconds: float) -> Report:
    results = tuple(
        CheckResult(
            f"rmsnorm/hidden/test_{i}",
            "rmsnorm",
            f"check number {i}, " + "in a long description " * 8,
            Visibility.HIDDEN,
            Status.PASSED if ok else Status.FAILED,
            1.0 if ok else 0.0,
            1.0,
        )
        for i, ok in enumerate(passed)
    )
    return Report("lab.ipynb", results, ("public", "hidden"), seconds=seconds)


def _graded(student: str, passed: list[bool], seconds: float, state: State = State.GRADED) -> StudentOutcome:
    report = _report(passed, seconds)
    return StudentOutcome(student, state, report.score, report.max_score, report=report)


CLASS = [
    _graded("ana", [True] * 4, 0.4),
    _graded("ben", [True, True, False, False], 0.9),
    _graded("cai", [False] * 4, 2.5),
    _graded("dee", [True, False, False, False], 0.3, State.UNCHANGED),
    _graded("eli", [True] * 4, 0.2),
    StudentOutcome("fay", State.FAILED, detail="the grading process died twice"),
]


def test_counts_bins_slowest_and_most_failed():
    summary = summarize(CLASS)
    assert summary.states == {"graded": 4, "unchanged": 1, "failed": 1}
    assert (summary.full, summary.zero, summary.scored) == (2, 1, 5)
    assert sum(summary.bins) == 5
    assert summary.bins[0] == 1 and summary.bins[BINS // 4] == 1 and summary.bins[BINS // 2] == 1
    assert summary.bins[-1] == 2  # full marks land in the last bin
    assert [s for s, _ in summary.slowest][:2] == ["cai", "ben"]
    # Among those who scored (cai did not): test_2 and test_3 failed for ben and dee (ties in
    # the course's order), test_1 for dee only, test_0 for nobody.
    assert summary.attempted == 4
    failed = [(name.rsplit("/", 1)[1], n) for name, n in summary.most_failed]
    assert failed == [("test_2", 2), ("test_3", 2), ("test_1", 1)]


def test_the_text_draws_one_bar_per_bin_and_names_what_failed():
    text = summary_text(summarize(CLASS))
    assert "4 graded now, 1 graded before, 1 not graded; 2 with full marks, 1 with zero" in text
    bars = [line for line in text.splitlines() if re.match(r"^\s+\d+-\d+\s*% ", line)]
    assert len(bars) == BINS
    assert bars[-1].endswith("#" * 40 + " 2")  # the tallest bar is the full width
    assert "#" not in bars[1]  # an empty bin has no bar
    assert "cai 2.50 s" in text
    assert "tests failed most often (among the 4 students whose automatic score is above zero):" in text
    assert "   2 (50 %)  rmsnorm/hidden/test_3: check number 3, in a long description" in text
    assert "check number 0" not in text  # nobody failed it
    assert all(len(line) < 120 for line in text.splitlines())  # long descriptions are cut short


def test_an_empty_class_is_summed_up_without_failing(tmp_path):
    summary = summarize([])
    assert summary.scored == 0 and summary.bins == (0,) * BINS
    assert "0 graded now" in summary_text(summary)
    assert write_histogram(summary, tmp_path / "empty.png", "nobody") == tmp_path / "empty.png"


def test_the_histogram_is_a_png_image(tmp_path):
    path = write_histogram(summarize(CLASS), tmp_path / "feedback" / "scores.png", "lab: 5 students")
    assert path is not None and path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_late_penalty_counts_and_re_scored_students_are_counted():
    """The histogram shows what the gradebook counts: a full-marks notebook zeroed for lateness
    is a zero; a re-scored student is one of the class."""
    late = _graded("gus", [True] * 4, 0.1, State.RESCORED)
    late = StudentOutcome("gus", State.RESCORED, late.score, late.max_score, report=late.report, penalty=late.score)
    summary = summarize([late, _graded("hal", [True] * 4, 0.1)])
    assert summary.states == {"rescored": 1, "graded": 1}
    assert (summary.full, summary.zero, summary.bins[0], summary.bins[-1]) == (1, 1, 1, 1)
    assert "1 graded now, 1 re-scored, 0 graded before" in summary_text(summary)
    assert "1 with zero (1 late: counted after their penalty)" in summary_text(summary)
    assert "late" not in summary_text(summarize(CLASS))  # nobody was late: nothing said about it


def test_the_slowest_gradings_are_of_this_run():
    """Trial 58: a run that graded nobody (everyone unchanged) still listed "slowest gradings",
    the times of an earlier run's gradings, as if this run had spent them."""
    before = [_graded(s, [True] * 4, 9.0, State.UNCHANGED) for s in ("ann", "bo")]
    assert summarize(before).slowest == ()
    assert "slowest gradings" not in summary_text(summarize(before))
    assert [s for s, _ in summarize([*before, _graded("cy", [True] * 4, 0.5)]).slowest] == ["cy"]


def test_students_graded_by_an_interrupted_run_are_not_counted_as_graded_now():
    resumed = _graded("gus", [True] * 4, 0.5, State.RESUMED)
    text = summary_text(summarize([*CLASS, resumed]))
    assert "4 graded now, 1 graded by an earlier run, 1 graded before, 1 not graded" in text


def test_a_hand_in_with_nothing_to_grade_is_told_apart_from_an_untouched_one():
    from dataclasses import replace

    from grader.course import MODULES
    from grader.messages import Message

    missing = tuple(Message("submission.module_missing", {"module": f"{m}.py"}) for m in MODULES)
    empty = _graded("hal", [False] * 4, 0.2)
    empty = replace(empty, report=replace(empty.report, notes=missing))
    no_notebook = _graded("ivy", [False] * 4, 0.2)
    no_notebook = replace(no_notebook, report=replace(no_notebook.report, notes=(Message("submission.no_notebook"),)))
    # a notebook that is not JSON: a note says so, and each test points to it
    broken = _graded("jo", [False] * 4, 0.2)
    unreadable = (Message("fault.submission_unreadable"),)
    broken_results = tuple(replace(r, messages=unreadable) for r in broken.report.results)
    not_json = (Message("submission.notebook_not_json", {"line": "1", "column": "2"}),)
    broken = replace(broken, report=replace(broken.report, results=broken_results, notes=not_json))
    summary = summarize([*CLASS, empty, no_notebook, broken])
    assert (summary.zero, summary.empty) == (4, 3)  # cai's untouched notebook is not empty
    assert "4 with zero (3 of them handed in nothing gradable)" in summary_text(summary)
    assert "handed in nothing" not in summary_text(summarize(CLASS))


def test_tests_failed_as_often_are_listed_in_the_course_order():
    """Instructor trial 29: ties were broken by name, so five compare tests hid the rmsnorm
    tests behind them (failed as often, earlier in the lab, and their cause)."""

    def report(names: list[str]) -> Report:
        results = tuple(
            CheckResult(name, name.split("/")[0], name, Visibility.HIDDEN, Status.FAILED, 0.0, 1.0) for name in names
        )
        passed = CheckResult("stack/hidden/test_ok", "stack", "ok", Visibility.HIDDEN, Status.PASSED, 1.0, 1.0)
        return Report("lab.ipynb", (passed, *results), ("public", "hidden"), seconds=0.1)

    names = ["rmsnorm/hidden/test_z", "residual/hidden/test_y", "compare/hidden/test_a"]
    outcomes = [StudentOutcome(s, State.GRADED, 1.0, 4.0, report=report(names)) for s in ("ann", "bo")]
    assert [name for name, _ in summarize(outcomes).most_failed] == names
