"""``normlab autograde``: grade a whole nbgrader class in the sandbox, fast, and resumably.

For every ``submitted/<student>/<assignment>/``, in three steps per student:

1. grade the notebook in the sandbox (in parallel, on this machine or a Dask cluster) and
   store the report atomically under ``normlab/<assignment>/reports/``;
2. write the grades into nbgrader's gradebook, the autograded notebook into ``autograded/``
   (so formgrader and ``nbgrader export`` work as usual) and the feedback HTML into
   ``feedback/``;
3. mark the student done with the hash of what was graded.

A re-run skips students whose submission has not changed since they were marked done, and
reuses stored reports for students interrupted between steps 1 and 3. A notebook that cannot
be read scores zero with a message; a student the grader itself fails on is reported and
skipped, and never stops the others.
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import nbformat

from grader import gradebook
from grader.batch import grade_many
from grader.faults import GraderFault
from grader.feedback import feedback_html
from grader.messages import Message
from grader.model import Report
from grader.runner import Options
from grader.store import digest, load_report, save_report, write_atomic


@dataclass(frozen=True)
class StudentOutcome:
    student: str
    state: str
    """``graded``, ``unchanged`` (done before, skipped) or ``failed`` (a fault of the grader)."""
    score: float | None = None
    max_score: float | None = None
    detail: str = ""


@dataclass(frozen=True)
class Course:
    root: Path
    assignment: str

    @property
    def work(self) -> Path:
        return self.root / "normlab" / self.assignment

    def released_notebooks(self) -> list[Path]:
        found = sorted((self.root / "release" / self.assignment).glob("*.ipynb"))
        if not found:
            raise GraderFault(
                f"no released notebook in release/{self.assignment}/: run `nbgrader generate_assignment "
                f"{self.assignment}` in {self.root} first"
            )
        return found

    def students(self) -> dict[str, Path]:
        submitted = self.root / "submitted"
        if not submitted.is_dir():
            return {}
        return {
            d.name: d / self.assignment
            for d in sorted(submitted.iterdir())
            if d.is_dir() and (d / self.assignment).is_dir()
        }

    def notebook_of(self, submission: Path, expected: str) -> Path | None:
        """The submitted notebook: the expected name, else the only notebook there is."""
        if (submission / expected).is_file():
            return submission / expected
        others = sorted(p for p in submission.glob("*.ipynb") if p.is_file())
        return others[0] if len(others) == 1 else None

    def key(self, submission: Path, notebook: Path | None) -> str:
        return digest(*(p for p in [notebook, submission / "timestamp.txt"] if p is not None))


def _empty_notebook() -> Path:
    handle = tempfile.NamedTemporaryFile("w", suffix=".ipynb", delete=False)
    handle.write(json.dumps({"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    handle.close()
    return Path(handle.name)


def autograde(
    course_dir: Path,
    assignment: str,
    *,
    options: Options | None = None,
    jobs: int | None = None,
    scheduler: str | None = None,
    force: bool = False,
    lang: str = "en",
    progress: bool = True,
) -> Iterator[StudentOutcome]:
    """Grade every submission of ``assignment``; yield one outcome per student."""
    options = options or Options()
    course = Course(course_dir.resolve(), assignment)
    released_path = course.released_notebooks()[0]
    released = nbformat.read(str(released_path), as_version=4)
    config = gradebook.course_config(course.root)

    pending: dict[str, tuple[Path, Path | None, str]] = {}
    for student, submission in course.students().items():
        notebook = course.notebook_of(submission, released_path.name)
        key = course.key(submission, notebook)
        done = course.work / "done" / student
        if not force and done.is_file() and done.read_text() == key:
            yield StudentOutcome(student, "unchanged")
            continue
        pending[student] = (submission, notebook, key)

    reports: dict[str, Report] = {}
    failed: dict[str, str] = {}
    empty = _empty_notebook()
    try:
        # Which file to grade for which students; those without a notebook share an empty one.
        owners: dict[Path, list[str]] = {}
        for student, (_, notebook, key) in pending.items():
            stored = None if force else load_report(course.work / "reports" / f"{student}.json", key)
            if stored is not None:
                reports[student] = stored
            else:
                owners.setdefault(notebook or empty, []).append(student)
        results = grade_many(list(owners), options, jobs=jobs, scheduler=scheduler)
        for path, outcome in _with_progress(results, len(owners), progress):
            for student in owners[path]:
                if isinstance(outcome, str):
                    failed[student] = outcome
                    continue
                report = outcome
                if path == empty:
                    note = Message("submission.no_notebook", {"expected": released_path.name})
                    report = replace(outcome, submission=str(pending[student][0]), notes=(note,))
                save_report(course.work / "reports" / f"{student}.json", report, pending[student][2])
                reports[student] = report
    finally:
        empty.unlink(missing_ok=True)

    for student, (submission, notebook, key) in pending.items():
        if student in failed or student not in reports:
            yield StudentOutcome(student, "failed", detail=failed.get(student, "not graded"))
            continue
        report = reports[student]
        try:
            _publish(course, config, released, released_path.name, student, submission, notebook, report, lang)
        except GraderFault as exc:
            yield StudentOutcome(student, "failed", detail=str(exc))
            continue
        write_atomic(course.work / "done" / student, key)
        yield StudentOutcome(student, "graded", report.score, report.max_score)


def _with_progress(
    items: Iterator[tuple[Path, Report | str]], total: int, enabled: bool
) -> Iterator[tuple[Path, Report | str]]:
    from tqdm import tqdm

    with tqdm(
        total=total, disable=not enabled or total == 0, file=sys.stderr, unit="submission", desc="grading"
    ) as bar:
        for item in items:
            bar.update(1)
            yield item


def _publish(
    course: Course,
    config: gradebook.CourseConfig,
    released: nbformat.NotebookNode,
    notebook_name: str,
    student: str,
    submission: Path,
    notebook: Path | None,
    report: Report,
    lang: str,
) -> None:
    """Step 2: gradebook, autograded notebook, feedback."""
    from nbgrader.utils import parse_utc

    student_nb = gradebook.read_student_notebook(notebook)
    stamp_file = submission / "timestamp.txt"
    timestamp = parse_utc(stamp_file.read_text().strip()) if stamp_file.is_file() else None
    answered = gradebook.answered_cells(released, student_nb)
    gradebook.record(config, course.assignment, student, report, answered, timestamp)
    autograded = course.root / "autograded" / student / course.assignment
    autograded.mkdir(parents=True, exist_ok=True)
    nb = gradebook.autograded_notebook(released, student_nb, report, lang)
    write_atomic(autograded / notebook_name, nbformat.writes(nb))
    if stamp_file.is_file():
        write_atomic(autograded / "timestamp.txt", stamp_file.read_text())
    feedback = course.root / "feedback" / student / course.assignment / "normlab-feedback.html"
    write_atomic(feedback, feedback_html(report, student=student, assignment=course.assignment, lang=lang))
