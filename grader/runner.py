"""One grading: a submission, a set of suites, one worker, one :class:`Report`.

``normlab check`` and ``normlab grade`` both come through :func:`grade`; they differ only in
which suites run (invariant 5 of the architecture: one runner).
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from grader import course, notebook, questions, verification
from grader.faults import GraderFault
from grader.model import CheckResult, ManualPart, Report
from grader.plugin import GradingPlugin
from grader.proxy import StudentProxy
from grader.reference import Reference
from grader.sandbox import policy as sandbox_policy
from grader.sandbox import slots
from grader.sandbox.client import Worker
from grader.settings import Settings, current
from grader.submission import capped, prepare

SUITES = ("public", "hidden")
"""The exercises' tests: what ``grade`` runs unless told otherwise."""
QUESTIONS = "questions"
"""The verification questions' auto-graded parts, scored from the answers (no worker call)."""
FINAL = (*SUITES, QUESTIONS)
"""Everything a final grade holds: ``normlab grade``, Gradescope and ``normlab autograde``."""
UNUSED_PLUGINS = (
    "unraisableexception",
    "threadexception",
    "logging",
    "doctest",
    "junitxml",
    "pastebin",
    "faulthandler",
    "legacypath",
    "setuponly",
    "setupplan",
)
"""pytest plugins turned off when grading: the suites use no fixture or option of theirs."""


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


@contextlib.contextmanager
def _quiet_pytest() -> Iterator[None]:
    """Run pytest without entry-point plugins and without its terminal output."""
    saved = os.environ.get("PYTEST_DISABLE_PLUGIN_AUTOLOAD")
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    sink = io.StringIO()
    try:
        with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
            yield
    finally:
        if saved is None:
            os.environ.pop("PYTEST_DISABLE_PLUGIN_AUTOLOAD", None)
        else:
            os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = saved


def _pytest_args(files: list[Path], scratch: Path, select: str | None) -> list[str]:
    """pytest on our files only: its own ini (not the project's), no conftest, no cache."""
    ini = scratch / "pytest.ini"
    ini.write_text("[pytest]\n")
    args = [
        *map(str, files),
        "-c",
        str(ini),
        "--rootdir",
        str(scratch),
        "--import-mode=importlib",
        "-p",
        "no:cacheprovider",
        "-p",
        "no:stepwise",
        # Plugins a grading never uses cost CPU on every grading (unraisableexception alone
        # runs a full garbage collection at the end of each session).
        *(f"-pno:{name}" for name in UNUSED_PLUGINS),
        "--noconftest",
        "-q",
        # A failing test's traceback is read only when the grader itself failed; pytest's own
        # style parses every frame's source file to draw it, which made a student's failing
        # test (every test of an untouched notebook) cost ten times a passing one.
        "--tb=native",
        "-W",
        "ignore::DeprecationWarning",
    ]
    return args + (["-k", select] if select else [])


def _questions(submission: str | Path, options: Options) -> tuple[list[CheckResult], list[ManualPart]]:
    """The verification questions' auto-graded parts and written parts (final grading only)."""
    if QUESTIONS not in options.suites or options.select is not None:  # -k debugs a suite
        return [], []
    bank = questions.load()
    if not bank.hidden:
        raise GraderFault("the question bank's keys are not installed (is this a student copy of the grader?)")
    return verification.score(bank, verification.find(submission))


def grade(submission: str | Path, options: Options | None = None) -> Report:
    """Grade one submission. Raises :class:`GraderFault` if the grader itself failed."""
    options = options or Options()
    started = time.monotonic()
    files, hidden = _suite_files(options.suites)
    with contextlib.ExitStack() as cleanup:
        prepared = prepare(submission)
        cleanup.callback(prepared.cleanup)
        slot = options.slot
        if slot is None:
            slot = cleanup.enter_context(slots.claim(options.settings.slot_dir)).number
        plan = sandbox_policy.plan(prepared.directory, options.settings, slot=slot, baseline=options.baseline)
        cleanup.callback(plan.cleanup)
        reference = Reference(course.solutions_dir()) if hidden else None
        if reference is not None:
            cleanup.callback(reference.close)
        scratch = Path(tempfile.mkdtemp(prefix="normlab-run-"))
        cleanup.callback(shutil.rmtree, scratch, ignore_errors=True)
        limits = options.settings.limits
        worker = Worker(plan.launcher, prepared.setup(), limits, frozenset(c.number for c in prepared.cells))
        cleanup.callback(worker.close)
        worker.prestart()  # its interpreter starts (numpy, the cells) while pytest collects
        proxy = StudentProxy(
            prepared,
            worker,
            limits,
            lambda: notebook.failed_names(prepared.cells, worker.cell_outcomes, worker.skipped_cells),
        )
        plugin = GradingPlugin(proxy, reference, hidden)
        with _quiet_pytest():
            code = pytest.main(_pytest_args(files, scratch, options.select), plugins=[plugin])
        if plugin.grader_faults:
            raise GraderFault(plugin.grader_faults[0])
        if code not in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED):
            raise GraderFault(f"pytest stopped with exit code {int(code)}")
        question_results, manual = _questions(submission, options)
        cell_notes = notebook.outcome_notes(
            prepared.cells, worker.cell_outcomes, worker.skipped_cells, options.settings.packages, limits.cell_seconds
        )
        return Report(
            submission=str(submission),
            results=(*plugin.ordered_results(), *question_results),
            manual=tuple(manual),
            suites=options.suites,
            isolation=plan.layers,
            missing_layers=tuple(plan.missing),
            notes=capped([*prepared.notes, *cell_notes]),
            worker_uid=plan.uid,
            seconds=time.monotonic() - started,
        )
