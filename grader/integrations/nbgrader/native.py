"""Hidden tests inside the student's own kernel: nbgrader's native autograde path.

The released notebook's hidden test cells call :func:`run_hidden`. It runs the very same
hidden suite functions that ``normlab grade`` runs, with the notebook's globals standing in
for the sandboxed worker, and returns the points earned, which nbgrader reads as the cell's
partial credit. Calls go through the same argument rebuilding, mutation detection and wire
round trip as in the worker, and tests get the same points, seeds and fixtures (see
``grader/discovery.py``), so an honest notebook gets the same score on both paths.

This path is NOT tamper-proof: the tests run in the student's process, where the student's
code can patch numpy, pytest, IPython or this module before the tests run. Use
``normlab autograde`` where grades matter.
"""

from __future__ import annotations

import contextlib
import io
import shutil
import tempfile
import warnings
from pathlib import Path
from typing import Any

import pytest

from grader import checks, course, discovery
from grader.faults import StudentFault
from grader.integrations.nbgrader.release import NOTEBOOK
from grader.messages import Message, describe, normalize_language, render_all
from grader.policy import scaled
from grader.proxy import StudentProxy
from grader.reference import Reference
from grader.sandbox.client import Reply, ReplyKind
from grader.sandbox.inside import calling, protocol
from grader.sandbox.limits import Limits
from grader.submission import Prepared

NOTEBOOK_MODULE = "notebook"


class InKernelWorker:
    """Answers calls from a namespace in this process, exactly as the worker would."""

    def __init__(self, namespace: dict[str, Any], scratch: str) -> None:
        self.namespace = namespace
        self.scratch = scratch

    def call(
        self,
        function: str,
        args: list[Any],
        kwargs: dict[str, Any],
        seconds: float | None = None,
        start_seconds: float | None = None,
    ) -> Reply:
        fn = self.namespace.get(function)
        if not callable(fn):
            message: dict[str, Any] = {
                "status": "missing",
                "module": NOTEBOOK_MODULE,
                "found": None if fn is None else type(fn).__name__,
            }
        else:
            request = protocol.decode(protocol.encode({"args": args, "kwargs": kwargs}), requests=True)
            message = calling.invoke(fn, request["args"], request["kwargs"], self.scratch, "<notebook>")
        try:
            return Reply(ReplyKind.ANSWER, message=protocol.decode(protocol.encode(message)))
        except protocol.ProtocolError as exc:
            return Reply(ReplyKind.INVALID, detail=str(exc))


def local_student(namespace: dict[str, Any], scratch: str) -> StudentProxy:
    """A ``student`` fixture over a notebook's globals."""
    prepared = Prepared(
        origin=f"{NOTEBOOK}.ipynb",  # the released notebook's name: what messages call it
        directory=Path(scratch),
        kind="notebook",
        single=NOTEBOOK_MODULE,
        present={NOTEBOOK_MODULE},
    )
    return StudentProxy(prepared, InKernelWorker(namespace, scratch), Limits())


def _mark(passed: bool, lang: str) -> str:
    """PASS or FAIL, as the public test cells of the course's language say it."""
    from grader.public import WORDS

    return WORDS.get(normalize_language(lang), WORDS["en"])["PASS" if passed else "FAIL"]


def _run_one(
    test: discovery.SuiteTest, context: discovery.FixtureContext, lang: str, exercise: str, scale: float
) -> bool:
    """Run one hidden test, print its verdict line; whether it passed."""
    doc = describe(f"{exercise}/hidden/{test.name}", test.description, lang)
    # Warnings and stderr from the student's code would make nbgrader zero the cell.
    sink = io.StringIO()
    try:
        with warnings.catch_warnings(), contextlib.redirect_stderr(sink):
            warnings.simplefilter("ignore")
            test.function(**discovery.arguments(test.function, context))
    except (StudentFault, checks.Mismatch) as exc:
        failure = render_all(exc.messages, lang)
    except (AssertionError, pytest.fail.Exception):
        failure = render_all([Message("check.failed_hidden")], lang)
    else:
        print(f"{_mark(True, lang)}  {doc}  ({scaled(test.points, scale):g}/{scaled(test.points, scale):g})")
        return True
    print(
        f"{_mark(False, lang)}  {doc}  (0/{scaled(test.points, scale):g})\n      " + failure.replace("\n", "\n      ")
    )
    return False


def run_hidden(exercise: str, namespace: dict[str, Any], lang: str = "en", scale: float = 1.0) -> float:
    """Run the hidden tests of ``exercise`` against a notebook's functions; return the points,
    times ``scale`` (the course's grading policy, written into the cell by the release).

    Prints one line per test (what it checks, and why it failed) using the same guarded
    messages as the sandboxed grader: no hidden input or expected value is shown.
    """
    checks.set_hidden(True)
    earned, total = 0.0, 0.0
    # The scratch directory receives the hidden inputs written for file arguments: removed
    # whatever happens, like the reference's own.
    scratch = tempfile.mkdtemp(prefix="normlab-native-")
    reference = Reference(course.solutions_dir())
    try:
        student = local_student(namespace, scratch)
        for test in discovery.hidden_suite(exercise):
            total += test.points
            context = discovery.FixtureContext(student, reference, discovery.seed(f"test_{exercise}", test.name))
            if _run_one(test, context, lang, exercise, scale):
                earned += test.points
    finally:
        reference.close()
        shutil.rmtree(scratch, ignore_errors=True)
    earned, total = scaled(earned, scale), scaled(total, scale)
    print(f"{exercise}: {earned:g}/{total:g} points from hidden tests")
    return earned


def score_answers(qid: str, namespace: dict[str, Any], lang: str = "en", scale: float = 1.0) -> float:
    """Score a question's auto-graded parts from ``answers_<qid>`` in a notebook's globals;
    return the points, printing one line per part (the same verdicts as ``normlab grade``).

    Like :func:`run_hidden`, this runs in the student's kernel and is not tamper-proof.
    """
    from grader import questions, verification

    question = questions.load().question(qid)
    given = namespace.get(f"{questions.NOTEBOOK_PREFIX}{qid}")
    given = given if isinstance(given, dict) else {}
    earned = 0.0
    for part in question.parts:
        status, points, messages = verification.judge(part, given.get(part.id))
        earned += points
        doc = describe(questions.part_name(qid, part.id), part.prompt["en"], lang)
        shown = f"{scaled(points, scale):g}/{scaled(part.points, scale):g}"
        print(f"{_mark(status.value == 'passed', lang)}  {doc}  ({shown})")
        if messages:
            print("      " + render_all(messages, lang).replace("\n", "\n      "))
    earned = scaled(earned, scale)
    print(f"{qid}: {earned:g}/{scaled(question.auto_points, scale):g} points from its auto-graded parts")
    return round(earned, 6)
