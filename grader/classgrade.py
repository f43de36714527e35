"""Grading a class: every submission of a source graded by the pool, stored, then published.

The pipeline is the same wherever a class comes from: a *source* lists the students and what
each handed in (nbgrader's ``submitted/`` folder, a folder of ``.py`` files); the pool grades
(``batch.py``); the store keeps each report with a hash of what was graded; a *publisher*
writes the grades where the instructor reads them (nbgrader's gradebook, ``autograded/`` and
feedback pages). Per student, in three steps:

1. grade the submission and store the report atomically under ``<work>/reports/``;
2. publish it;
3. mark the student scored with the scoring key (what the score depends on beyond the
   verdicts: the course's grading policy, and the publisher's terms such as a due date and a
   late policy), then done with the hash of what was graded.

The store keeps the suites' own points; the course's policy (``grader/policy.py``) is applied
when a report is published.

A re-run skips students whose submission has not changed since they were marked done, and
reuses stored reports for students interrupted between steps 1 and 3 (``State.RESUMED``). Re-scoring is not
re-grading: when only the scoring key changed, the stored report is published again under the
new terms (``State.RESCORED``) and the sandbox does not run. ``ClassRun.students`` regrades
only the students named, even if done. Anything that goes wrong for one student (an
unreadable file, a fault of ours while grading or publishing) is that student's outcome, with
the reason; the others are graded and published.
"""

from __future__ import annotations

import contextlib
import fcntl
import importlib.metadata
import os
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from enum import Enum
from functools import cache
from pathlib import Path
from typing import Protocol

from grader import policy
from grader.batch import grade_many
from grader.messages import Message
from grader.model import Late, NotGraded, Outcome, Report
from grader.report.store import key_of, load_report, save_report, write_atomic
from grader.runner import Options
from grader.settings import SettingsError


@dataclass(frozen=True)
class Submitted:
    """What one student handed in."""

    student: str
    path: Path | None
    """What to grade: a notebook, a ``.py`` file or a folder; None when nothing gradable was
    handed in (the student then scores zero, with ``notes`` saying why)."""
    key: str
    """A hash of what was handed in: the submission is graded again when it changes."""
    notes: tuple[Message, ...] = ()
    """What the source noticed about the hand-in (a link not followed, a file too large, a
    timestamp that is not a date): added to the report the student reads."""
    timestamp: str | None = None
    """When it was handed in (ISO 8601, UTC), if the source knows."""


@dataclass(frozen=True)
class Refused:
    """A student whose hand-in cannot be graded at all (it cannot even be read), and why."""

    student: str
    reason: str


class Source(Protocol):
    """Where a class's submissions come from."""

    @property
    def work(self) -> Path:
        """Where this class's reports and done-markers are kept."""
        ...

    def submissions(self, only: frozenset[str] = frozenset()) -> Iterator[Submitted | Refused]:
        """One entry per student; only those named in ``only`` are read (empty: all). A run for
        one student does not hash, or search, every other student's hand-in."""
        ...


class Publisher(Protocol):
    def publish(self, submitted: Submitted, report: Report) -> Late:
        """Write one student's report where the instructor reads grades; return what the
        course's late policy took off the published score (nothing, if on time)."""
        ...

    def scoring_key(self, submitted: Submitted) -> str:
        """What this student's score depends on beyond the verdicts (due date, extension, late
        policy); when it changes, the stored report is published again, not graded again."""
        ...

    def is_published(self, student: str) -> bool:
        """Whether what was published for a done student is still there (a gradebook made
        anew, a student removed from it, a feedback page deleted: published again)."""
        ...

    def hand_points(self, student: str, auto: float) -> float:
        """The points the gradebook now counts for ``student`` beyond ``auto`` (the automatic
        score as published): given by hand since, in formgrader say (0 without hand grading)."""
        ...


class State(Enum):
    GRADED = "graded"
    UNCHANGED = "unchanged"
    """Done before and not changed since: skipped."""
    RESUMED = "resumed"
    """Graded by an earlier run that stopped before publishing it (killed, say): the stored
    report was published now; nothing was graded again."""
    RESCORED = "rescored"
    """Not changed, but the terms of its score did (a due date, a late policy): the stored
    verdicts were published again; nothing was graded again."""
    REPUBLISHED = "republished"
    """Not changed, but what was published for it is gone (a gradebook made anew, a student
    removed from it, a feedback page deleted): the stored report was published again."""
    FAILED = "failed"
    """Not graded or not published: no score was issued; ``detail`` says why."""


@dataclass(frozen=True)
class StudentOutcome:
    student: str
    state: State
    score: float | None = None
    max_score: float | None = None
    detail: str = ""
    report: Report | None = None
    """The student's report: the new one, or the stored one of a student left unchanged."""
    penalty: float = 0.0
    """Points the course's terms took off (a late penalty)."""
    by_hand: float = 0.0
    """Points the score the penalty was taken from counts beyond ``score``: grades given by hand."""


@dataclass(frozen=True)
class ClassRun:
    """One grading of a class."""

    source: Source
    publisher: Publisher
    options: Options
    jobs: int | None = None
    scheduler: str | None = None
    force: bool = False
    progress: bool = True
    students: frozenset[str] = frozenset()
    """Only these students, each graded again even if done (empty: the whole class)."""

    def _done(self, student: str) -> Path:
        return self.source.work / "done" / student

    def _scored(self, student: str) -> Path:
        return self.source.work / "scored" / student

    def wanted(self, student: str) -> bool:
        return not self.students or student in self.students

    def regrade(self, student: str) -> bool:
        return self.force or student in self.students

    def scoring_key(self, submitted: Submitted) -> str:
        """The publisher's terms and the course's policy: when either changes, re-scored."""
        return f"{self.publisher.scoring_key(submitted)}|policy {self.options.settings.policy.fingerprint()}"

    def counted(self, report: Report) -> Report:
        """``report`` as the course's policy counts it."""
        return policy.apply(report, self.options.settings.policy)

    def _report(self, student: str) -> Path:
        return self.source.work / "reports" / f"{student}.json"

    def is_done(self, submitted: Submitted) -> bool:
        done = self._done(submitted.student)
        fresh = done.is_file() and done.read_text(encoding="utf-8") == submitted.key
        return fresh and not self.regrade(submitted.student)

    def stored(self, submitted: Submitted) -> Report | None:
        if self.regrade(submitted.student):
            return None
        return load_report(self._report(submitted.student), submitted.key)


@cache
def grading_identity() -> str:
    """What every grade depends on beside the submission: normlab's version, the hidden suites,
    the question bank (its key) and the reference solution. Part of each student's change key,
    so that a run after any of them changed (a suite fixed, normlab upgraded) grades everyone
    again, as ``--force`` would, and an interrupted ``--force`` is finished by the next run."""
    from grader import course, reference

    files = [*sorted(course.suites_dir().glob("*.py")), course.PACKAGE / "questions.toml"]
    parts = [importlib.metadata.version("normlab").encode(), reference.identity(course.solutions_dir()).encode()]
    parts += [part for path in files for part in (path.name.encode(), path.read_bytes())]
    return key_of(*parts)


RUN_LOCK = "run.lock"


@contextlib.contextmanager
def only_run(work: Path) -> Iterator[None]:
    """One run of a class at a time: a second one (a double start, a cron job beside a manual
    run) graded every student again beside the first and raced it to publish (instructor trial
    34). A flock on ``work/run.lock``, which the kernel drops when the run ends, however it ends."""
    try:
        work.mkdir(parents=True, exist_ok=True)
        fd = os.open(work / RUN_LOCK, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    except OSError as exc:  # a link, a folder, a read-only disk: the class's own setting
        raise SettingsError(f"{work / RUN_LOCK} cannot be opened ({exc.strerror}); nothing was graded") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise SettingsError(
                f"another normlab run is grading this class now ({work / RUN_LOCK} is held); "
                "wait for it to end, or stop it, and run again"
            ) from None
        yield
    finally:
        os.close(fd)


def grade_class(run: ClassRun) -> Iterator[StudentOutcome]:
    """Grade, store and publish every submission of ``run.source``; one outcome per student.

    Each student is published as soon as their grading arrives, while the pool grades the
    others: the main process's share of the work overlaps the pool's. The caller holds the
    class's :func:`only_run` lock for as long as it writes the class's files."""
    _remove_stale_temporaries(run.source.work)
    pending: dict[str, Submitted] = {}
    parts = [grading_identity().encode()] + ([epoch.encode()] if (epoch := _force_epoch(run)) else [])
    for entry in run.source.submissions(run.students):
        if not run.wanted(entry.student):
            continue
        if isinstance(entry, Submitted):  # a new grader, suite or key grades everyone again
            entry = replace(entry, key=key_of(entry.key.encode(), *parts))
        if isinstance(entry, Refused):
            yield StudentOutcome(entry.student, State.FAILED, detail=entry.reason)
        elif run.is_done(entry):
            outcome = _rescore(run, entry)
            if outcome is None:
                pending[entry.student] = entry
            else:
                yield outcome
        else:
            pending[entry.student] = entry
    yield from _grade_pending(run, pending)


FORCE_EPOCH = "force-epoch"


def _force_epoch(run: ClassRun) -> str:
    """What tells the gradings of the class's last ``--force`` run from those before it: a new
    value written when a run forces the whole class, and part of every student's change key.
    The students a forced run did not reach before it was stopped (Ctrl-C, a kill) keep their
    older keys, so the next run, without ``--force``, grades them and only them (trial 61: it
    graded nobody, and a class thought regraded under new limits was not)."""
    path = run.source.work / FORCE_EPOCH
    if run.force and not run.students:
        write_atomic(path, os.urandom(16).hex())
    try:
        return path.read_text(encoding="utf-8").strip()[:64]
    except OSError:  # never forced: the keys are as they always were
        return ""


STALE_SECONDS = 3600
"""A half-written file older than this was left by a run that was killed (SIGKILL skips the
cleanup of ``write_atomic``): one still being written by another run is seconds old."""


def _remove_stale_temporaries(work: Path) -> None:
    cutoff = time.time() - STALE_SECONDS
    for stale in work.glob("*/.*.tmp"):
        with contextlib.suppress(OSError):
            if stale.lstat().st_mtime < cutoff:
                stale.unlink()


def _grade_pending(run: ClassRun, pending: dict[str, Submitted]) -> Iterator[StudentOutcome]:
    """Steps 1 to 3 for every pending student: a stored report or a new grading (stored),
    then published and marked done."""
    owners: dict[Path, list[str]] = {}
    with tempfile.TemporaryDirectory(prefix="normlab-nothing-") as nothing:
        # Students who handed in nothing gradable share one grading of an empty submission.
        for student, submitted in pending.items():
            stored = run.stored(submitted)
            if stored is not None:
                yield _publish(run, submitted, stored, State.RESUMED)
            else:
                owners.setdefault(submitted.path or Path(nothing), []).append(student)
        graded = grade_many(list(owners), run.options, jobs=run.jobs, scheduler=run.scheduler)
        for path, outcome in _with_progress(graded, len(owners), run.progress):
            for student in owners[path]:
                kept = _keep(run, pending[student], outcome)
                yield _publish(run, pending[student], kept) if isinstance(kept, Report) else kept


def _keep(run: ClassRun, submitted: Submitted, outcome: Outcome) -> Report | StudentOutcome:
    """Step 1's end: the report stored, or why this student is not graded."""
    if isinstance(outcome, NotGraded):
        return StudentOutcome(submitted.student, State.FAILED, detail=outcome.reason)
    report = outcome.report
    if submitted.path is None:  # the empty stand-in: its own notes are not the student's
        report = replace(report, submission=submitted.student, notes=submitted.notes)
    else:
        report = replace(report, notes=(*submitted.notes, *report.notes))
    try:
        save_report(run._report(submitted.student), report, submitted.key)
    except Exception as exc:  # a report we cannot store is not published either
        detail = f"the report could not be stored ({type(exc).__name__}: {exc})"
        return StudentOutcome(submitted.student, State.FAILED, detail=detail)
    return report


def _publish(run: ClassRun, submitted: Submitted, report: Report, state: State = State.GRADED) -> StudentOutcome:
    """Steps 2 and 3: publish, then mark done and scored. A failure leaves the student not done."""
    try:
        key = run.scoring_key(submitted)
        report = run.counted(report)
        late = run.publisher.publish(submitted, report)
        # Done is written last: a run killed between the two writes leaves a student not done
        # (published again from the stored report), never done without its scoring key (which
        # the next run would take for new terms and re-score).
        # the late policy's figures, for later runs' summaries
        write_atomic(run._scored(submitted.student), f"{key}\n{late.penalty!r}\n{late.by_hand!r}")
        write_atomic(run._done(submitted.student), submitted.key)
    except Exception as exc:  # one student's publication never stops the others
        return StudentOutcome(submitted.student, State.FAILED, detail=f"{type(exc).__name__}: {exc}")
    scores = (report.score, report.max_score)
    return StudentOutcome(submitted.student, state, *scores, penalty=late.penalty, by_hand=late.by_hand, report=report)


def _rescore(run: ClassRun, submitted: Submitted) -> StudentOutcome | None:
    """A done student: unchanged, or re-scored from the stored report when the terms of the
    score changed; None when the stored report is gone (the student is graded again)."""
    try:
        key = run.scoring_key(submitted)
        scored = run._scored(submitted.student)
        stored_key, *terms = (scored.read_text(encoding="utf-8") if scored.is_file() else "").split("\n")
        published = stored_key == key and run.publisher.is_published(submitted.student)
        kept = load_report(run._report(submitted.student), submitted.key) if published else None
        kept = None if kept is None else run.counted(kept)
        # as published: the summary counts it again
        late = [float(term) for term in terms if term] + [0.0, 0.0] if published else [0.0, 0.0]
        hand_changed = published and _hand_points_changed(run, submitted.student, kept, late)
        if published and not hand_changed:  # a missing marker never matches
            score, most = (kept.score, kept.max_score) if kept is not None else (None, None)
            return StudentOutcome(
                submitted.student, State.UNCHANGED, score, most, penalty=late[0], by_hand=late[1], report=kept
            )
    except Exception as exc:  # the terms cannot be read: say so, keep the stored grade
        return StudentOutcome(submitted.student, State.FAILED, detail=f"{type(exc).__name__}: {exc}")
    report = load_report(run._report(submitted.student), submitted.key)
    state = State.REPUBLISHED if stored_key == key and not hand_changed else State.RESCORED
    return None if report is None else _publish(run, submitted, report, state)


def _hand_points_changed(run: ClassRun, student: str, kept: Report | None, late: list[float]) -> bool:
    """A late student's hand points changed since their penalty was taken (trial 61: hand grades
    given in formgrader after the run escaped a "zero" late policy): re-scored, so the penalty
    counts them, as the docs promise."""
    if late[0] <= 0 or kept is None:
        return False
    return run.publisher.hand_points(student, kept.score) != late[1]


def _with_progress(items: Iterable[tuple[Path, Outcome]], total: int, enabled: bool) -> Iterator[tuple[Path, Outcome]]:
    from tqdm import tqdm

    with tqdm(
        total=total, disable=not enabled or total == 0, file=sys.stderr, unit="submission", desc="grading"
    ) as bar:
        for item in items:
            bar.update(1)
            yield item
