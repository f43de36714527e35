"""``normlab autograde``: grade a whole nbgrader class in the sandbox, fast, and resumably.

nbgrader's course directory is a class-grading source (every ``submitted/<student>/<assignment>/``)
and publisher (the gradebook, ``autograded/`` for formgrader and ``nbgrader export``, and a
feedback page per student in ``feedback/``); the pipeline itself is ``grader/classgrade.py``.
A notebook that cannot be read scores zero with a message.
"""

from __future__ import annotations

import os
import tempfile
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from grader import files
from grader.classgrade import ClassRun, Refused, StudentOutcome, Submitted, grade_class
from grader.integrations.nbgrader import gradebook
from grader.messages import Message
from grader.model import Late, Report
from grader.notebook import MAX_NOTEBOOK_BYTES
from grader.policy import Policy
from grader.questions import ANSWERS_FILE
from grader.report.feedback import feedback_html
from grader.report.store import key_of, remove_leftovers, write_staged
from grader.runner import Options
from grader.sandbox.inside.protocol import clean_text
from grader.settings import SettingsError

FEEDBACK_PAGE = "normlab-feedback.html"
SECRET = "submission_secret.txt"
"""What ``nbgrader submit`` leaves beside the notebook; ``release_feedback`` needs it to name the
feedback file only the student can find."""
SECRET_BYTES = 1024
STUDENT_ID_MARKS = frozenset("._@+-' ")
"""What a student id may hold besides letters and digits: a learning platform's download names
each folder by the student's full name ("Maria Sant'Anna_4411_file_")."""


def is_student_id(name: str) -> bool:
    """Whether a folder or file name is a student id the gradebook, the file system and every
    report can carry as it is: letters and digits of any script ("João", "Zoë") with their
    combining accents (a macOS archive decomposes them), ``STUDENT_ID_MARKS`` and single spaces
    between words; a letter or digit first, at most 100 characters. Nothing that draws or hides
    a line (control and format characters, line separators, doubled or trailing spaces) and
    nothing a spreadsheet reads as a formula's start."""
    if not 0 < len(name) <= 100 or not name[0].isalnum() or name.endswith(" ") or "  " in name:
        return False
    return all(ch.isalnum() or ch in STUDENT_ID_MARKS or unicodedata.category(ch) == "Mn" for ch in name)


NOT_AN_ID = (
    "the name is not a student id normlab can record: a letter or digit first, then letters, digits, ._@+-' "
    "and single spaces, at most 100 characters"
)

TIMESTAMP_BYTES = 1024


def released_notebook(root: Path, assignment: str) -> Path:
    """The notebook normlab released (``lab.ipynb``), or the one notebook of the release."""
    from grader.integrations.nbgrader.release import NOTEBOOK

    found = sorted((root / "release" / assignment).glob("*.ipynb"))
    ours = [path for path in found if path.name == f"{NOTEBOOK}.ipynb"]
    if not ours and len(found) > 1:  # which one is the lab is not for normlab to guess
        names = ", ".join(path.name for path in found)
        raise SettingsError(f"release/{assignment}/ holds several notebooks ({names}) and none is lab.ipynb")
    found = ours or found
    if not found:
        raise SettingsError(  # a name mistyped or the course not released: exit 2, not "regrade later"
            f"no released notebook in release/{assignment}/: run `nbgrader generate_assignment "
            f"{assignment}` in {root} first (or check the assignment's name and --course-dir)"
        )
    return found[0]


@dataclass(frozen=True)
class NbgraderCourse:
    """An nbgrader course directory and one of its assignments, as a class-grading source.

    Every student's files are read without following a link anywhere below the course root,
    size-checked first, and copied into ``staging``: grading and publishing see only those
    copies, never the student's folder."""

    root: Path
    assignment: str
    staging: Path

    @property
    def work(self) -> Path:
        return self.root / "normlab" / self.assignment

    def released_notebook(self) -> Path:
        return released_notebook(self.root, self.assignment)

    def submissions(self, only: frozenset[str] = frozenset()) -> Iterator[Submitted | Refused]:
        expected = self.released_notebook().name
        try:
            students = files.entries(self.root, "submitted")
        except files.Unreadable:
            return
        for student, kind in sorted(students.items()):
            if kind == "file" or (only and student not in only):
                continue
            shown = clean_text(student)[:100]
            if not is_student_id(student):
                yield Refused(shown, NOT_AN_ID)
            elif kind != "dir":
                yield Refused(shown, f"submitted/{shown} is a link or not a folder; links are never followed")
            else:
                try:
                    entry = self._submission(student, expected)
                except Exception as exc:  # one student's folder never stops the class
                    entry = Refused(student, f"the submission cannot be read ({type(exc).__name__}: {exc})")
                if entry is not None:
                    yield entry

    def _submission(self, student: str, expected: str) -> Submitted | Refused | None:
        """What ``student`` handed in for this assignment; None if nothing was."""
        kind = files.entries(self.root, f"submitted/{student}").get(self.assignment)
        if kind is None:
            return None
        if kind != "dir":
            return Refused(student, f"submitted/{student}/{self.assignment} is a link or not a folder; not followed")
        folder = f"submitted/{student}/{self.assignment}"
        inside = files.entries(self.root, folder)
        name = expected if expected in inside else _only_notebook(inside)
        notebooks = sorted(n for n in inside if n.endswith(".ipynb"))
        if name is None and len(notebooks) > 1:
            # Which one the student meant is theirs to say: grading one would be a guess.
            shown = ", ".join(clean_text(n)[:60] for n in notebooks[:5])
            return Refused(student, f"several notebooks and none is {expected}: {shown}; keep the one to grade")
        notes: list[Message] = []
        try:
            data = files.read(self.root, f"{folder}/{name}", MAX_NOTEBOOK_BYTES) if name else None
        except files.Unreadable as exc:
            # A notebook that is there but cannot be read (too large, a link) is not a zero: the
            # student handed in work. Not graded, said on the console, graded once it is fixed.
            return Refused(student, f"{clean_text(name or '')[:60]} cannot be read ({exc})")
        try:
            stamp = self._beside(folder, inside, "timestamp.txt", TIMESTAMP_BYTES)
            secret = self._beside(folder, inside, SECRET, SECRET_BYTES)
        except files.Unreadable as exc:
            # The late policy needs the hand-in time (taken as missing, a link or a padded file
            # undid a penalty), and nbgrader's release_feedback the secret (without it, it stops
            # for every student after this one): refused and said, never guessed.
            return Refused(student, f"{exc}; make it a plain file and run again")
        if stamp is not None and not stamp.decode("utf-8", "replace").strip():
            stamp = None  # an empty timestamp.txt is none, as nbgrader reads it
        timestamp = _timestamp(stamp)
        if stamp is not None and timestamp is None:
            # Graded without it, the late policy would use the time stored before (or none): a
            # student could undo a penalty by spoiling the file. As nbgrader autograde, refused.
            return Refused(
                student,
                f"{folder}/timestamp.txt holds no date (nbgrader writes e.g. 2026-11-20 10:00:00.000000 UTC); "
                "correct it and run again",
            )
        # An answers file is what normlab grade reads beside a blank notebook; here the answer
        # cells are the gradebook's (reader trial 35): said, and a file added later is a change.
        beside = ANSWERS_FILE in inside
        others = [n for n in notebooks if n != name] if name is not None else []
        key = key_of((name or "").encode(), data or b"", stamp or b"", b"%d" % beside, "\n".join(others).encode())
        if name is None:
            notes.append(Message("submission.no_notebook", {"expected": expected}))
        elif beside:
            notes.append(Message("submission.answers_file_not_read", {"file": ANSWERS_FILE}))
        if others:  # trial 64: the work in lab-Copy1.ipynb beside a blank lab.ipynb scored 0 in silence
            notes.append(_other_notebooks(str(name), others))
        path = None
        if name is not None and data is not None:
            path = self.staging / student / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
            if secret is not None:
                (path.parent / SECRET).write_bytes(secret)
        return Submitted(student, path, key, tuple(notes), timestamp)

    def _beside(self, folder: str, inside: dict[str, str], name: str, limit: int) -> bytes | None:
        """The file ``name`` beside the notebook, None when there is none; raises
        :class:`files.Unreadable` when it is there but not a plain file within ``limit``."""
        return files.read(self.root, f"{folder}/{name}", limit) if name in inside else None


def _say_if_unusable(exc: BaseException) -> None:
    """A gradebook that cannot be used now is a setting the instructor can fix: exit 2 with one
    line, before anyone is graded (any other error goes on as it is)."""
    problem = gradebook.unusable(exc)
    if problem is not None:
        raise SettingsError(str(problem)) from None


def _other_notebooks(graded: str, others: list[str]) -> Message:
    """The note naming the notebooks beside the graded one (nbgrader grades only that one)."""
    shown = ", ".join(clean_text(n)[:60] for n in others[:5]) + (f", ... (+{len(others) - 5})" * (len(others) > 5))
    return Message("submission.other_notebooks", {"graded": clean_text(graded)[:60], "others": shown})


def _only_notebook(entries: dict[str, str]) -> str | None:
    """The one notebook in a folder whose notebook has another name than the released one."""
    notebooks = sorted(name for name in entries if name.endswith(".ipynb"))
    return notebooks[0] if len(notebooks) == 1 else None


def _timestamp(stamp: bytes | None) -> str | None:
    """nbgrader's ``timestamp.txt`` as an ISO 8601 UTC time; None when it holds none."""
    if stamp is None:
        return None
    try:
        return str(gradebook.parse_utc(stamp.decode("utf-8").strip()).isoformat())
    except Exception:  # whatever the file holds
        return None


@dataclass
class NbgraderPublisher:
    """Writes grades into the gradebook, the autograded notebook and the feedback page."""

    course: NbgraderCourse
    lang: str
    course_policy: Policy = field(default_factory=Policy)

    def __post_init__(self) -> None:
        import nbformat

        from grader.integrations.nbgrader.release import policy_mismatch

        self.released_path = self.course.released_notebook()
        self.released: Any = nbformat.read(str(self.released_path), as_version=4)
        mismatch = policy_mismatch(self.released, self.course_policy)
        if mismatch is not None:
            raise SettingsError(  # the course's own setting, not a fault of the grader: exit 2
                f"the released notebook's points do not follow the course's [policy] (normlab.toml): {mismatch}. "
                "Release again (`normlab release --course-dir .`, then `nbgrader generate_assignment --force "
                f"{self.course.assignment}`); normlab autograde then re-scores every student without grading again"
            )
        self.config = gradebook.course_config(self.course.root)
        gradebook.check_late_policy(self.config)
        # One gradebook for the run (see ClassGradebook); ``close`` ends it.
        try:
            self.gradebook = gradebook.ClassGradebook(self.config)
        except Exception as exc:
            _say_if_unusable(exc)
            raise
        try:
            self.gradebook.check_writable()
            self.gradebook.check_released(self.course.assignment, self.released_path.stem)
            self.terms, self.extensions, self.in_gradebook = self.gradebook.scoring_state(self.course.assignment)
        except BaseException as exc:
            self.gradebook.close()
            _say_if_unusable(exc)
            raise

    def close(self) -> None:
        self.gradebook.close()

    def is_published(self, student: str) -> bool:
        """The student has a submission in the gradebook (as this run found it), and their
        autograded folder still holds normlab's feedback page: ``nbgrader autograde`` run on them
        since rewrites both, and its grade stayed in the gradebook through normlab's later runs
        (trial 64)."""
        page = self.course.root / "autograded" / student / self.course.assignment / FEEDBACK_PAGE
        return student in self.in_gradebook and page.is_file()

    def hand_points(self, student: str, auto: float) -> float:
        return self.gradebook.hand_points(self.course.assignment, student, auto)

    def scoring_key(self, submitted: Submitted) -> str:
        """The due date, the late policy, this student's extension and hand-in time."""
        extension = self.extensions.get(submitted.student, "")
        return key_of(self.terms.encode(), extension.encode(), (submitted.timestamp or "").encode())

    def _changed_answers(self, previous: Path, handed: gradebook.Handed) -> set[str]:
        """Written answers whose text differs from the autograded notebook of the last grading:
        a hand grade given to the old text is flagged for formgrader again, as nbgrader does."""
        if not previous.is_file():
            return set()
        before = gradebook.written_answers(self.released, gradebook.read_student_notebook(previous))
        now = handed.written
        return {gid for gid in now.keys() | before.keys() if now.get(gid, "").strip() != before.get(gid, "").strip()}

    def publish(self, submitted: Submitted, report: Report) -> Late:
        """The gradebook, then ``autograded/<student>/<assignment>/`` as nbgrader's own autograde
        leaves it (the notebook, ``timestamp.txt``, ``submission_secret.txt``) plus normlab's
        feedback page, which ``nbgrader generate_feedback`` copies into ``feedback/`` and which
        the autograded notebook also shows in its first cell (so the student's ``lab.html``
        carries it through ``release_feedback`` and ``fetch_feedback``)."""
        course, student = self.course, submitted.student
        handed = gradebook.Handed(self.released, gradebook.read_student_notebook(submitted.path))
        answered = handed.answered()
        autograded = course.root / "autograded" / student / course.assignment
        changed = self._changed_answers(autograded / self.released_path.name, handed)
        staged: list[tuple[Path, Path]] = []

        def stage(late: Late) -> None:
            # Every file is written in full before the gradebook commits (trial 64: a folder that
            # could not be written left a new score in the gradebook of a student reported as not
            # graded, beside the old feedback); readable by all like the files nbgrader writes
            # (feedback is copied to the exchange with its mode); what a killed run left goes.
            for path, text in self._files(submitted, report, handed, late).items():
                remove_leftovers(path)
                if path.is_dir():  # os.replace would fail, after the commit
                    raise IsADirectoryError(f"{path} is a folder, not a file")
                staged.append((write_staged(path, text, 0o644), path))

        try:
            late = self.gradebook.record(
                course.assignment, student, report, answered, submitted.timestamp, changed, before_commit=stage
            )
            for temp, path in staged:
                os.replace(temp, path)
        except Exception as exc:
            problem = gradebook.unusable(exc)
            if problem is not None:
                raise problem from None  # one line for this student, not SQLAlchemy's with its SQL
            raise
        finally:
            for temp, _ in staged:
                temp.unlink(missing_ok=True)
        return late

    def _files(self, submitted: Submitted, report: Report, handed: gradebook.Handed, late: Late) -> dict[Path, str]:
        """``autograded/<student>/<assignment>/``'s files, by path."""
        course = self.course
        autograded = course.root / "autograded" / submitted.student / course.assignment
        page = feedback_html(report, student=submitted.student, assignment=course.assignment, lang=self.lang, late=late)
        nb = gradebook.with_feedback(gradebook.autograded_notebook(handed, report, self.lang), page, self.lang)
        # nbformat.writes validates the notebook against the schema and only logs what it finds,
        # for ~50 ms a student; the notebook is the released one (validated when read) with
        # cells rebuilt by nbformat's own constructors. The same writer, without the schema walk:
        files = {autograded / self.released_path.name: gradebook.notebook_json(nb), autograded / FEEDBACK_PAGE: page}
        if submitted.timestamp is not None:
            files[autograded / "timestamp.txt"] = submitted.timestamp
        secret = submitted.path.parent / SECRET if submitted.path is not None else None
        if secret is not None and secret.is_file():
            files[autograded / SECRET] = secret.read_text(encoding="utf-8", errors="replace")
        return files


def summary_image(course_dir: Path, assignment: str) -> Path:
    """Where the class's score histogram goes: the course's feedback folder, beside (not in)
    the students' own folders, which ``nbgrader release_feedback`` hands out."""
    return course_dir / "feedback" / f"normlab-scores-{assignment}.png"


def autograde(
    course_dir: Path,
    assignment: str,
    *,
    options: Options | None = None,
    jobs: int | None = None,
    scheduler: str | None = None,
    force: bool = False,
    progress: bool = True,
    students: frozenset[str] = frozenset(),
) -> Iterator[StudentOutcome]:
    """Grade every submission of ``assignment`` (or only ``students``'s, graded again even if
    done); yield one outcome per student."""
    options = options or Options()
    with tempfile.TemporaryDirectory(prefix="normlab-staging-") as staging:
        course = NbgraderCourse(course_dir.resolve(), assignment, Path(staging))
        publisher = NbgraderPublisher(course, options.settings.lang, options.settings.policy)
        try:
            run = ClassRun(course, publisher, options, jobs=jobs, scheduler=scheduler, force=force, progress=progress)
            run = replace(run, students=students)
            yield from grade_class(run)
        finally:
            publisher.close()
