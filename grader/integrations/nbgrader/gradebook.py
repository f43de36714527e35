"""Put normlab's grades where nbgrader keeps its own: the gradebook and ``autograded/``.

Grades go through nbgrader's own API (:class:`nbgrader.api.Gradebook`), so ``nbgrader export``
and formgrader see them as if nbgrader had graded. Each test cell of the released notebook
is worth one exercise's public or hidden tests; its score is the points normlab's sandboxed
run gave those tests. Manually graded answer cells are left for formgrader, flagged for
review when the student answered.

The autograded notebook that formgrader shows is rebuilt from the *released* notebook (never
the source, which holds the solutions): each solution cell gets the student's own definition
of its function (found by name), each answer cell the student's answer (found by grade id,
followed by any markdown cell the student added after that question), each question's
answers cell the student's ``answers_<id> = {...}`` (found by name), and each test cell an
output with normlab's verdicts, so nothing about the student's cell structure can break it.
The cells the student added are kept, as theirs (text only, without their metadata or
outputs), after the released cell they followed.
"""

from __future__ import annotations

import ast
import copy
import functools
import json
import os
import re
import sys
import warnings
from collections import Counter
from collections.abc import Callable, Collection
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import nbformat

from grader.course import EXERCISES
from grader.faults import GraderFault
from grader.integrations.nbgrader.question_cells import auto_cell_id
from grader.messages import Message, describe, render_all
from grader.model import CheckResult, Late, Report, Status
from grader.notebook import CELL_CAP, Cell, NotebookUnreadable, cells, statement_text
from grader.notebook import parse as parse_notebook
from grader.policy import DIGITS
from grader.questions import NOTEBOOK_PREFIX
from grader.report.reporters import STATUS_MARK
from grader.settings import SettingsError
from grader.verification import question_by_heading


@dataclass(frozen=True)
class CourseConfig:
    root: Path
    course_id: str
    db_url: str
    config: Any = None
    """The whole traitlets configuration of the course (``nbgrader_config.py``), for the parts
    of nbgrader normlab runs as they are (the late-submission plugin)."""


def course_config(root: Path) -> CourseConfig:
    """Read the course's ``nbgrader_config.py`` the way nbgrader does."""
    from nbgrader.coursedir import CourseDirectory
    from traitlets.config import Config
    from traitlets.config.loader import PyFileConfigLoader

    config_file = root / "nbgrader_config.py"
    config = PyFileConfigLoader(config_file.name, path=str(root)).load_config() if config_file.exists() else Config()
    coursedir = CourseDirectory(config=config)
    coursedir.root = str(root)
    return CourseConfig(root=root, course_id=coursedir.course_id, db_url=coursedir.db_url, config=config)


_UTC_OFFSET = re.compile(r"(?P<sign>[+-])(?P<hours>[01]\d|2[0-3]):?(?P<minutes>[0-5]\d)")
"""An offset from UTC as ISO 8601 and RFC 2822 write one: ``-0300``, ``-03:00``, ``+0530``."""


def parse_utc(text: str) -> datetime:
    """A timestamp as nbgrader reads one (``2026-11-20 10:00:00.000000 UTC``, ISO 8601 ...),
    as a naive UTC time; raises ValueError (or OverflowError) when it is not one."""
    import dateutil.parser  # type: ignore[import-untyped]
    import dateutil.tz  # type: ignore[import-untyped]

    parts = text.split(" ")
    if len(parts) == 3:  # nbgrader's own format: date, time, zone name or offset
        zone: Any
        if offset := _UTC_OFFSET.fullmatch(parts[2]):
            # -0300 or -03:00 (Brazil): nbgrader reads the first as 300 seconds and the second as
            # no zone, up to three hours off a student's hand-in time, so a late one looks on time.
            sign = -1 if offset["sign"] == "-" else 1
            zone = sign * (int(offset["hours"]) * 3600 + int(offset["minutes"]) * 60)
        else:
            try:
                zone = int(parts[2])
            except ValueError:
                zone = dateutil.tz.gettz(parts[2]) if _zone_name(parts[2]) else None  # unknown: as gettz says
        when: datetime = dateutil.parser.parse(" ".join([*parts[:2], "TZ"]), tzinfos={"TZ": zone})
    else:
        when = dateutil.parser.parse(text)
    if when.tzinfo is not None:
        when = (when - (when.utcoffset() or timedelta(0))).replace(tzinfo=None)
    return when


def _zone_name(name: str) -> bool:
    """Whether a timestamp's zone may be looked up: an IANA name (``America/Sao_Paulo``) or one
    without a path in it (``UTC``, ``EST5EDT``, ``UTC+3``). The student writes the file, and
    ``dateutil.tz.gettz`` loads any absolute path as a zone file, in the process that publishes
    the whole class (trial 52: a 94 MiB zone file took it 1.6 GB; ``/proc/kmsg`` was read)."""
    if "/" not in name and "\\" not in name and not name.startswith(":"):
        return True  # gettz looks it up inside the system's zone folder, or parses it
    return name in _iana_names()


@functools.lru_cache(maxsize=1)
def _iana_names() -> frozenset[str]:
    import zoneinfo

    return frozenset(zoneinfo.available_timezones())


def _ensure_alembic_on_path() -> None:
    # nbgrader runs the `alembic` script from PATH; inside a venv that was not activated it
    # lives next to our interpreter.
    bin_dir = str(Path(sys.executable).parent)
    if bin_dir not in os.environ.get("PATH", "").split(os.pathsep):
        os.environ["PATH"] = bin_dir + os.pathsep + os.environ.get("PATH", "")


def results_by_cell(report: Report) -> dict[str, list[CheckResult]]:
    """The results of each test cell: ``<exercise>-public``, ``<exercise>-hidden`` and a
    question's ``<question>-auto``."""
    cells: dict[str, list[CheckResult]] = {}
    for r in report.results:
        # A question's auto-graded parts have a cell of their own (question_cells.py).
        cell = f"{r.exercise}-{r.visibility.value}" if r.exercise in EXERCISES else auto_cell_id(r.exercise)
        cells.setdefault(cell, []).append(r)
    return cells


def cell_scores(report: Report) -> dict[str, float]:
    """Points earned per test cell, rounded as the release rounds a cell's points (a policy's
    scaled points could otherwise exceed the cell's maximum in the last digit)."""
    return {cell: round(sum(r.score for r in results), DIGITS) for cell, results in results_by_cell(report).items()}


class ClassGradebook:
    """The course's gradebook (:class:`nbgrader.api.Gradebook`), open for one class run.

    Opening one builds a SQLAlchemy engine and checks every table of the schema; a run opens it
    once, not once per student. Each student's rows (the student, the submission, its grades
    and the late penalty) are written in one transaction, committed as that student is
    published: a run killed at any point has every published student in the gradebook, and
    none half-written."""

    def __init__(self, config: CourseConfig) -> None:
        from nbgrader.api import Gradebook

        _ensure_alembic_on_path()
        self.config = config
        self.cells: dict[str, dict[str, tuple[str, float | None]]] = {}
        """Per assignment: its grade and task cells' names and points, by cell id (read once a run)."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", category=Warning)
            self.gb: Any = Gradebook(config.db_url, config.course_id)

    def close(self) -> None:
        self.gb.close()

    def __enter__(self) -> ClassGradebook:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def scoring_state(self, assignment: str) -> tuple[str, dict[str, str], set[str]]:
        """What scores depend on beyond the verdicts: the assignment's due date and the course's
        late policy (one text for the class), and each student's extension. A change re-scores.
        And the students with a submission in the gradebook: one done but missing from it (a
        gradebook made anew, a student removed) is published again."""
        from nbgrader.api import MissingEntry

        policy = {
            name: repr(sorted((key, repr(value)) for key, value in self.config.config.get(name, {}).items()))
            for name in ("AssignLatePenalties", "LateSubmissionPlugin")
        }
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", category=Warning)
            try:
                stored = self.gb.find_assignment(assignment)
                # No extension reads the same before a student's first grading and after it.
                extensions = {s.student.id: repr(s.extension) for s in stored.submissions if s.extension is not None}
                present = {s.student.id for s in stored.submissions}
                return repr((policy, repr(stored.duedate))), extensions, present
            except MissingEntry:
                return repr(policy), {}, set()
            finally:
                self.gb.db.rollback()  # the read ends here: no transaction stays open until the first student

    def check_writable(self) -> None:
        """Take the write lock and give it back, before anyone is graded: a gradebook another
        program holds (formgrader, an nbgrader command), or a read-only one, made every student's
        publication fail after the whole class was graded (trial 64). SQLite only."""
        if not self.config.db_url.startswith("sqlite"):
            return
        with self.gb.engine.connect() as connection:
            connection.exec_driver_sql("BEGIN IMMEDIATE")
            connection.exec_driver_sql("ROLLBACK")

    def check_released(self, assignment: str, notebook: str) -> None:
        """Refuse a gradebook that cannot take this run's grades: the assignment or its notebook
        not in it (``nbgrader db assignment add`` makes the assignment alone, without notebooks
        or cells; grades written into it would be dropped, every student counted as published).
        As ``nbgrader autograde`` refuses it, before any student is graded."""
        from nbgrader.api import MissingEntry

        hint = f"run `nbgrader generate_assignment {assignment}` in {self.config.root} first"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", category=Warning)
            try:
                stored = self.gb.find_assignment(assignment)
                names = {nb.name for nb in stored.notebooks if nb.grade_cells}
                graded = {nb.name for nb in stored.notebooks if nb.grade_cells or nb.task_cells}
            except MissingEntry:
                raise SettingsError(f"assignment {assignment!r} is not in the gradebook: {hint}") from None
            finally:
                self.gb.db.rollback()
        if notebook not in names:
            raise SettingsError(
                f"the gradebook's assignment {assignment!r} has no notebook {notebook!r} with grade cells "
                f"(an assignment added with `nbgrader db assignment add` has none): {hint}; nothing was graded"
            )
        if others := sorted(graded - {notebook}):  # their points would stay 0 without a word
            raise SettingsError(
                f"the assignment {assignment!r} also has notebooks normlab does not grade ({', '.join(others)}), "
                f"with grade or task cells of their own: give them an assignment of their own; nothing was graded"
            )

    def _cells_of(self, assignment: str, submission: Any) -> dict[str, tuple[str, float | None]]:
        """The assignment's grade and task cells (the same for every student of the run)."""
        if assignment not in self.cells:
            notebooks = submission.assignment.notebooks
            found = [c for nb in notebooks for c in [*nb.grade_cells, *nb.task_cells]]
            self.cells[assignment] = {c.id: (c.name, getattr(c, "max_score", None)) for c in found}
        return self.cells[assignment]

    def record(
        self,
        assignment: str,
        student: str,
        report: Report,
        answered: set[str],
        timestamp: str | None,
        changed: frozenset[str] | set[str] = frozenset(),
        before_commit: Callable[[Late], None] | None = None,
    ) -> Late:
        """Write one student's grades (idempotent), then apply the course's late policy as
        ``nbgrader autograde`` does, in one transaction; returns the late penalty (0 when on time)
        and the hand points in the score it was taken from.
        ``changed``: written answers whose text changed since their hand grade was given.
        ``before_commit``: called with the penalty before the transaction commits; if it raises,
        nothing of this student is written."""
        scores = cell_scores(report)
        db = self.gb.db
        # nbgrader's own models trigger SQLAlchemy autoflush warnings.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", category=Warning)
            try:
                submission = _submission_rows(self.gb, assignment, student, timestamp)
                _set_grades(submission, scores, answered, self._cells_of(assignment, submission), changed)
                db.flush()
                # A notebook's score is an SQL expression over its grades: read again, with these.
                db.expire_all()
                penalty = apply_late_penalty(self.gb, self.config, assignment, student)
                raw = float(self.gb.find_submission(assignment, student).score)  # nbgrader's raw_score
                late = Late(penalty, hand_points(raw, report.score) if penalty else 0.0)
                if before_commit is not None:
                    before_commit(late)
                db.commit()
            except BaseException:
                db.rollback()  # nothing of this student is written; the next student starts clean
                raise
        return late

    def hand_points(self, assignment: str, student: str, auto: float) -> float:
        """The points the gradebook counts for the student now beyond ``auto``: given by hand."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", category=Warning)
            raw = float(self.gb.find_submission(assignment, student).score)
        return hand_points(raw, auto)


class GradebookUnusable(Exception):
    """The gradebook cannot be read or written now; the message says why in plain words."""


def unusable(exc: BaseException) -> GradebookUnusable | None:
    """SQLite's two usual refusals (another program holds the gradebook, or it is read-only),
    said plainly instead of as SQLAlchemy's error and its SQL; None for anything else."""
    text = str(exc)
    if "database is locked" in text:
        return GradebookUnusable(
            "the gradebook (gradebook.db) is locked by another program, such as formgrader or another "
            "nbgrader command: run again once it is done"
        )
    if "readonly database" in text or "read-only database" in text:
        return GradebookUnusable(
            "the gradebook (gradebook.db) cannot be written: make the file and its folder writable, and run again"
        )
    return None


def hand_points(raw: float, auto: float) -> float:
    """The points of nbgrader's raw score beyond the report's: given by hand. SQL sums the cells'
    scores in another order than the report, so 0.30000000000000004 against 0.3 is none."""
    return round(raw - auto, DIGITS) + 0.0  # + 0.0: no "-0"


def _submission_rows(gb: Any, assignment: str, student: str, timestamp: str | None) -> Any:
    """The student's submission of ``assignment``, created (with the student) if new, as
    nbgrader's ``update_or_create_student`` and ``update_or_create_submission`` make them
    but without their commits: one grade row per grade and task cell, one comment row per
    solution and task cell."""
    from nbgrader.api import Comment, Grade, MissingEntry, Student, SubmittedAssignment, SubmittedNotebook
    from nbgrader.utils import parse_utc
    from sqlalchemy import insert

    try:
        stored = gb.find_assignment(assignment)
    except MissingEntry:
        raise GraderFault(
            f"assignment {assignment!r} is not in the gradebook: run `nbgrader generate_assignment {assignment}` "
            "in the course directory first"
        ) from None
    try:
        owner = gb.find_student(student)
    except MissingEntry:
        owner = Student(id=student)
        gb.db.add(owner)
    when = {"timestamp": parse_utc(timestamp)} if timestamp else {}
    try:
        submission = gb.find_submission(assignment, student)
    except MissingEntry:
        submission = SubmittedAssignment(assignment=stored, student=owner, **when)
        made = [SubmittedNotebook(notebook=notebook, assignment=submission) for notebook in stored.notebooks]
        gb.db.add(submission)
        gb.db.flush()  # the notebooks' ids, for their grades and comments
        # Inserted in bulk, with the columns' own defaults (ids, needs_manual_grade): as
        # objects of the session they cost ~10 ms a student, most of a new student's publishing.
        grades = [
            {"notebook_id": nb.id, "cell_id": cell.id}
            for nb in made
            for cell in [*nb.notebook.grade_cells, *nb.notebook.task_cells]
        ]
        comments = [
            {"notebook_id": nb.id, "cell_id": cell.id}
            for nb in made
            for cell in [*nb.notebook.solution_cells, *nb.notebook.task_cells]
        ]
        for table, rows in ((Grade.__table__, grades), (Comment.__table__, comments)):
            if rows:
                gb.db.execute(insert(table), rows)
        gb.db.expire_all()  # the notebooks' grades and comments, as inserted
        return gb.find_submission(assignment, student)
    for name, value in when.items():
        setattr(submission, name, value)
    return submission


def _set_grades(
    submission: Any,
    scores: dict[str, float],
    answered: set[str],
    cells: dict[str, tuple[str, float | None]],
    changed: frozenset[str] | set[str] = frozenset(),
) -> None:
    """The submission's grades, one per grade and task cell of each notebook (nbgrader made
    them), read with one query per notebook (not one lazy load per grade, each flushing the
    session first: ~40 queries a student). ``cells`` names each cell and gives its points; a
    ``changed`` written answer with a hand grade is asked for again (the grade is kept)."""
    for notebook in submission.notebooks:
        for grade in notebook.grades:
            name, most = cells[grade.cell_id]
            if name in scores:
                grade.auto_score = scores[name]
                grade.needs_manual_grade = grade.manual_score is not None
            else:
                # A written answer: nothing to autograde; flag it for formgrader if given.
                grade.auto_score = None if name in answered else 0.0
                # (a 0-point answer, a question the course's policy dropped, is not asked for)
                worth = most is None or float(most) > 0
                fresh = grade.manual_score is None or name in changed
                # A hand grade whose answer changed is asked for again, even if the new answer is
                # blank (its old points still count until then), as nbgrader's autograde does.
                regrade = name in changed and grade.manual_score is not None
                grade.needs_manual_grade = (name in answered and fresh and worth) or regrade


def check_late_policy(config: CourseConfig) -> None:
    """Refuse, before anyone is graded, a late policy nbgrader cannot load (a plugin class that
    does not import): otherwise every student fails on it, one by one, as a grader fault."""
    from nbgrader.preprocessors import AssignLatePenalties

    try:
        AssignLatePenalties(config=config.config).init_plugin()
    except Exception as exc:
        raise SettingsError(
            f"the course's late policy cannot be loaded ({type(exc).__name__}: {exc}); "
            "check c.AssignLatePenalties.plugin_class in nbgrader_config.py"
        ) from None


def apply_late_penalty(gb: Any, config: CourseConfig, assignment: str, student: str) -> float:
    """nbgrader's own late policy on one submission: its ``AssignLatePenalties`` preprocessor,
    configured from the course (``c.AssignLatePenalties.plugin_class``,
    ``c.LateSubmissionPlugin.penalty_method`` ...), run step for step as ``nbgrader autograde``
    runs it on each notebook: the plugin's penalty, clamped to [0, the notebook's score]."""
    from nbgrader.preprocessors import AssignLatePenalties

    assigner = AssignLatePenalties(config=config.config)
    assigner.init_plugin()
    submission = gb.find_submission(assignment, student)
    seconds_late = submission.total_seconds_late
    total = 0.0
    for notebook in submission.notebooks:
        notebook.late_submission_penalty = None
        if seconds_late > 0:
            penalty = assigner.plugin_inst.late_submission_penalty(student, notebook.score, seconds_late)
            if penalty is not None:
                notebook.late_submission_penalty = assigner._check_late_penalty(notebook, penalty)
                total += float(notebook.late_submission_penalty)
    return total


# -- the autograded notebook --------------------------------------------------------------------

PARSED_CODE = 512 << 10
"""Characters of a student's code cells parsed, in all, by each step that looks for their
answers cells or definitions (the lab's code is about 80 KB). A parse costs up to ~900 bytes and
~3 µs a character, in the one process that publishes the whole class: one notebook of 100 KB
cells cost a minute of it, and one cell of 2 MiB 1.9 GB."""


class _Parsing:
    """What one step may still parse of one student's code cells (see :data:`PARSED_CODE`)."""

    def __init__(self) -> None:
        self.chars = PARSED_CODE

    def allows(self, source: str) -> bool:
        """Whether ``source`` may be parsed; if so, it is spent."""
        if len(source) > min(CELL_CAP, self.chars):
            return False
        self.chars -= len(source)
        return True

    def answers_name(self, source: str) -> str | None:
        """The ``answers_<id>`` a student's cell assigns; only a cell that names one is parsed."""
        return _answers_name(source) if NOTEBOOK_PREFIX in source and self.allows(source) else None


def _definitions(student_nb: dict[str, Any]) -> dict[str, str]:
    """Source of each top-level function the student defined, by name (the last one wins)."""
    found: dict[str, str] = {}
    parsing = _Parsing()
    for cell in cells(student_nb):
        if cell.kind != "code" or not parsing.allows(cell.source):
            continue
        try:
            tree = ast.parse(cell.source)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        lines = cell.source.splitlines()
        for node in tree.body:
            if isinstance(node, ast.FunctionDef):
                found[node.name] = statement_text(lines, node)
            elif _is_answers(node):  # a question's answers: ``answers_q1 = {...}``
                found[node.targets[0].id] = statement_text(lines, node)  # type: ignore[attr-defined]
    return found


def _is_answers(node: ast.stmt) -> bool:
    return (
        isinstance(node, ast.Assign)
        and len(node.targets) == 1
        and isinstance(node.targets[0], ast.Name)
        and node.targets[0].id.startswith(NOTEBOOK_PREFIX)
    )


def _answers(student_nb: dict[str, Any]) -> dict[str, str]:
    """Markdown answers by nbgrader grade id (the student's metadata only locates them)."""
    return {
        str(cell.nbgrader.get("grade_id"))[:100]: cell.source
        for cell in cells(student_nb)
        if cell.kind == "markdown" and cell.nbgrader.get("solution") is True
    }


def read_student_notebook(path: Path | None) -> dict[str, Any]:
    """The student's notebook as data (a copy the source staged, already size-checked); an
    unreadable one is an empty notebook."""
    if path is None:
        return {"cells": []}
    try:
        return parse_notebook(path.read_bytes())  # with grading's caps: a dict with a list of cells
    except (OSError, NotebookUnreadable):
        return {"cells": []}


def _released_answers(released: nbformat.NotebookNode) -> frozenset[str]:
    """The ``answers_<id>`` names the released answers cells assign (cells without metadata)."""
    return _assigned_answers(tuple(c.source for c in released.cells if c.cell_type == "code"))


@functools.lru_cache(maxsize=4)
def _assigned_answers(sources: tuple[str, ...]) -> frozenset[str]:
    # The released notebook is the same for every student of a run: parsing each of its code
    # cells three times a student cost more than a third of the autograded notebook's time.
    names = (_answers_name(source) for source in sources)
    return frozenset(name for name in names if name is not None)


EXTRA_CHARS = 1 << 20
"""Characters of the cells a student added that their autograded notebook keeps, in all (scratch
cells and notes come to tens of kilobytes). nbformat writes a notebook one line of a cell at a
time: 6 MB of added one-line cells took 550 MB of the class's publishing process and made a
33 MB file."""


@dataclass
class _Added:
    """The cells a student added, by the released cell they follow, and how many of them, past
    :data:`EXTRA_CHARS`, are left out."""

    cells: dict[str, list[Cell]]
    left_out: int = 0


def _extra_cells(handed: Handed) -> _Added:
    """The cells the student added (any cell without a grade id of the released notebook, and
    not one of its answers cells as the student filled it), by the released cell they follow in
    the student's notebook ("" before the first one)."""
    released = handed.released
    known = {c.metadata.get("nbgrader", {}).get("grade_id") for c in released.cells} - {None, ""}
    # A released cell whose metadata an editor dropped (Colab, VS Code) is no cell of theirs,
    # and where its text is the release's only, it still says where the cells after it go.
    as_released = {c.source.strip() for c in released.cells}
    landmarks = _landmarks(released)
    answers, parsing = _released_answers(released), _Parsing()
    placed = _PlacedByName(handed)
    anchor, added, headed, room = "", _Added({}), set[str](), EXTRA_CHARS
    for cell in cells(handed.nb):
        grade_id = str(cell.nbgrader.get("grade_id", ""))[:100]
        lost = f"{question_by_heading(cell)}-question" if not grade_id else ""  # its metadata gone (Colab)
        if grade_id in known:
            anchor = grade_id
            headed.add(grade_id)
        elif lost in known and lost not in headed:  # the first copy of the question's heading only
            anchor = lost
            headed.add(lost)
        elif cell.kind == "code" and parsing.answers_name(cell.source) in answers:
            continue  # the released answers cell, filled in: it takes that cell's place
        elif not grade_id and cell.source.strip() in as_released:
            anchor = landmarks.get(cell.source.strip(), anchor)
        elif not grade_id and placed.holds(cell):
            continue
        elif cell.kind in ("code", "markdown") and cell.source.strip() and len(cell.source) <= CELL_CAP:
            room -= len(cell.source)
            if room >= 0:
                added.cells.setdefault(anchor, []).append(cell)
            else:
                added.left_out += 1
    return added


def _landmarks(released: nbformat.NotebookNode) -> dict[str, str]:
    """The grade id of each released cell by its text, where no other released cell has that
    text (every answer cell reads "YOUR ANSWER HERE")."""
    texts = [(c.source.strip(), c.metadata.get("nbgrader", {}).get("grade_id", "")) for c in released.cells]
    counts = Counter(text for text, _ in texts)
    # A question's heading is placed once, the first time (``_extra_cells``), not by its text.
    return {text: gid for text, gid in texts if gid and text and counts[text] == 1 and not gid.endswith("-question")}


class _PlacedByName:
    """Which cells without metadata the autograded notebook already shows in a released cell:
    one that only imports and defines graded functions, each of them the definition
    :meth:`Handed.source` puts in its released cell because the student has no cell of their own
    with that cell's grade id (Colab, VS Code). A second try at a function in a notebook whose
    metadata is intact, or an earlier try in a stripped one, is the student's own added cell:
    the person grading sees it."""

    def __init__(self, handed: Handed) -> None:
        solution_ids = (
            c.metadata["nbgrader"].get("grade_id", "")
            for c in handed.released.cells
            if c.cell_type == "code" and c.metadata.get("nbgrader", {}).get("solution")
        )
        self.lost = {gid.split("-", 1)[-1] for gid in solution_ids if gid and gid not in handed.own}  # by name
        self.handed, self.parsing = handed, _Parsing()

    def holds(self, cell: Cell) -> bool:
        if cell.kind != "code" or not self.lost or not self.parsing.allows(cell.source):
            return False
        try:
            tree = ast.parse(cell.source)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return False
        defined, lines = self.handed.defined, cell.source.splitlines()
        return bool(tree.body) and all(
            isinstance(node, (ast.Import, ast.ImportFrom))
            or (
                isinstance(node, ast.FunctionDef)
                and node.name in self.lost
                and defined.get(node.name) == statement_text(lines, node)
            )
            for node in tree.body
        )


def _own_cells(student_nb: dict[str, Any]) -> dict[str, str]:
    """The student's own text of each released solution cell (by grade id) and answers cell (by
    the ``answers_<id>`` it assigns): shown as handed in, magics and all."""
    found: dict[str, str] = {}
    parsing = _Parsing()
    for cell in cells(student_nb):
        if cell.kind != "code" or len(cell.source) > CELL_CAP:
            continue
        grade_id = str(cell.nbgrader.get("grade_id", ""))[:100]
        if grade_id and cell.nbgrader.get("solution"):
            found[grade_id] = cell.source
        elif (name := parsing.answers_name(cell.source)) is not None:
            found[name] = cell.source
    return found


def _question_of(anchor: str, answer_ids: Collection[str]) -> str | None:
    """The answer cell a student's extra markdown cell belongs to: one that follows a question,
    its auto-graded cell (where the answer cell is, when its metadata was lost) or its answer
    cell."""
    for suffix in ("-question", auto_cell_id(""), "-answer"):
        if anchor.endswith(suffix) and anchor[: -len(suffix)] + "-answer" in answer_ids:
            return anchor[: -len(suffix)] + "-answer"
    return None


class Handed:
    """One student's notebook as publishing reads it. Several steps ask for the cells the
    student added and for the written answers (the gradebook's flags, the changed answers, the
    autograded notebook); each is worked out once."""

    def __init__(self, released: nbformat.NotebookNode, student_nb: dict[str, Any]) -> None:
        self.released, self.nb = released, student_nb

    @functools.cached_property
    def added(self) -> _Added:
        return _extra_cells(self)

    @functools.cached_property
    def stubs(self) -> dict[str, str]:
        """The released written-answer cells' text, by grade id."""
        return {
            c.metadata["nbgrader"]["grade_id"]: c.source
            for c in self.released.cells
            if c.metadata.get("nbgrader", {}).get("solution") and c.cell_type == "markdown"
        }

    @functools.cached_property
    def own(self) -> dict[str, str]:
        return _own_cells(self.nb)

    @functools.cached_property
    def defined(self) -> dict[str, str]:
        """The student's top-level definitions by name: parsed only for a notebook whose
        metadata was lost (about 18 ms a notebook, a fifth of publishing it)."""
        return _definitions(self.nb)

    def source(self, cell_id: str, name: str) -> str | None:
        """The student's code for a released cell: their own cell with its id, else (its
        metadata lost) the top-level statement they last wrote under a name."""
        return self.own[cell_id] if cell_id in self.own else self.defined.get(name)

    @functools.cached_property
    def written(self) -> dict[str, str]:
        """Each written answer by its answer cell's grade id: the answer cell's text, followed
        by any markdown cell the student added after the question (Decision 8: copied into the
        question's answer cell, for the person grading)."""
        stubs = self.stubs
        found = {gid: text for gid, text in _answers(self.nb).items() if gid in stubs}
        for anchor, added in self.added.cells.items():
            target = _question_of(anchor, stubs.keys())
            texts = [cell.source for cell in added if cell.kind == "markdown"]
            if target is not None and texts:
                # The answer cell as released ("YOUR ANSWER HERE") is no part of the answer.
                own = found.get(target, "").strip()
                found[target] = "\n\n".join([*([own] if own and own != stubs[target].strip() else []), *texts])
        return found

    def answered(self) -> set[str]:
        """Grade ids of written-answer cells the student changed from the released stub (to
        some text), or answered in a markdown cell of their own after the question."""
        stubs = self.stubs
        # A blanked stub is not an answer either.
        return {
            gid for gid, text in self.written.items() if gid in stubs and text.strip() not in ("", stubs[gid].strip())
        }


def written_answers(released: nbformat.NotebookNode, student_nb: dict[str, Any]) -> dict[str, str]:
    """Each written answer of ``student_nb`` by its answer cell's grade id (:attr:`Handed.written`)."""
    return Handed(released, student_nb).written


def _kept(cell: Cell) -> Any:
    """A cell the student added, kept in the autograded notebook as theirs: its text only (no
    metadata of theirs reaches nbgrader, no output of theirs is shown as a result)."""
    if cell.kind == "markdown":
        return nbformat.v4.new_markdown_cell(cell.source)
    return nbformat.v4.new_code_cell(cell.source)


def _verdict_lines(results: list[CheckResult], lang: str) -> str:
    lines = []
    for r in results:
        mark = STATUS_MARK[r.status]
        lines.append(f"{mark:<8} {describe(r.name, r.description, lang)}  ({r.score:g}/{r.max_score:g})")
        if r.status is not Status.PASSED and r.messages:
            lines.append("         " + render_all(r.messages, lang).replace("\n", "\n         "))
    return "\n".join(lines) + "\n"


@functools.lru_cache(maxsize=1024)
def _answers_name(source: str) -> str | None:
    """The ``answers_<id>`` a released answers cell assigns, if it is one. (Asked of each of a
    student's code cells by three steps of the autograded notebook, five parses a cell: each
    source is parsed once. A source that does not parse is asked again, as before.)"""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    found = [n for n in tree.body if _is_answers(n)]
    return found[0].targets[0].id if found else None  # type: ignore[attr-defined]


def _verdict_outputs(lines: str, earned: float) -> list[Any]:
    """A test cell's outputs: the verdicts, and the points as nbgrader reads them. Built as
    ``nbformat.v4.new_output`` builds them, without its schema check of each output (a
    jsonschema walk, ~1 ms each, 50 a student; nbgrader validates the notebook when it reads it)."""
    stream = {"output_type": "stream", "name": "stdout", "text": lines}
    result = {"output_type": "execute_result", "metadata": {}, "data": {"text/plain": repr(float(earned))}}
    return [nbformat.from_dict(stream), nbformat.from_dict({**result, "execution_count": 1})]


def autograded_notebook(handed: Handed, report: Report, lang: str = "en") -> nbformat.NotebookNode:
    """The released notebook with the student's code, answers and added cells, and normlab's
    verdicts: each released cell in its place, each cell the student added after the released
    cell it followed (markdown after a question goes into that question's answer)."""
    nb = copy.deepcopy(handed.released)
    answers = handed.written
    answer_ids = set(answers)
    extra = handed.added
    by_cell = results_by_cell(report)
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        grade_id = meta.get("grade_id", "")
        if meta.get("solution") and cell.cell_type == "code":
            # The student's own cell; else (its metadata lost) the function as they last defined it.
            if (source := handed.source(grade_id, grade_id.split("-", 1)[-1])) is not None:
                cell.source = source
        elif meta.get("solution") and grade_id in answers:
            cell.source = _shown_answer(answers[grade_id], lang)
        elif not meta and cell.cell_type == "code" and (name := _answers_name(cell.source)) is not None:
            if (source := handed.source(name, name)) is not None:  # their answers to the auto-graded parts
                cell.source = source
        elif meta.get("grade") and cell.cell_type == "code":
            results = by_cell.get(grade_id, [])
            earned = sum(r.score for r in results)
            cell.outputs = _verdict_outputs(_verdict_lines(results, lang), earned)
            cell.execution_count = 1
    merged = [_kept(c) for c in extra.cells.get("", [])]
    for cell in nb.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id", "")
        absorbed = _question_of(grade_id, answer_ids) is not None
        # "" holds the cells before the first released one, placed above; a released cell
        # without a grade id (an answers cell) has none after it.
        following = extra.cells.get(grade_id, []) if grade_id else []
        kept = (_kept(c) for c in following if not (absorbed and c.kind == "markdown"))
        merged += [cell, *kept]
    if extra.left_out:
        said = Message("feedback.added_cells_left_out", {"cells": extra.left_out, "limit": EXTRA_CHARS})
        merged.append(nbformat.v4.new_markdown_cell(render_all([said], lang)))
    nb.cells = merged
    return nb


def _shown_answer(text: str, lang: str) -> str:
    """A written answer as its cell in the autograded notebook shows it: up to ``CELL_CAP``
    characters (an answer is a few paragraphs; 6 MB of one-line answer took 550 MB to write)."""
    if len(text) <= CELL_CAP:
        return text
    said = Message("feedback.answer_cut", {"chars": len(text) - CELL_CAP})
    return f"{text[:CELL_CAP]}\n\n{render_all([said], lang)}"


def with_feedback(nb: nbformat.NotebookNode, page: str, lang: str = "en") -> nbformat.NotebookNode:
    """The autograded notebook with normlab's feedback page shown in a first cell of its own
    (the page's body as an HTML output, so ``nbgrader generate_feedback`` renders it into the
    feedback the student fetches, and formgrader shows it to the person grading)."""
    body = page.split("<body>", 1)[-1].rsplit("</body>", 1)[0]
    cell = nbformat.v4.new_code_cell("# " + render_all([Message("feedback.first_cell")], lang))
    cell.outputs = [nbformat.v4.new_output("display_data", data={"text/html": body})]
    cell.metadata["normlab"] = {"feedback": True}
    nb.cells.insert(0, cell)
    return nb


def notebook_json(nb: nbformat.NotebookNode) -> str:
    """The text ``nbformat.v4.nbjson.writes(nb)`` returns, for a notebook built for one write
    and not used after it: the writer's deep copy of it (a third of its time) is left out, and
    ``nb`` is changed in place (sources split into lines, transient metadata dropped)."""
    from nbformat.v4.nbjson import BytesEncoder
    from nbformat.v4.rwbase import split_lines, strip_transient

    options: dict[str, Any] = {"indent": 1, "sort_keys": True, "separators": (",", ": "), "ensure_ascii": False}
    return json.dumps(strip_transient(split_lines(nb)), cls=BytesEncoder, **options)


__all__ = [
    "ClassGradebook",
    "autograded_notebook",
    "cell_scores",
    "course_config",
    "notebook_json",
    "parse_utc",
    "with_feedback",
]
