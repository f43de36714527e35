"""``normlab autograde``: grade a whole nbgrader class in the sandbox, fast, and resumably.

nbgrader's course directory is a class-grading source (every ``submitted/<student>/<assignment>/``)
and publisher (the gradebook, ``autograded/`` for formgrader and ``nbgrader export``, and a
feedback page per student in ``feedback/``); the pipeline itself is ``grader/classgrade.py``.
A notebook that cannot be read scores zero with a message.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from grader.classgrade import ClassRun, Refused, StudentOutcome, Submitted, grade_class
from grader.faults import GraderFault
from grader.integrations.nbgrader import gradebook
from grader.messages import Message
from grader.model import Report
from grader.report.feedback import feedback_html
from grader.report.store import digest, write_atomic
from grader.runner import Options


@dataclass(frozen=True)
class NbgraderCourse:
    """An nbgrader course directory and one of its assignments, as a class-grading source."""

    root: Path
    assignment: str

    @property
    def work(self) -> Path:
        return self.root / "normlab" / self.assignment

    def released_notebook(self) -> Path:
        found = sorted((self.root / "release" / self.assignment).glob("*.ipynb"))
        if not found:
            raise GraderFault(
                f"no released notebook in release/{self.assignment}/: run `nbgrader generate_assignment "
                f"{self.assignment}` in {self.root} first"
            )
        return found[0]

    def _folders(self) -> dict[str, Path]:
        submitted = self.root / "submitted"
        if not submitted.is_dir():
            return {}
        return {
            d.name: d / self.assignment
            for d in sorted(submitted.iterdir())
            if d.is_dir() and (d / self.assignment).is_dir()
        }

    @staticmethod
    def notebook_of(folder: Path, expected: str) -> Path | None:
        """The submitted notebook: the released name, else the only notebook there is."""
        if (folder / expected).is_file():
            return folder / expected
        others = sorted(p for p in folder.glob("*.ipynb") if p.is_file())
        return others[0] if len(others) == 1 else None

    def submissions(self) -> Iterator[Submitted | Refused]:
        expected = self.released_notebook().name
        for student, folder in self._folders().items():
            try:
                notebook = self.notebook_of(folder, expected)
                key = digest(*(p for p in [notebook, folder / "timestamp.txt"] if p is not None))
            except Exception as exc:  # one student's unreadable folder never stops the class
                yield Refused(student, f"the submission cannot be read ({type(exc).__name__}: {exc})")
                continue
            note = None if notebook is not None else Message("submission.no_notebook", {"expected": expected})
            yield Submitted(student, notebook, key, note)


@dataclass
class NbgraderPublisher:
    """Writes grades into the gradebook, the autograded notebook and the feedback page."""

    course: NbgraderCourse
    lang: str

    def __post_init__(self) -> None:
        import nbformat

        self.released_path = self.course.released_notebook()
        self.released: Any = nbformat.read(str(self.released_path), as_version=4)
        self.config = gradebook.course_config(self.course.root)

    def publish(self, submitted: Submitted, report: Report) -> None:
        import nbformat
        from nbgrader.utils import parse_utc

        course, student = self.course, submitted.student
        folder = course.root / "submitted" / student / course.assignment
        student_nb = gradebook.read_student_notebook(submitted.path)
        stamp_file = folder / "timestamp.txt"
        timestamp = parse_utc(stamp_file.read_text().strip()) if stamp_file.is_file() else None
        answered = gradebook.answered_cells(self.released, student_nb)
        gradebook.record(self.config, course.assignment, student, report, answered, timestamp)
        autograded = course.root / "autograded" / student / course.assignment
        nb = gradebook.autograded_notebook(self.released, student_nb, report, self.lang)
        write_atomic(autograded / self.released_path.name, nbformat.writes(nb))
        if stamp_file.is_file():
            write_atomic(autograded / "timestamp.txt", stamp_file.read_text())
        feedback = course.root / "feedback" / student / course.assignment / "normlab-feedback.html"
        write_atomic(feedback, feedback_html(report, student=student, assignment=course.assignment, lang=self.lang))


def autograde(
    course_dir: Path,
    assignment: str,
    *,
    options: Options | None = None,
    jobs: int | None = None,
    scheduler: str | None = None,
    force: bool = False,
    progress: bool = True,
) -> Iterator[StudentOutcome]:
    """Grade every submission of ``assignment``; yield one outcome per student."""
    options = options or Options()
    course = NbgraderCourse(course_dir.resolve(), assignment)
    publisher = NbgraderPublisher(course, options.settings.lang)
    run = ClassRun(course, publisher, options, jobs=jobs, scheduler=scheduler, force=force, progress=progress)
    yield from grade_class(run)
