"""Put normlab's grades where nbgrader keeps its own: the gradebook and ``autograded/``.

Grades go through nbgrader's own API (:class:`nbgrader.api.Gradebook`), so ``nbgrader export``
and formgrader see them as if nbgrader had graded. Each test cell of the released notebook
is worth one exercise's public or hidden tests; its score is the points normlab's sandboxed
run gave those tests. Manually graded answer cells are left for formgrader, flagged for
review when the student answered.

The autograded notebook that formgrader shows is rebuilt from the *released* notebook (never
the source, which holds the solutions): each solution cell gets the student's own definition
of its function (found by name), each answer cell the student's answer (found by grade id),
each question's answers cell the student's ``answers_<id> = {...}`` (found by name),
and each test cell an output with normlab's verdicts, so nothing about the student's cell
structure can break it.
"""

from __future__ import annotations

import ast
import json
import os
import sys
import warnings
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from grader.course import EXERCISES
from grader.faults import GraderFault
from grader.integrations.nbgrader.question_cells import auto_cell_id
from grader.messages import describe, render_all
from grader.model import CheckResult, Report, Status
from grader.notebook import CELL_CAP, cell_source, cells, statement_text
from grader.questions import NOTEBOOK_PREFIX
from grader.report.reporters import STATUS_MARK


@dataclass(frozen=True)
class CourseConfig:
    root: Path
    course_id: str
    db_url: str


def course_config(root: Path) -> CourseConfig:
    """Read the course's ``nbgrader_config.py`` the way nbgrader's ``CourseDirectory`` does
    (its ``course_id`` and ``db_url``, the database defaulting to ``gradebook.db`` in the
    course), with traitlets' own loader and without importing nbgrader's application stack."""
    from traitlets.config.loader import PyFileConfigLoader

    config_file = root / "nbgrader_config.py"
    config: Any = PyFileConfigLoader(config_file.name, path=str(root)).load_config() if config_file.exists() else {}
    settings = config.get("CourseDirectory", {})
    db_url = str(settings.get("db_url") or "") or f"sqlite:///{os.path.abspath(root / 'gradebook.db')}"
    return CourseConfig(root=root, course_id=str(settings.get("course_id") or "").strip(), db_url=db_url)


def parse_utc(text: str) -> datetime:
    """A timestamp as nbgrader reads one (``2026-11-20 10:00:00.000000 UTC``, ISO 8601 ...),
    as a naive UTC time; raises ValueError (or OverflowError) when it is not one."""
    import dateutil.parser  # type: ignore[import-untyped]
    import dateutil.tz  # type: ignore[import-untyped]

    parts = text.split(" ")
    if len(parts) == 3:  # nbgrader's own format: date, time, zone name or offset
        try:
            zone: Any = int(parts[2])
        except ValueError:
            zone = dateutil.tz.gettz(parts[2])
        when: datetime = dateutil.parser.parse(" ".join([*parts[:2], "TZ"]), tzinfos={"TZ": zone})
    else:
        when = dateutil.parser.parse(text)
    if when.tzinfo is not None:
        when = (when - (when.utcoffset() or timedelta(0))).replace(tzinfo=None)
    return when


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
    """Points earned per test cell."""
    return {cell: sum(r.score for r in results) for cell, results in results_by_cell(report).items()}


@dataclass
class GradebookWriter:
    """The course's gradebook, opened once for a whole run of ``normlab autograde``.

    nbgrader's API (and with it nbgrader's package, which is slow to import) is loaded and the
    database opened when the first grade is written, while the pool is already grading; each
    student's grades are then one transaction, committed before the student is marked done."""

    config: CourseConfig
    assignment: str
    _gb: Any = None
    _cells: dict[str, str] = field(default_factory=dict)
    """The assignment's grade cells: name by database id."""

    def _open(self) -> Any:
        if self._gb is not None:
            return self._gb
        from nbgrader.api import Gradebook, MissingEntry

        _ensure_alembic_on_path()
        gb = Gradebook(self.config.db_url, self.config.course_id)
        try:
            stored = gb.find_assignment(self.assignment)
        except MissingEntry:
            gb.close()
            raise GraderFault(
                f"assignment {self.assignment!r} is not in the gradebook: run `nbgrader generate_assignment "
                f"{self.assignment}` in the course directory first"
            ) from None
        self._cells = {cell.id: cell.name for notebook in stored.notebooks for cell in notebook.grade_cells}
        self._gb = gb
        return gb

    def record(self, student: str, report: Report, answered: set[str], timestamp: str | None) -> None:
        """Write one student's grades (idempotent), in one transaction."""
        scores = cell_scores(report)
        # nbgrader's own update_or_create_submission triggers SQLAlchemy autoflush warnings.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", category=Warning)
            gb = self._open()
            try:
                gb.update_or_create_student(student)
                when = {"timestamp": datetime.fromisoformat(timestamp)} if timestamp else {}
                submission = gb.update_or_create_submission(self.assignment, student, **when)
                for notebook in submission.notebooks:
                    for grade in notebook.grades:
                        _score(grade, self._cells.get(grade.cell_id), scores, answered)
                gb.db.commit()
            except BaseException:
                gb.db.rollback()
                raise

    def close(self) -> None:
        if self._gb is not None:
            self._gb.close()
            self._gb = None


def _score(grade: Any, name: str | None, scores: dict[str, float], answered: set[str]) -> None:
    """Set one grade row: a test cell's points, or a written answer left for formgrader."""
    if name is None:  # a cell of another assignment's notebook: not ours to touch
        return
    if name in scores:
        grade.auto_score = scores[name]
        grade.needs_manual_grade = grade.manual_score is not None
    else:
        # A written answer: nothing to autograde; flag it for formgrader if given.
        grade.auto_score = None if name in answered else 0.0
        grade.needs_manual_grade = name in answered and grade.manual_score is None


# -- the autograded notebook --------------------------------------------------------------------


def _definitions(student_nb: dict[str, Any]) -> dict[str, str]:
    """Source of each top-level function the student defined, by name (the last one wins)."""
    found: dict[str, str] = {}
    for cell in cells(student_nb):
        if cell.kind != "code" or len(cell.source) > CELL_CAP:
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
        data = json.loads(path.read_text(encoding="utf-8"))
        return data if isinstance(data, dict) and isinstance(data.get("cells"), list) else {"cells": []}
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):
        return {"cells": []}


def released_notebook(text: str) -> dict[str, Any]:
    """The released notebook (our own file, written by ``nbgrader generate_assignment``) as
    plain JSON data: no schema validation, so nbformat (and jsonschema) stay out of grading."""
    nb = json.loads(text)
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        raise GraderFault("the released notebook is not a notebook: run `nbgrader generate_assignment` again")
    return nb


def answered_cells(released: dict[str, Any], student_nb: dict[str, Any]) -> set[str]:
    """Grade ids of written-answer cells the student changed from the released stub."""
    stubs = {
        str(c.nbgrader.get("grade_id")): c.source
        for c in cells(released)
        if c.nbgrader.get("solution") and c.kind == "markdown"
    }
    return {gid for gid, text in _answers(student_nb).items() if gid in stubs and text.strip() != stubs[gid].strip()}


def _verdict_lines(results: list[CheckResult], lang: str) -> str:
    lines = []
    for r in results:
        mark = STATUS_MARK[r.status]
        lines.append(f"{mark:<8} {describe(r.name, r.description, lang)}  ({r.score:g}/{r.max_score:g})")
        if r.status is not Status.PASSED and r.messages:
            lines.append("         " + render_all(r.messages, lang).replace("\n", "\n         "))
    return "\n".join(lines) + "\n"


def _answers_name(source: str) -> str | None:
    """The ``answers_<id>`` a released answers cell assigns, if it is one."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    found = [n for n in tree.body if _is_answers(n)]
    return found[0].targets[0].id if found else None  # type: ignore[attr-defined]


def autograded_notebook(
    released: dict[str, Any], student_nb: dict[str, Any], report: Report, lang: str = "en"
) -> dict[str, Any]:
    """The released notebook with the student's code and answers and normlab's verdicts."""
    nb: dict[str, Any] = json.loads(json.dumps(released))  # a deep copy of plain JSON data
    definitions, answers = _definitions(student_nb), _answers(student_nb)
    by_cell = results_by_cell(report)
    for cell in nb["cells"]:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        grade_id, kind = str(meta.get("grade_id", "")), cell.get("cell_type")
        if meta.get("solution") and kind == "code":
            function = grade_id.split("-", 1)[-1]
            if function in definitions:
                cell["source"] = definitions[function]
        elif meta.get("solution") and grade_id in answers:
            cell["source"] = answers[grade_id]
        elif not meta and kind == "code" and (name := _answers_name(cell_source(cell))) in definitions:
            cell["source"] = definitions[name]  # the student's answers to a question's auto-graded parts
        elif meta.get("grade") and kind == "code":
            results = by_cell.get(grade_id, [])
            earned = sum(r.score for r in results)
            text = _verdict_lines(results, lang)
            cell["outputs"] = [
                {"output_type": "stream", "name": "stdout", "text": text},
                {
                    "output_type": "execute_result",
                    "data": {"text/plain": repr(float(earned))},
                    "metadata": {},
                    "execution_count": 1,
                },
            ]
            cell["execution_count"] = 1
    return nb


def notebook_text(nb: dict[str, Any]) -> str:
    """A notebook as nbformat writes one (sorted keys, one-space indent, UTF-8 text)."""
    return json.dumps(nb, sort_keys=True, indent=1, ensure_ascii=False) + "\n"


__all__ = ["GradebookWriter", "autograded_notebook", "cell_scores", "course_config", "notebook_text", "parse_utc"]
