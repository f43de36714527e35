"""A class handed in as a folder of submissions, without nbgrader: a class-grading source and
publisher for ``normlab grade-class``.

Each entry of the folder is one student: ``<student>.py`` (one file that defines every
function), ``<student>.ipynb`` (a notebook) or ``<student>/`` (a folder with the exercise
modules, ``rmsnorm.py`` ...). The pipeline is ``grader/classgrade.py``, so the class gets what an
nbgrader class gets: parallel grading in the sandbox, a stored report per student, resuming,
``--student`` and ``--force``. What is published: a feedback page per student
(``<out>/feedback/<student>.html``) and, after the run, ``<out>/grades.csv`` with every stored
grade. Nothing in the students' folder is written to or followed through a link.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from grader import files, handin, policy, questions
from grader.classgrade import Refused, State, StudentOutcome, Submitted
from grader.course import MODULES
from grader.integrations.nbgrader.autograde import NOT_AN_ID, is_student_id
from grader.model import Late, Report
from grader.notebook import MAX_NOTEBOOK_BYTES
from grader.policy import Policy
from grader.questions import ANSWERS_FILE
from grader.report.encoding import report_from_data
from grader.report.feedback import feedback_html
from grader.report.store import key_of, remove_leftovers, write_atomic
from grader.sandbox.inside.protocol import clean_text
from grader.submission import MAX_MODULE_BYTES
from grader.verification import MAX_ANSWERS_BYTES

SUFFIXES = {".py": MAX_MODULE_BYTES, ".ipynb": MAX_NOTEBOOK_BYTES}
"""What a one-file submission may be, and how large."""
ARCHIVES = {".zip", ".tar", ".gz", ".tgz", ".bz2", ".xz", ".7z", ".rar"}
"""Hand-ins normlab does not open: said, never graded or dropped in silence."""
MODULE_FILES = tuple(f"{module}.py" for module in MODULES)
"""What a student's folder of modules holds at its top."""


@dataclass(frozen=True)
class FolderClass:
    """A folder with one submission per student, graded into ``out``."""

    root: Path
    out: Path

    @property
    def work(self) -> Path:
        return self.out / "normlab"

    def submissions(self, only: frozenset[str] = frozenset()) -> Iterator[Submitted | Refused]:
        try:
            entries = files.entries(self.root)
        except files.Unreadable as exc:
            yield Refused(shown_name(str(self.root), 100), f"the folder cannot be read ({exc})")
            return
        candidates = [(name, kind, *self._student_of(name, kind)) for name, kind in sorted(entries.items())]
        for name, kind, student, suffix in candidates:
            if kind == "file" and suffix in ARCHIVES and not name.startswith("."):
                yield Refused(
                    shown_name(student, 100), f"{shown_name(name, 100)} is an archive: unpack it into a folder"
                )
        # Not submissions: a hidden file, a spreadsheet, a README (an archive is said above).
        candidates = [c for c in candidates if not (c[0].startswith(".") or (c[1] == "file" and c[3] not in SUFFIXES))]
        names: dict[str, list[str]] = {}
        for name, _kind, student, _suffix in candidates:
            names.setdefault(student, []).append(name)
        for name, kind, student, _suffix in candidates:
            if only and student not in only:
                continue
            shown = shown_name(student, 100)
            if len(names[student]) > 1:
                if name == names[student][0]:  # one entry per student: which one is theirs to say
                    both = ", ".join(shown_name(n, 60) for n in names[student])
                    yield Refused(shown, f"several hand-ins for one student ({both}); keep the one to grade")
            elif not is_student_id(student):
                yield Refused(shown, NOT_AN_ID)
            elif kind not in ("dir", "file"):
                yield Refused(
                    shown, f"{shown_name(name, 100)} is a link or not a regular file; links are never followed"
                )
            else:
                yield self._submitted(student, name, kind)

    @staticmethod
    def _student_of(name: str, kind: str) -> tuple[str, str]:
        """(student id, suffix) of a class folder entry: ``alice/`` or ``alice.py``. The id's
        accents are composed (NFC): a name a macOS archive decomposed is the same student, and
        the same ``--student``, as the name typed."""
        stem, suffix = (name, "") if kind == "dir" else (Path(name).stem, Path(name).suffix)
        return unicodedata.normalize("NFC", stem), suffix

    def _submitted(self, student: str, name: str, kind: str) -> Submitted | Refused:
        try:
            if kind == "dir":
                if not files.entries(self.root, name, names=MODULE_FILES):
                    return self._found_inside(student, name)
            return Submitted(student, self.root / name, self._key(name, kind))
        except files.Unreadable as exc:
            return Refused(student, f"the submission cannot be read ({exc})")

    def _found_inside(self, student: str, name: str) -> Submitted:
        """A student's folder without the modules at its top: the notebook, ``.py`` file or
        folder of modules inside it that holds the work (``handin.py``), said in a note."""
        chosen, note = handin.find_submission(self.root / name)
        relative = chosen.relative_to(self.root).as_posix()
        kind = "file" if chosen.suffix in SUFFIXES and chosen != self.root / name else "dir"
        notes = (note,) if note is not None else ()
        # The answers file grading reads for it (beside it, else the folder's one) is in the key:
        # a changed answer is graded again.
        _, elsewhere = handin.class_answers(chosen, self.root)
        beside = questions.answers_beside(chosen)
        read = beside if beside.is_file() else elsewhere
        answers = [] if read is None else [self._answers(read.relative_to(self.root).as_posix())]
        return Submitted(student, chosen, key_of(self._key(relative, kind).encode(), *answers), notes=notes)

    def _key(self, name: str, kind: str) -> str:
        """A hash of what the grading reads: the file, or the folder's exercise modules and its
        answers file (a changed answer is graded again, as a changed module is)."""
        if kind == "file":
            return key_of(name.encode(), files.read(self.root, name, SUFFIXES[Path(name).suffix]))
        inside = files.entries(self.root, name, names=(*MODULE_FILES, ANSWERS_FILE))
        parts = [
            part
            for module in MODULES
            if inside.get(f"{module}.py") == "file"
            for part in (module.encode(), files.read(self.root, f"{name}/{module}.py", MAX_MODULE_BYTES))
        ]
        if inside.get(ANSWERS_FILE) == "file":
            parts += [ANSWERS_FILE.encode(), self._answers(f"{name}/{ANSWERS_FILE}")]
        return key_of(name.encode(), *parts)

    def _answers(self, relative: str) -> bytes:
        """The answers file's bytes for the key; one the grading will not read (too large, a
        hard link) is graded with a note, so it keys as that note, never refuses the student."""
        try:
            return files.read(self.root, relative, MAX_ANSWERS_BYTES)
        except files.Unreadable as exc:
            return f"unreadable: {exc}".encode()


@dataclass(frozen=True)
class FolderPublisher:
    """Writes each student's feedback page into ``<out>/feedback/``."""

    course: FolderClass
    lang: str

    def scoring_key(self, submitted: Submitted) -> str:
        return ""  # no due date or late policy here: a score is its verdicts

    def is_published(self, student: str) -> bool:
        return (self.course.out / "feedback" / f"{student}.html").is_file()

    def hand_points(self, student: str, auto: float) -> float:
        return 0.0  # nothing here is graded by hand

    def publish(self, submitted: Submitted, report: Report) -> Late:
        page = feedback_html(report, student=submitted.student, assignment=self.course.root.name, lang=self.lang)
        target = self.course.out / "feedback" / f"{submitted.student}.html"
        remove_leftovers(target)
        write_atomic(target, page)
        target.chmod(0o644)
        return Late()


def save_policy(out: Path, course_policy: Policy) -> None:
    """Keep the policy a class was graded under beside its reports, for ``grades.csv`` rewritten
    later (``normlab written import``)."""
    write_atomic(out / "normlab" / "policy.json", json.dumps(course_policy.as_data(), sort_keys=True))


def saved_policy(out: Path) -> Policy:
    try:
        data = json.loads((out / "normlab" / "policy.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return Policy()
    return Policy.from_data(data)


SOURCE_FILE = "source.json"


def save_source(out: Path, root: Path) -> None:
    """Keep the class folder graded into ``out``: a written page imported later is checked
    against the answers handed in now (one handed in again since the export is refused)."""
    write_atomic(out / "normlab" / SOURCE_FILE, json.dumps({"root": str(root)}))


def saved_source(out: Path) -> Path | None:
    try:
        root = json.loads((out / "normlab" / SOURCE_FILE).read_text(encoding="utf-8"))["root"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return Path(root) if isinstance(root, str) and Path(root).is_dir() else None


ROSTER_FILE = "roster.json"


def save_roster(out: Path, outcomes: list[StudentOutcome], partial: bool) -> None:
    """Who the last run found in the class, and why any of them was not graded: grades.csv has
    their rows and only theirs, so a student whose hand-in is gone, or refused this time (two
    hand-ins), keeps no stale grade. ``partial``: a ``--student`` run, which updates its students."""
    roster = (load_roster(out) or {}) if partial else {}
    for outcome in outcomes:
        roster[outcome.student] = outcome.detail[:300] if outcome.state is State.FAILED else ""
    write_atomic(out / "normlab" / ROSTER_FILE, json.dumps(roster, sort_keys=True))


def load_roster(out: Path) -> dict[str, str] | None:
    """Student -> why they were not graded ("" when they were); None before any run kept one."""
    try:
        data = json.loads((out / "normlab" / ROSTER_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else None


def shown_name(text: str, limit: int) -> str:
    """A name from the class folder as the console, roster.json and grades.csv show it: one
    line of printable characters (a file name may hold escape sequences that clear the
    instructor's screen, or a newline that draws a fake line), at most ``limit`` long."""
    shown = "".join(ch if ch.isprintable() else "?" for ch in clean_text(text))
    if shown == text and len(shown) <= limit:
        return shown
    # Changed or cut: a digest keeps two such names apart, and apart from every valid id (no "~").
    digest = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=3).hexdigest()
    return f"{shown[: limit - 7]}~{digest}"


def csv_cell(text: str) -> str:
    """A text cell a spreadsheet shows as text: one that starts like a formula (``=``, ``+``,
    ``-``, ``@``) is quoted with ``'`` (a refused entry's name is the student's choice)."""
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def scaled_or_none(points: float | None, factor: float) -> float | None:
    return None if points is None else policy.scaled(points, factor)


def grades_csv(out: Path, course_policy: Policy | None = None) -> Path:
    """``<out>/grades.csv``: one row per student of the last run (see :func:`save_roster`), as
    the course's policy counts it (default: the policy the class was last graded under). The
    written parts imported with ``normlab written import`` add a column per question (empty
    until that question is imported), their sum and the total, each with its maximum; ``score``
    and ``max_score`` stay the automatic grading's. A student not graded has empty scores and
    says why in ``status``."""
    from grader.integrations.folder_written import load_points

    course_policy = saved_policy(out) if course_policy is None else course_policy
    written = load_points(out)
    bank = questions.load()
    qids = [q.id for q in bank.questions if q.id in written]
    factors = {q.id: course_policy.written_factor(q.id, q.written.points) for q in bank.questions if q.written}
    counted = [(q.id, q.written.points) for q in bank.questions if q.written and q.id not in course_policy.drop]
    written_max = sum(policy.scaled(points, factors[qid]) for qid, points in counted)
    stored = {path.stem: path for path in (out / "normlab" / "reports").glob("*.json")}
    roster = load_roster(out)
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    columns = ["student", "score", "max_score", *(f"{qid}_written" for qid in qids), "written", "written_max"]
    writer.writerow([*columns, "total", "total_max", "status"])
    for student in sorted(roster if roster is not None else stored):
        report = _stored_report(stored.get(student), course_policy)
        reason = (roster or {}).get(student, "")
        if reason or report is None:
            status = f"not graded: {reason or 'no stored grade'}"
            writer.writerow([csv_cell(student), *[""] * (len(columns) - 1), "", "", csv_cell(status)])
            continue
        by_question = [scaled_or_none(written[qid].get(student), factors.get(qid, 1.0)) for qid in qids]
        hand = sum(p for p in by_question if p is not None)
        cells = ["" if p is None else f"{p:g}" for p in by_question]
        # Nothing imported for this student yet: empty, not a 0 that reads as a graded zero.
        hand_cell = "" if all(p is None for p in by_question) else f"{hand:g}"
        score, most = f"{report.score:g}", f"{report.max_score:g}"
        total, total_max = f"{report.score + hand:g}", f"{report.max_score + written_max:g}"
        row = [score, most, *cells, hand_cell, f"{written_max:g}", total, total_max, "graded"]
        writer.writerow([csv_cell(student), *row])
    target = out / "grades.csv"
    write_atomic(target, buffer.getvalue())
    return target


def _stored_report(path: Path | None, course_policy: Policy) -> Report | None:
    if path is None:
        return None
    try:
        return policy.apply(report_from_data(json.loads(path.read_text(encoding="utf-8"))["report"]), course_policy)
    except (OSError, ValueError, KeyError, TypeError):
        return None  # a report that cannot be read was never published: the run said so


__all__ = ["FolderClass", "FolderPublisher", "grades_csv", "load_roster", "save_roster"]
