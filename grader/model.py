"""The grading data model: frozen, free of I/O and of wording.

A :class:`Report` is what one grading produces. Reporters turn it into text, JSON, Gradescope's
``results.json``, CSV rows, gradebook entries or HTML; nothing here knows about those.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from grader.messages import Message


class Status(StrEnum):
    """What happened to one test. Only ``PASSED`` earns points."""

    PASSED = "passed"
    FAILED = "failed"
    """The student's code answered, and the answer is wrong."""
    ERROR = "error"
    """The student's code raised, is missing, or could not be imported."""
    TIMEOUT = "timeout"
    """The student's code ran past its time limit and was stopped."""
    CRASHED = "crashed"
    """The process running the student's code died (signal, exit, resource limit)."""
    SKIPPED = "skipped"
    """The test was not run (for example, not selected); earns nothing."""


class Visibility(StrEnum):
    """Whether the student can read the test's source."""

    PUBLIC = "public"
    HIDDEN = "hidden"


@dataclass(frozen=True)
class CheckResult:
    """The outcome of one test of one submission."""

    name: str
    """Stable identifier, ``<exercise>::<test function>``."""
    exercise: str
    """The exercise (stub module) the test belongs to, e.g. ``rmsnorm``."""
    description: str
    """The test's docstring: what it checks, in words a student understands."""
    visibility: Visibility
    status: Status
    score: float
    max_score: float
    messages: tuple[Message, ...] = ()
    """Why it failed, with hints; empty when it passed."""
    student_output: str = ""
    """What the student's code printed during the test (public tests only, truncated)."""
    seconds: float = 0.0
    """Wall time the test took, trusted side included."""


@dataclass(frozen=True)
class ManualPart:
    """A written answer, graded by a person: never part of the automatic score."""

    question: str
    """The question's id, e.g. ``q1``."""
    max_score: float
    answered: bool
    """Whether the student wrote anything in it."""


@dataclass(frozen=True)
class Report:
    """Everything one grading of one submission produced."""

    submission: str
    """The path that was graded, as given."""
    results: tuple[CheckResult, ...]
    suites: tuple[str, ...]
    """Which sets of tests ran: ``public``, ``hidden``."""
    isolation: tuple[str, ...] = ()
    """The isolation layers that were active, e.g. ``process``, ``rlimits``, ``bwrap``."""
    missing_layers: tuple[str, ...] = ()
    """Layers that could not be used on this machine (degraded mode when not empty)."""
    notes: tuple[Message, ...] = ()
    """Submission-level remarks: skipped notebook cells, files not found, and so on."""
    worker_uid: int | None = None
    """The uid the student's code ran as, when the worker reported it."""
    seconds: float = 0.0
    manual: tuple[ManualPart, ...] = ()
    """The written parts of the verification questions, to be graded by hand (their points are
    not in ``score`` or ``max_score``)."""

    @property
    def score(self) -> float:
        return round(sum(r.score for r in self.results), 6)

    @property
    def max_score(self) -> float:
        return round(sum(r.max_score for r in self.results), 6)

    def by_exercise(self) -> list[tuple[str, tuple[CheckResult, ...]]]:
        """The results grouped by exercise, exercises in the order their first test appears."""
        groups: dict[str, list[CheckResult]] = {}
        for result in self.results:
            groups.setdefault(result.exercise, []).append(result)
        return [(exercise, tuple(results)) for exercise, results in groups.items()]


@dataclass(frozen=True)
class Late:
    """What a course's late policy did to a published score."""

    penalty: float = 0.0
    """Points taken off."""
    by_hand: float = 0.0
    """Points the score it was taken from counts beyond the report's: grades given by hand
    (written answers; an instructor's change to an automatic grade counts as its difference)."""


@dataclass(frozen=True)
class Graded:
    """A submission that was graded: its report (whatever the score)."""

    report: Report


@dataclass(frozen=True)
class NotGraded:
    """A submission that could not be graded, and why; no score is issued for it."""

    reason: str


Outcome = Graded | NotGraded
"""What grading one submission of a batch gave."""
