"""One grading: a submission, a set of suites, one worker, one :class:`Report`.

``normlab check`` and ``normlab grade`` both come through :func:`grade`; they differ only in
which suites run (invariant 5 of the architecture: one runner).
"""

from __future__ import annotations

import contextlib
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from grader import course, handin, notebook, questions, verification
from grader.faults import GraderFault
from grader.messages import Message
from grader.model import CheckResult, ManualPart, Report
from grader.proxy import StudentProxy
from grader.sandbox import policy as sandbox_policy
from grader.sandbox import slots
from grader.sandbox.client import Worker
from grader.settings import Settings, current
from grader.submission import Prepared, capped, misspelled, prepare

if TYPE_CHECKING:
    from grader import sessions  # pytest: imported once the worker is starting (see grade)

SUITES = ("public", "hidden")
"""The exercises' tests: what ``grade`` runs unless told otherwise."""
QUESTIONS = "questions"
"""The verification questions' auto-graded parts, scored from the answers (no worker call)."""
FINAL = (*SUITES, QUESTIONS)
"""Everything a final grade holds: ``normlab grade``, Gradescope and ``normlab autograde``."""


@dataclass(frozen=True)
class Options:
    """How to grade, beyond what to grade."""

    suites: tuple[str, ...] = SUITES
    settings: Settings = field(default_factory=current)
    """Sandbox requirements, limits and machine settings (default: this process's settings)."""
    slot: int | None = None
    """The worker slot (and so the unprivileged uid) to use; None claims a free one for the
    duration of the grading (see ``sandbox/slots.py``)."""
    baseline: bool = False
    """Process isolation only, for measuring what the other layers cost. Never for grading."""
    select: str | None = None
    """A pytest ``-k`` expression to run only some tests (for debugging a suite)."""
    single: bool = False
    """The only grading of this process (``normlab check``, ``grade``, a Gradescope container):
    its worker starts cold, while the suites are collected, instead of from a warm sandbox that
    would have to start first and would serve no other grading."""
    class_root: Path | None = None
    """The class folder of a ``grade-class`` run: a lone ``<student>.py`` or notebook in it has
    no answers file (the one beside it would be every one-file student's); work inside a
    student's folder reads that folder's (``handin.class_answers``)."""
    upload: Path | None = None
    """The folder the student handed in, when the work was chosen inside it (a Gradescope
    upload): its one ``verification.toml`` is read when none lies beside the work."""


def _suite_files(suites: tuple[str, ...]) -> tuple[list[Path], set[Path]]:
    files: list[Path] = []
    hidden: set[Path] = set()
    for suite in suites:
        if suite == QUESTIONS:
            continue  # not a pytest suite: see _questions
        if suite == "public":
            files += course.public_tests()
        elif suite == "hidden":
            found = course.hidden_tests()
            if not found:
                raise GraderFault("the hidden suites are not installed (is this a student copy of the grader?)")
            files += found
            hidden.update(found)
        else:
            raise GraderFault(f"unknown suite {suite!r}")
    if not files:
        raise GraderFault("no test files found")
    return files, hidden


def _questions(
    submission: str | Path, options: Options, stopped: dict[int, int]
) -> tuple[list[CheckResult], list[ManualPart], list[Message]]:
    """The verification questions' auto-graded parts and written parts (final grading only),
    and a note when the answers could not be read at all: the parts say so one by one, but on
    Gradescope those wait for the due date, too late to hand in the missing file."""
    if QUESTIONS not in options.suites or options.select is not None:  # -k debugs a suite
        return [], [], []
    bank = questions.load()
    if not bank.hidden:
        raise GraderFault("the question bank's keys are not installed (is this a student copy of the grader?)")
    beside, upload = True, options.upload
    if options.class_root is not None:
        beside, upload = handin.class_upload(Path(submission), options.class_root)
    elsewhere, several = handin.upload_answers(upload, Path(submission))
    answers = verification.find(submission, beside_lone_file=beside, stopped=stopped, elsewhere=elsewhere)
    results, manual = verification.score(bank, answers)
    notes = [m for m in (answers.problem, *answers.notes, several) if m is not None]
    # A cell that is not Python is the cells' notes' to say, and each part's: not a form to fix.
    malformed = [(q, m) for q, m in verification.form_problems(bank, answers) if m.id != "question.cell_not_python"]
    if malformed:  # said at once: on Gradescope the parts' own messages wait for the due date
        parts = ", ".join(f"{qid}.{problem.params.get('part', '?')}" for qid, problem in malformed)
        notes.append(Message("question.malformed_note", {"parts": parts}))
    return results, manual, notes


def _report_notes(prepared: Prepared, answer_notes: list[Message], cell_notes: list[Message]) -> tuple[Message, ...]:
    """The report's notes: why the hand-in could not be read, if it could not, first."""
    unreadable = [] if prepared.unreadable is None else [prepared.unreadable]
    return capped(
        notebook.in_cell_order([*unreadable, *prepared.notes, *misspelled(prepared), *answer_notes, *cell_notes])
    )


def _failed_names(cells: list[notebook.CodeCell], worker: Worker) -> Callable[[], dict[str, notebook.CodeCell]]:
    """What failed cells would have bound, worked out once per state of the worker's cells (a
    hang restarts the worker and skips a cell), not once per test that misses a name."""
    cache: dict[object, dict[str, notebook.CodeCell]] = {}

    def names() -> dict[str, notebook.CodeCell]:
        outcomes = worker.cell_outcomes
        state = (len(outcomes) if isinstance(outcomes, list) else 0, tuple(sorted(worker.skipped_cells.items())))
        if state not in cache:
            cache.clear()
            cache[state] = notebook.failed_names(cells, outcomes, worker.skipped_cells)
        return cache[state]

    return names


def _session(files: list[Path], hidden: set[Path], select: str | None) -> sessions.SuiteSession:
    """The collected suites of this process. pytest's ini and rootdir need a directory only
    while a session is configured and collected; it is removed at once, because pool processes
    end without running ``atexit`` handlers (a directory per pool process was left in /tmp)."""
    from grader import sessions

    with tempfile.TemporaryDirectory(prefix="normlab-run-") as scratch:
        return sessions.session_for(files, hidden, select, Path(scratch))


def grade(submission: str | Path, options: Options | None = None) -> Report:
    """Grade one submission. Raises :class:`GraderFault` if the grader itself failed."""
    options = options or Options()
    started = time.monotonic()
    files, hidden = _suite_files(options.suites)
    with contextlib.ExitStack() as cleanup:
        prepared = prepare(submission)
        cleanup.callback(prepared.cleanup)
        slot, warm = options.slot, False
        if slot is None:  # a slot this process keeps: its warm sandbox serves the next grading too
            slot = cleanup.enter_context(slots.lease(options.settings.slot_dir)).number
            warm = options.settings.warm_sandbox and not options.baseline and not options.single
        plan = sandbox_policy.plan(
            prepared.directory, options.settings, slot=slot, baseline=options.baseline, warm=warm
        )
        cleanup.callback(plan.cleanup)
        limits = options.settings.limits
        worker = Worker(plan.launcher, prepared.setup(), limits, frozenset(c.number for c in prepared.cells))
        cleanup.callback(worker.close)
        worker.prestart()  # its interpreter starts (numpy, the cells) while pytest is imported and collects
        from grader import sessions  # not before: a one-off grading's worker starts ~70 ms sooner

        reference = sessions.reference_for(course.solutions_dir()) if hidden else None
        proxy = StudentProxy(
            prepared,
            worker,
            limits,
            _failed_names(prepared.cells, worker),
        )
        with sessions.LOCK:
            try:
                plugin = _session(files, hidden, options.select).run(proxy, reference)
            finally:
                if reference is not None:
                    reference.close()  # its scratch files hold hidden inputs
            if plugin.grader_faults:
                raise GraderFault(plugin.grader_faults[0])
            results = plugin.ordered_results()
        # The cells as the first run left them: a later restart's skips may depend on hidden inputs.
        skipped = worker.first_run_skipped
        stopped = notebook.stopped_lines(worker.cell_outcomes, skipped)
        question_results, manual, answer_notes = _questions(submission, options, stopped)
        cell_notes = notebook.outcome_notes(
            prepared.cells, worker.cell_outcomes, skipped, options.settings.packages, limits.cell_seconds
        )
        return Report(
            submission=str(submission),
            results=(*results, *question_results),
            manual=tuple(manual),
            suites=options.suites,
            isolation=plan.layers,
            missing_layers=tuple(plan.missing),
            notes=_report_notes(prepared, answer_notes, cell_notes),
            worker_uid=plan.uid,
            seconds=time.monotonic() - started,
        )
