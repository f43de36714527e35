"""What the suites' collected tests are worth, and the loop that turns a run into scored results.

The suite files are collected once per process (``sessions.py``): by the grader itself
(``collection.py``), or by a pytest session with this plugin when ``-k`` selects tests; either
way :meth:`GradingPlugin.pytest_collection_modifyitems` reads each test's marks and fixtures.
Each submission's run then calls the collected test functions directly, with the fixtures of
:mod:`grader.discovery` built for it:
pytest's run-test protocol (hooks, fixture requests, a report per phase) cost about 0.09 s of
the trusted process's CPU a submission, as much as a whole untouched notebook's tests.

Fixtures: ``student`` (the proxy to the worker), ``reference`` (the reference solution, hidden
suites only), ``sublayer`` (sublayers described as data), ``rng`` (a generator seeded from the
test's name, so every run and every machine sees the same inputs) and ``expected`` (the public
tests' answers). Marker: ``@pytest.mark.points(n)`` (default 1).

Each test ends in exactly one status. A :class:`~grader.faults.StudentFault` maps to its own
status, a :class:`~grader.checks.Mismatch` or assertion to ``failed``; any other exception
raised by the test code is a fault of the grader, which stops the grading without a score.
A test that never reports is an ``error`` (fail closed).
"""

from __future__ import annotations

import dataclasses
import inspect
import re
import time
import traceback
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol

import pytest

from grader import checks, discovery, vocabulary
from grader.course import callees
from grader.faults import GraderFault, StudentFault, StudentRaised
from grader.messages import Message
from grader.model import CheckResult, Status, Visibility
from grader.proxy import StudentProxy
from grader.reference import Reference
from grader.twins import TwinExpected

OUTPUT_SHOWN = 4000  # characters of student print output kept per public test


def shown_output(output: str) -> str:
    """The first ``OUTPUT_SHOWN`` characters of a test's print output, ending at a line's end
    when one is in the second half: a number cut in two reads as a wrong value."""
    head = output[:OUTPUT_SHOWN]
    end = head.rfind("\n")
    return head[: end + 1] if end >= OUTPUT_SHOWN // 2 else head


_ADDRESS = re.compile(r" at 0x[0-9a-f]+")


class TestItem(Protocol):
    """A collected test as the plugin reads it: pytest's ``Function``, or the grader's own
    :class:`~grader.collection.Collected`."""

    @property
    def path(self) -> Path: ...
    @property
    def name(self) -> str: ...
    @property
    def obj(self) -> Any: ...
    def iter_markers(self, name: str) -> Iterator[Any]: ...


def _key(item: TestItem) -> str:
    """A unique test id (pytest's nodeid is not unique for files outside its rootdir, which
    is where the suites are, and a public and a hidden test may share a name)."""
    return f"{item.path}::{item.name}"


@dataclasses.dataclass(frozen=True, slots=True)
class _Meta:
    """What collection learns of a test, once."""

    name: str
    exercise: str
    description: str
    visibility: Visibility
    points: float
    fixtures: tuple[str, ...]
    """The fixtures the test function asks for: its parameters without a default, as pytest
    reads them."""
    seed: int
    """The test's random seed (``discovery.seed``)."""


def _fixtures(function: object) -> tuple[str, ...]:
    if not callable(function):
        return ()
    kinds = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    parameters = inspect.signature(function).parameters.values()
    return tuple(p.name for p in parameters if p.kind in kinds and p.default is inspect.Parameter.empty)


class GradingPlugin:
    """Collects the tests, then one :class:`CheckResult` per test of each submission."""

    def __init__(self, proxy: StudentProxy | None, reference: Reference | None, hidden_files: set[Path]) -> None:
        self.hidden_files = {p.resolve() for p in hidden_files}
        self.meta: dict[str, _Meta] = {}
        """Each collected test's name, points, visibility and fixtures: made once, at collection."""
        self.grader_faults: list[str] = []
        """Faults of ours: at collection, or while the current submission's tests run."""
        self.begin(proxy, reference)

    def begin(self, proxy: StudentProxy | None, reference: Reference | None) -> None:
        """Start on a submission: the collected tests are run again (``sessions.py``), with
        this proxy and reference, and nothing kept of the previous submission's results."""
        self._proxy = proxy
        self._reference = reference
        self.results: dict[str, CheckResult] = {}
        self.grader_faults = []
        self.called: dict[str, frozenset[str]] = {}
        """The student's functions each test called (to tell where a failure may come from)."""

    @property
    def proxy(self) -> StudentProxy:
        if self._proxy is None:
            raise GraderFault("a test ran before a submission was given to the grading plugin")
        return self._proxy

    # -- collection --------------------------------------------------------------------------

    def pytest_configure(self, config: pytest.Config) -> None:
        config.addinivalue_line("markers", "points(n): points the test is worth (default 1)")

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self.grader_faults.append(f"collecting {report.nodeid} failed:\n{report.longreprtext[-3000:]}")

    def pytest_collection_modifyitems(self, items: Sequence[TestItem]) -> None:
        for item in items:
            path = Path(str(item.path)).resolve()
            exercise = path.stem.removeprefix("test_")
            visibility = Visibility.HIDDEN if path in self.hidden_files else Visibility.PUBLIC
            points = discovery.points(list(item.iter_markers("points")))
            function = getattr(item, "obj", None)
            description = discovery.description(getattr(function, "__doc__", None), item.name)
            name = f"{exercise}/{visibility.value}/{item.name}"
            fixtures = _fixtures(function)
            unknown = [f for f in fixtures if f not in discovery.FIXTURES]
            if not callable(function) or unknown:
                self.grader_faults.append(f"{_key(item)}: not a test function of ours (fixtures {unknown})")
            seed = discovery.seed(Path(str(item.path)).stem, item.name)
            self.meta[_key(item)] = _Meta(name, exercise, description, visibility, points, fixtures, seed)

    def pytest_deselected(self, items: Sequence[TestItem]) -> None:
        """Tests left out by ``-k`` are not in the report at all: it shows what was selected."""
        for item in items:
            self.meta.pop(_key(item), None)

    # -- running -----------------------------------------------------------------------------

    def run_test(self, item: TestItem) -> None:
        """Run one collected test on the current submission and record its result."""
        key = _key(item)
        meta = self.meta[key]
        hidden = meta.visibility is Visibility.HIDDEN
        checks.set_hidden(hidden)
        proxy = self.proxy
        proxy.take_output()  # what an earlier test's calls printed is not this test's
        proxy.answers = 0
        proxy.called.clear()
        started = time.monotonic()
        context = discovery.FixtureContext(proxy, self._reference, meta.seed)
        exc: BaseException | None = None
        try:
            fixtures = {name: discovery.FIXTURES[name](context) for name in meta.fixtures}
            item.obj(**fixtures)
            if isinstance(fixtures.get("expected"), TwinExpected):
                fixtures["expected"].verify()  # after the test's own checks of its last call
        except KeyboardInterrupt:
            raise
        except BaseException as raised:  # pytest.skip and pytest.fail raise BaseExceptions
            exc = raised
        if exc is None:
            status, messages = Status.PASSED, []
        elif isinstance(exc, pytest.skip.Exception):
            status, messages = Status.SKIPPED, [Message("result.skipped")]
        else:
            status, messages = self._failure(exc, hidden, key)
        output = "" if hidden else proxy.take_output()
        if len(output) > OUTPUT_SHOWN:  # said, or a cut line reads as the last one printed
            output = shown_output(output)
            messages.append(Message("report.output_cut", {"shown": OUTPUT_SHOWN}))
        self.called[key] = frozenset(proxy.called)
        self.results[key] = CheckResult(
            name=meta.name,
            exercise=meta.exercise,
            description=meta.description,
            visibility=meta.visibility,
            status=status,
            score=meta.points if status is Status.PASSED else 0.0,
            max_score=meta.points,
            # The one rule of hidden feedback, applied to every message of every hidden test.
            messages=vocabulary.for_hidden(messages) if hidden else tuple(messages),
            student_output=output,
            seconds=time.monotonic() - started,
        )

    def _failure(self, exc: BaseException, hidden: bool, key: str) -> tuple[Status, list[Message]]:
        """The status and messages of a test that did not pass, by what stopped it."""
        if isinstance(exc, StudentFault):
            if hidden and isinstance(exc, StudentRaised) and exc.private:  # there is more: how to see it
                return exc.status, [*exc.hidden, Message("fault.details_withheld", {"function": exc.function})]
            return exc.status, list(exc.hidden) if hidden else [*exc.messages, *exc.private]
        if isinstance(exc, checks.Mismatch):
            return Status.FAILED, list(exc.messages)
        if isinstance(exc, (AssertionError, pytest.fail.Exception)):
            if hidden:  # a bare assert in a hidden test: its text could print hidden values
                return Status.FAILED, [Message("check.failed_hidden")]
            return Status.FAILED, [Message("check.assertion", {"text": _assertion_text(exc)})]
        if isinstance(exc, Exception) and not isinstance(exc, GraderFault) and not hidden:
            # A public test is plain numpy on the student's answer: an answer of the wrong kind
            # (None, a dict, a scalar) makes it raise. That is a failed check, not our fault; the
            # reference passing every public test shows the tests themselves are sound.
            return Status.FAILED, [Message("check.public_error", {"text": f"{type(exc).__name__}: {exc}"[:1500]})]
        if isinstance(exc, Exception) and not isinstance(exc, GraderFault) and self.proxy.answers:
            # Our code failed while handling the student's answer (an int too large for a
            # float, a string where a number goes): by its origin, the student's outcome. The
            # reference passing every hidden test shows the suites are sound on our own data.
            return Status.FAILED, [Message("check.unusable_answer", {"function": self.proxy.last_function})]
        # A fault of the grader (our code on our data): record it once, stop, issue no score.
        detail = str(exc) if isinstance(exc, GraderFault) else "".join(traceback.format_exception(exc))[-3000:]
        self.grader_faults.append(f"{key}: {detail}")
        return Status.ERROR, [Message("result.grader_fault")]

    # -- after the run -----------------------------------------------------------------------

    def ordered_results(self) -> list[CheckResult]:
        """One result per collected test, in collection order; silent tests are errors."""
        out = []
        for key, meta in self.meta.items():
            result = self.results.get(key)
            if result is None:
                result = CheckResult(
                    meta.name,
                    meta.exercise,
                    meta.description,
                    meta.visibility,
                    Status.ERROR,
                    0.0,
                    meta.points,
                    (Message("result.no_report"),),
                )
            out.append(result)
        return self._point_to_failing_dependencies(out)

    def _point_to_failing_dependencies(self, results: list[CheckResult]) -> list[CheckResult]:
        """A test that fails where the function calls another graded function which fails its
        own tests says so: a correct block cannot pass on a wrong rmsnorm."""
        keys = list(self.meta)
        failing = {
            function
            for key, result in zip(keys, results, strict=True)
            if result.status is not Status.PASSED and len(self.called.get(key, ())) == 1
            for function in self.called[key]
        }
        out = []
        for key, result in zip(keys, results, strict=True):
            # Only what the functions this test called call themselves: a failing op_counts
            # is not layernorm's doing because shift_response, in the same exercise, calls it.
            calls = {f for called in self.called.get(key, ()) for f in callees(called)}
            uses = sorted(f for f in calls if f in failing)
            if result.status is not Status.PASSED and uses and _attempted(result):
                extra = tuple(Message("check.uses_failing", {"function": f}) for f in uses)
                result = dataclasses.replace(result, messages=(*result.messages, *extra))
            out.append(result)
        return out


def _assertion_text(exc: BaseException) -> str:
    """What a public test's failed assert says: its own message where it has one (pytest's
    explanation after it repeats the compared values, whole arrays included), else pytest's
    explanation, without the function addresses it names (they change run to run)."""
    text = str(exc)
    message, explained, _ = text.partition("\nassert ")
    if explained and message.strip():
        text = message
    return _ADDRESS.sub("", text)[:1500] or "assert"


NOT_ATTEMPTED = frozenset(
    {
        "fault.not_implemented",
        "fault.not_implemented_inside",
        "fault.not_implemented_inside_hidden",
        "fault.missing",
        "fault.module_missing",
        "fault.not_callable",
        "fault.missing_in_submission",
        "fault.not_callable_in_submission",
        "fault.submission_unreadable",
        "fault.import_error",
        "fault.import_timeout",
        "fault.import_crashed",
    }
)
"""Messages that say the function itself is not there yet: a failing dependency is beside the point."""


def _attempted(result: CheckResult) -> bool:
    """The test ran the student's own function (not a stub, a missing name or a module that
    failed to load), so a failing function it calls may be why it failed."""
    return not any(m.id in NOT_ATTEMPTED or m.id.startswith("submission.") for m in result.messages)
