"""Grade the written parts question by question, across the class (Decision 8).

``normlab written export ASSIGNMENT QUESTION`` writes one Markdown page: the question, its
rubric, then every student's answer with the rubric items as checkboxes. The grader ticks the
boxes; ``normlab written import ASSIGNMENT PAGE`` adds up the ticked items' points (from the
question bank, never from the page) and writes them into nbgrader's gradebook as the manual
score of the question's answer cell, so formgrader, ``nbgrader export`` and its class CSV see
them. The page holds the rubric: it is for graders, never for students.
"""

from __future__ import annotations

import hashlib
import re
import warnings
from dataclasses import dataclass, replace
from pathlib import Path

from grader import policy, questions
from grader.faults import GraderFault
from grader.integrations.nbgrader.gradebook import (
    _ensure_alembic_on_path,
    apply_late_penalty,
    course_config,
    read_student_notebook,
)
from grader.notebook import cells
from grader.policy import scaled
from grader.settings import COURSE_FILE, SettingsError
from grader.verification import is_blank

MARKER = re.compile(r"^<!-- normlab:written (?P<assignment>[\w.-]+) (?P<qid>\w+) -->$", re.MULTILINE)
STUDENT = re.compile(r"^## student: (?P<student>\S(?:[^\n]*\S)?)[ \t]*$", re.MULTILINE)
"""A section's heading: the id may hold single spaces ("João Sant'Anna", see ``is_student_id``)."""
BOX = re.compile(r"^-\s*\[(?P<mark>[^\]\n]*)\]\s*item (?P<number>\d+)\b", re.MULTILINE)
NONE_BOX = re.compile(r"^-\s*\[(?P<mark>[^\]\n]*)\]\s*none of the items\b", re.MULTILINE)
"""A box is ticked by anything between its brackets: ``[x]``, ``[X]``, ``[ x]``, ``[✓]``."""
ANSWER_MARK = re.compile(r"^<!-- normlab:answer (?P<digest>[0-9a-f]{16}) -->$", re.MULTILINE)
NONE_LINE = "- [ ] none of the items (0 points)"
"""Ticked, the answer is graded 0. A section with no box ticked is not graded by this page: an
earlier grade, or formgrader's "needs grading", stays as it was (a page is often done in parts)."""
NO_ANSWER = "(no answer)"
"""What the page shows for a blank answer: nothing under it can earn points."""


@dataclass(frozen=True)
class Earlier:
    """A hand grade a student's answer already has, shown on a page exported again."""

    points: float
    changed: bool = False
    """The answer changed since it was graded (formgrader asks for it again)."""

    def line(self) -> str:
        if self.changed:
            return f"_Graded earlier ({self.points:g} points), but the answer changed since: grade it again._"
        return f"_Graded earlier: {self.points:g} points. Leave every box empty to keep it; tick to replace it._"

    @property
    def settled(self) -> bool:
        return not self.changed


@dataclass(frozen=True)
class Marked:
    """One student's ticked rubric items for one question, and the points they add up to."""

    student: str
    items: tuple[int, ...]
    points: float
    digest: str = ""
    """Of the answer the page showed (:func:`answer_digest`): a later answer that differs is
    graded again."""


def answer_digest(assignment: str, qid: str, student: str, answer: str) -> str:
    """What ties a page's section to its student, question and answer: an edited name, a page
    relabelled for another question or an edited answer no longer matches (whitespace aside,
    which editors change)."""
    text = "\0".join((assignment, qid, student, " ".join(("" if is_blank(answer) else answer).split())))
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()


def _answer(path: Path, qid: str) -> str:
    """The student's answer to ``qid`` (its answer cell, by grade id), as they wrote it."""
    found = [
        c.source
        for c in cells(read_student_notebook(path if path.is_file() else None))
        if c.kind == "markdown" and c.nbgrader.get("grade_id") == f"{qid}-answer"
    ]
    return found[-1].strip() if found else ""


def _lab(course_dir: Path, assignment: str) -> str:
    """The name of the lab's notebook (without ``.ipynb``), as ``normlab autograde`` grades it."""
    from grader.integrations.nbgrader.autograde import released_notebook

    try:
        return released_notebook(course_dir, assignment).stem
    except SettingsError as exc:  # a mistyped assignment must not read as "nobody answered"
        raise GraderFault(str(exc)) from None


def _notebooks(course_dir: Path, assignment: str, lab: str) -> dict[str, Path]:
    """Each student's notebook ``lab``: the autograded copy where there is one, else the submission."""
    out: dict[str, Path] = {}
    for folder in ("submitted", "autograded"):
        for path in sorted((course_dir / folder).glob(f"*/{assignment}/{lab}.ipynb")):
            out[path.parent.parent.name] = path
    return dict(sorted(out.items()))


def _factor(course_dir: Path, qid: str, bank_points: float) -> float:
    """The course policy's scale of ``qid``'s written part (its rubric keeps its proportions)."""
    course_file = course_dir / COURSE_FILE
    course_policy = policy.from_course_file(course_file) if course_file.is_file() else policy.Policy()
    if qid in course_policy.drop:
        raise GraderFault(f"{qid} is dropped by the course's grading policy ({course_file}): nothing to grade")
    return course_policy.written_factor(qid, bank_points)


def export_page(course_dir: Path, assignment: str, qid: str, ungraded: bool = False) -> str:
    """All the class's answers to one question on one page, the rubric items as checkboxes,
    each hand grade given earlier said under its answer; ``ungraded``: only the answers with
    none (or whose answer changed since)."""
    lab = _lab(course_dir, assignment)
    answers = {student: _answer(path, qid) for student, path in _notebooks(course_dir, assignment, lab).items()}
    written = questions.load().question(qid).written
    factor = _factor(course_dir, qid, written.points) if written is not None else 1.0
    earlier = _earlier_grades(course_dir, assignment, lab, qid, list(answers))
    if ungraded:
        answers = {s: a for s, a in answers.items() if s not in earlier or not earlier[s].settled}
    return page(assignment, qid, answers, factor, earlier)


def _earlier_grades(course_dir: Path, assignment: str, lab: str, qid: str, students: list[str]) -> dict[str, Earlier]:
    """The gradebook's hand grades of ``qid``'s answer cell, by student."""
    from nbgrader.api import Gradebook, MissingEntry

    config = course_config(course_dir.resolve())
    if config.db_url.startswith("sqlite:///") and not Path(config.db_url.removeprefix("sqlite:///")).is_file():
        return {}  # nothing autograded yet (and Gradebook() would create an empty database)
    _ensure_alembic_on_path()
    found: dict[str, Earlier] = {}
    with warnings.catch_warnings(), Gradebook(config.db_url, config.course_id) as gb:
        warnings.simplefilter("ignore", category=Warning)
        for student in students:
            try:
                grade = gb.find_grade(f"{qid}-answer", lab, assignment, student)
            except MissingEntry:
                continue  # not autograded yet
            if grade.manual_score is not None:
                found[student] = Earlier(float(grade.manual_score), bool(grade.needs_manual_grade))
    return found


def page(
    assignment: str, qid: str, answers: dict[str, str], factor: float = 1.0, earlier: dict[str, Earlier] | None = None
) -> str:
    """One question's page: the rubric (each item's points times ``factor``, the course
    policy's scale), then each student's answer with the items as checkboxes, and the grade
    ``earlier`` gave it, if any."""
    question = questions.load().question(qid)
    if question.written is None:
        raise GraderFault(f"{qid} has no written part")
    written = question.written.scaled(factor)
    rubric = written.rubric
    lines = [
        f"# {qid}: {question.text['en']} ({written.points:g} points)",
        "",
        f"<!-- normlab:written {assignment} {qid} -->",
        "",
        "Tick the rubric items each answer meets ([x]); `normlab written import` adds up their points.",
        "An answer that meets none: tick `none of the items`. An answer with no box ticked is left as",
        "it was (its earlier grade, or still to be graded), so the page can be done in parts.",
        "",
        *(f"{n}. ({item.points:g} pt) {item.text}" for n, item in enumerate(rubric, start=1)),
    ]
    for student, answer in answers.items():
        answer = "" if is_blank(answer) else answer
        lines += [
            "",
            f"## student: {student}",
            f"<!-- normlab:answer {answer_digest(assignment, qid, student, answer)} -->",
        ]
        lines += [""]
        lines += [f"> {line}" for line in (answer or NO_ANSWER).splitlines()]
        lines += [""] + [f"- [ ] item {n} ({item.points:g} pt)" for n, item in enumerate(rubric, start=1)]
        lines += [] if not answer else [NONE_LINE]
        if student in (earlier or {}):
            lines += ["", (earlier or {})[student].line()]
    return "\n".join(lines) + "\n"


def read_page(text: str) -> tuple[str, str, list[Marked]]:
    """(assignment, question id, each student's ticked items and points) from a page. Every
    mistake on it is said at once (and nothing is imported)."""
    marker = MARKER.search(text)
    if marker is None:
        raise GraderFault("not a page written by `normlab written export` (its marker line is missing)")
    assignment, qid = marker.group("assignment"), marker.group("qid")
    if qid not in {q.id for q in questions.load().questions}:
        raise GraderFault(f"no question {qid!r} in the bank")
    written = questions.load().question(qid).written
    if written is None:
        raise GraderFault(f"{qid} has no written part")
    sections = STUDENT.split(text[marker.end() :])[1:]
    marked, problems, seen = [], [], set()
    for student, body in zip(sections[::2], sections[1::2], strict=True):
        if student in seen:
            problems.append(f"{student}: two sections; keep one")
            continue
        seen.add(student)
        try:
            entry = _section(assignment, qid, student, body, len(written.rubric))
        except GraderFault as exc:
            problems.append(str(exc))
            continue
        if entry is not None:
            points = sum(written.rubric[n - 1].points for n in entry.items)
            marked.append(replace(entry, points=round(points, 6)))
    if problems:
        raise GraderFault("nothing was imported; fix the page first:\n  " + "\n  ".join(problems))
    return assignment, qid, marked


def _section(assignment: str, qid: str, student: str, body: str, items: int) -> Marked | None:
    """One student's section: their ticks, or None when nothing is ticked (not graded here)."""
    quoted = [line[1:].removeprefix(" ") for line in body.splitlines() if line.startswith(">")]
    found = ANSWER_MARK.search(body)
    # "(no answer)" is what the page shows for a blank answer, or what a student wrote (red
    # team 41: taken for blank, that student's digest never matched and the page was refused).
    blank = (
        quoted == [NO_ANSWER]
        and found is not None
        and found.group("digest") == answer_digest(assignment, qid, student, "")
    )
    digest = answer_digest(assignment, qid, student, "" if blank else "\n".join(quoted))
    if found is None or found.group("digest") != digest:
        raise GraderFault(
            f"{student}: the section's name or answer is not what `written export` wrote for {qid} "
            "(edited, or from another page); export the page again"
        )
    ticked = sorted({int(m.group("number")) for m in BOX.finditer(body) if m.group("mark").strip()})
    if any(not 1 <= n <= items for n in ticked):
        raise GraderFault(f"{student}: a ticked item is not one of the rubric's {items}")
    if ticked and blank:
        raise GraderFault(f"{student}: rubric items are ticked under {NO_ANSWER!r}; untick them")
    none = any(m.group("mark").strip() for m in NONE_BOX.finditer(body))
    if ticked and none:
        raise GraderFault(f"{student}: items and 'none of the items' are both ticked; keep one")
    if not (ticked or none or blank):
        return None  # not graded on this page: whatever the gradebook holds stays
    return Marked(student, tuple(ticked), 0.0, digest)


def refuse_stale(assignment: str, qid: str, marked: list[Marked], now: dict[str, str]) -> None:
    """Refuse a page whose answers are no longer the students' (``now``: each one's answer as
    handed in now; a student handed in again since the page was exported): its points would go
    to an answer nobody read, a blank one too. Both paths, nbgrader's and grade-class's."""
    stale = [
        e.student
        for e in marked
        if e.student in now and answer_digest(assignment, qid, e.student, now[e.student]) != e.digest
    ]
    if stale:
        raise GraderFault(
            f"nothing was imported: the answer of {', '.join(stale)} changed since the page was exported "
            f"(handed in again); export {qid} again and grade the new answer"
        )


def import_page(course_dir: Path, text: str) -> list[Marked]:
    """Write a marked page's points into the gradebook as manual scores; return what was written."""
    from nbgrader.api import Gradebook, MissingEntry

    assignment, qid, marked = read_page(text)
    lab = _lab(course_dir, assignment)
    notebooks = _notebooks(course_dir, assignment, lab)
    refuse_stale(
        assignment,
        qid,
        marked,
        {e.student: _answer(notebooks[e.student], qid) for e in marked if e.student in notebooks},
    )
    written = questions.load().question(qid).written
    factor = _factor(course_dir, qid, written.points) if written is not None else 1.0
    marked = [replace(entry, points=scaled(entry.points, factor)) for entry in marked]
    config = course_config(course_dir.resolve())
    _ensure_alembic_on_path()
    with warnings.catch_warnings(), Gradebook(config.db_url, config.course_id) as gb:
        warnings.simplefilter("ignore", category=Warning)
        for entry in marked:
            try:
                grade = gb.find_grade(f"{qid}-answer", lab, assignment, entry.student)
            except MissingEntry:
                raise GraderFault(
                    f"{entry.student} has no graded submission of {assignment} in the gradebook"
                ) from None
            grade.manual_score = entry.points
            grade.needs_manual_grade = False
        # The late policy runs on the notebook's score, hand points included: a "zero" policy
        # must take the new points too, as a re-score under a new policy would.
        gb.db.flush()
        gb.db.expire_all()
        for student in sorted({entry.student for entry in marked}):
            apply_late_penalty(gb, config, assignment, student)
        gb.db.commit()
    return marked


__all__ = ["Earlier", "Marked", "answer_digest", "export_page", "import_page", "page", "read_page", "refuse_stale"]
