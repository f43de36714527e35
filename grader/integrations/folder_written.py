"""Written answers of a class graded with ``normlab grade-class``, question by question.

The same page as on nbgrader (``written.page``): ``normlab written export ASSIGNMENT QUESTION
--submissions DIR --class-dir OUT`` puts every student's written answer to one question on one
page (a folder's ``verification.toml``, a notebook's answer cell; a lone ``.py`` file has no
answers file), the rubric items as checkboxes; ``normlab written import PAGE --class-dir OUT``
adds up the ticked items (points from the question bank, never from the page), keeps them in
``OUT/normlab/written.json`` and rewrites ``OUT/grades.csv`` with them, which every later run of
``grade-class`` keeps.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from grader import handin, questions, verification
from grader.classgrade import Submitted
from grader.faults import GraderFault
from grader.integrations.folder import FolderClass, saved_policy, saved_source
from grader.integrations.nbgrader.written import Earlier, Marked, answer_digest, page, read_page, refuse_stale
from grader.policy import scaled
from grader.questions import WRITTEN
from grader.report.store import write_atomic

WRITTEN_FILE = "written.json"


def store(out: Path) -> Path:
    """Where a class's imported written points are kept."""
    return out / "normlab" / WRITTEN_FILE


def _load(out: Path) -> dict[str, Any]:
    try:
        data = json.loads(store(out).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise GraderFault(f"{store(out)} cannot be read ({exc}): the imported written points are lost") from None
    return data if isinstance(data, dict) else {}


def load_points(out: Path) -> dict[str, dict[str, float]]:
    """``{question id: {student: points}}`` imported so far (empty when none)."""
    return {qid: {str(s): float(p) for s, p in points.items()} for qid, points in _load(out).get("points", {}).items()}


def load_digests(out: Path) -> dict[str, dict[str, str]]:
    """``{question id: {student: digest of the answer graded}}`` (see ``written.answer_digest``)."""
    return {qid: {str(s): str(d) for s, d in by.items()} for qid, by in _load(out).get("answers", {}).items()}


def _answer(submitted: Submitted, qid: str, class_root: Path) -> str:
    path = submitted.path
    if path is None:
        return ""
    # Read as grading reads it: a lone file in the class folder has no answers file (the one
    # there is nobody's own); work inside a student's folder has that folder's.
    beside, elsewhere = handin.class_answers(path, class_root)
    answers = verification.find(path, beside_lone_file=beside, elsewhere=elsewhere)
    return verification.written_text(answers.values.get(qid, {}).get(WRITTEN))


def export_page(course: FolderClass, assignment: str, qid: str, ungraded: bool = False) -> str:
    """Every student's answer to ``qid`` on one page, the rubric items as checkboxes, each
    grade imported earlier said under its answer; ``ungraded``: only the answers with none."""
    answers = {s.student: _answer(s, qid, course.root) for s in course.submissions() if isinstance(s, Submitted)}
    factor = _shown_factor(course.out, qid)
    graded = load_digests(course.out).get(qid, {})
    earlier = {
        s: Earlier(
            scaled(p, factor),
            changed=s in graded and graded[s] != answer_digest(assignment, qid, s, answers.get(s, "")),
        )
        for s, p in load_points(course.out).get(qid, {}).items()
    }
    if ungraded:  # a blank answer graded 0, then handed in written, is to grade again
        answers = {s: a for s, a in answers.items() if s not in earlier or not earlier[s].settled}
    return page(assignment, qid, answers, factor, earlier)


def _answers_now(course: FolderClass, qid: str, students: frozenset[str]) -> dict[str, str]:
    """The students' answers to ``qid`` as handed in now, for :func:`written.refuse_stale`."""
    return {s.student: _answer(s, qid, course.root) for s in course.submissions(students) if isinstance(s, Submitted)}


def import_page(out: Path, text: str) -> list[Marked]:
    """Keep a marked page's points for the class graded into ``out``; rewrite its grades.csv."""
    from grader.integrations.folder import grades_csv

    assignment, qid, marked = read_page(text)
    root = saved_source(out)
    if root is not None:  # the class folder graded last: its answers are the students' now
        now = _answers_now(FolderClass(root, out), qid, frozenset(entry.student for entry in marked))
        refuse_stale(assignment, qid, marked, now)
    graded = {p.stem for p in (out / "normlab" / "reports").glob("*.json")}
    for entry in marked:
        if entry.student not in graded:
            raise GraderFault(f"{entry.student} has no stored grade in {out}: run normlab grade-class first")
    points, digests = load_points(out), load_digests(out)
    points.setdefault(qid, {}).update({entry.student: entry.points for entry in marked})
    digests.setdefault(qid, {}).update({entry.student: entry.digest for entry in marked})
    write_atomic(store(out), json.dumps({"points": points, "answers": digests}, indent=1, sort_keys=True) + "\n")
    grades_csv(out)
    factor = _shown_factor(out, qid)
    return [replace(entry, points=scaled(entry.points, factor)) for entry in marked]


def _shown_factor(out: Path, qid: str) -> float:
    """Pages show and import points at the class policy's scale; they are stored at the bank's
    (as reports are), and grades.csv scales them."""
    written = questions.load().question(qid).written
    return saved_policy(out).written_factor(qid, written.points) if written is not None else 1.0


__all__ = ["WRITTEN_FILE", "export_page", "import_page", "load_points", "store"]
