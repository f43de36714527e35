"""The ``student`` fixture: call the student's functions as if they were local, safely.

``student.rmsnorm(x, gamma)`` sends the arguments to the worker as data and returns the
answer as data (plain arrays, numbers, strings, lists, tuples, dicts). Anything else that can
happen (an exception, a missing function, a crash, a timeout, an unreadable answer) raises a
:class:`~grader.faults.StudentFault` that the plugin scores.

The proxy also keeps per-submission memory so that one broken piece does not cost minutes:
a module that failed to import is not imported again, and a function that timed out
``timeout_strikes`` times is not run again.
"""

from __future__ import annotations

import re
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import PurePath
from typing import Any, Protocol

import numpy as np

from grader import checks, course
from grader.course import MODULE_OF
from grader.faults import (
    BadResult,
    GraderFault,
    StudentCrashed,
    StudentFault,
    StudentImportError,
    StudentMissing,
    StudentTimeout,
    student_raised,
)
from grader.messages import Message
from grader.notebook import CodeCell
from grader.reference import call_key, fresh_copy
from grader.sandbox import answers
from grader.sandbox.answers import SublayerRecord
from grader.sandbox.client import NotebookStopped, Reply, ReplyKind
from grader.sandbox.inside.protocol import clean_text
from grader.sandbox.limits import Limits
from grader.submission import Prepared

_CELL_FRAME = re.compile(r'File "<cell (\d+)>"')
_FILE_FRAME = re.compile(r'File "/[^"]*/([^"/]+\.py)"')
_MESSAGE_FILE = re.compile(r"\((\w+)\.py, line (\d+)\)")
"""A notebook cell's frame in a worker's traceback (``sandbox/inside/cells.py`` names them)."""
SIGNAL_REASONS = {
    int(signal.SIGXCPU): "cpu",
    int(signal.SIGSEGV): "segv",
    int(signal.SIGBUS): "segv",
    int(signal.SIGABRT): "abort",
    int(signal.SIGKILL): "killed",
    int(signal.SIGSYS): "syscall",
    int(signal.SIGXFSZ): "file_size",
}


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:  # real-time signals have numbers but no names
        return f"signal {number}"


@dataclass
class CallRecord:
    """What the harness observed around the last call (diagnostics, not verdicts)."""

    function: str
    mutated: list[str] = field(default_factory=list)
    """Parameters the student's function changed in place, by their names in the spec."""
    sublayers: tuple[SublayerRecord, ...] | None = ()
    """Per sublayer passed in: how many times it was called and its first inputs (None when
    the worker's record of them was unreadable)."""
    stdout: str = ""
    seconds: float = 0.0

    def sublayer(self, index: int = 0) -> tuple[int, list[np.ndarray]]:
        """How often sublayer ``index`` was called, and the first inputs it received.

        The record comes from the student's process and was checked at the edge: an unreadable
        one is the student's fault, never a grader crash.
        """
        if self.sublayers is None or not 0 <= index < len(self.sublayers):
            raise BadResult(self.function, [Message("fault.bad_record", {"function": self.function})])
        record = self.sublayers[index]
        return record.calls, list(record.inputs)


class Caller(Protocol):
    """What answers the proxy's calls: the sandboxed :class:`Worker`, or the in-kernel stand-in
    of nbgrader's native path."""

    def call(
        self,
        function: str,
        args: list[Any],
        kwargs: dict[str, Any],
        seconds: float | None = None,
        start_seconds: float | None = None,
    ) -> Reply: ...


def _name_from_cell(fault: StudentFault, name: str, failed: dict[str, CodeCell]) -> None:
    """Which failed cell would have defined ``name``, if one would: on public tests only (its
    first line is the student's text)."""
    cell = failed.get(name)
    if cell is not None:
        place = {"name": name, "cell": cell.number, "first_line": cell.first_line}
        fault.private.append(Message("fault.name_from_cell", place))


class StudentProxy:
    """Attribute access returns a function that runs in the worker."""

    def __init__(
        self,
        prepared: Prepared,
        worker: Caller,
        limits: Limits,
        failed_names: Callable[[], dict[str, CodeCell]] = dict,
    ) -> None:
        self.failed_names = failed_names
        """A notebook's names that cells which failed would have bound (see notebook.py)."""
        self._prepared = prepared
        self._worker = worker
        self._limits = limits
        self._broken_modules: dict[str, Callable[[str], StudentFault]] = {}
        """For each module that could not be imported, its fault for a call of a function in
        it: each test names the function it called."""
        self._strikes: dict[str, int] = {}
        self._spent = 0.0
        self._hung: set[str] = set()
        """The functions a call of which ran out of time."""
        self.last_call: CallRecord | None = None
        self.last_function = ""
        self.called: set[str] = set()
        """The functions called since the set was last cleared (by the plugin, per test)."""
        self.answers = 0
        """How many calls have answered (returned or raised) since the count was last reset:
        the plugin tells a fault of our code from one caused by the student's answer by it."""
        self.output: list[str] = []
        """Print output of the calls made during the current test."""
        self._answered: dict[bytes, tuple[Any, CallRecord]] = {}
        """The answers of this grading's calls to ``course.REPEATABLE`` functions, by call."""
        self._stubs: dict[tuple[str, bool], answers.Raised] = {}
        """The NotImplementedError of each function the worker called an untouched stub, by
        function and by whether a hidden test's call raised it: its message and traceback
        could hold that call's arguments if the worker lied, so a hidden call's answer is
        given again only to hidden tests, whose feedback withholds both."""

    def __getattr__(self, function: str) -> Callable[..., Any]:
        if function.startswith("_") or function not in MODULE_OF:
            raise AttributeError(function)

        def call(*args: Any, **kwargs: Any) -> Any:
            return self._call(function, list(args), kwargs)

        call.__name__ = function
        return call

    def recorded(self) -> CallRecord:
        """What was observed around the last call; a test asks only after a call answered."""
        if self.last_call is None:
            raise GraderFault("a test read the call record before any call answered: the suite is wrong")
        return self.last_call

    # -- the call --------------------------------------------------------------------------

    def _module(self, function: str) -> str:
        return self._prepared.single or MODULE_OF[function]

    def _file_name(self, module: str) -> str:
        """The file as the student knows it: their notebook or ``.py`` file by its own name
        (never the internal copy's name), else the exercise module's file."""
        if self._prepared.single is not None and self._prepared.origin:
            return clean_text(PurePath(self._prepared.origin).name)[:100] or f"{module}.py"
        return f"{module}.py"

    def _missing_from(self, module: str) -> str | None:
        """Where a missing function was looked for, as a message may say it: None ("your
        submission") for a file the student named, on a hidden test, where no student-chosen
        text is shown."""
        if self._prepared.single is not None and checks.is_hidden():
            return None
        return self._file_name(module)

    def _placed_message(self, message: str) -> str:
        """An exception's message naming a file as the student does: a SyntaxError's
        "(submission.py, line 74)" names the internal copy of their one file."""
        return _MESSAGE_FILE.sub(lambda m: f"({self._file_name(m.group(1))}, line {m.group(2)})", message)

    @cached_property
    def _first_lines(self) -> dict[int, str]:
        """Each notebook cell's first line by its number, for naming cells in tracebacks."""
        return {cell.number: cell.first_line for cell in self._prepared.cells}

    def _placed(self, traceback: str) -> str:
        """A traceback whose frames name the code as the student finds it: a notebook cell by
        its number (as the notes count cells) and first line, a file by the student's own name
        for it, never the sandbox's path or the grader's internal copy."""
        firsts = self._first_lines

        def cell(match: re.Match[str]) -> str:
            number = int(match.group(1))
            return f'File "<cell {number}: {firsts[number]}>"' if number in firsts else match.group(0)

        def file(match: re.Match[str]) -> str:
            module = match.group(1).removesuffix(".py")
            return f'File "{self._file_name(module)}"'

        return _FILE_FRAME.sub(file, _CELL_FRAME.sub(cell, traceback))

    def _call(self, function: str, args: list[Any], kwargs: dict[str, Any]) -> Any:
        self.last_call = None
        self.last_function = function
        self.called.add(function)
        if self._prepared.unreadable is not None:  # why is the report's note: once, not per test
            raise StudentFault(function, [Message("fault.submission_unreadable")])
        module = self._module(function)
        if module not in self._prepared.present:
            raise StudentMissing(function, self._missing_from(module), None, handed_in=False)
        if module in self._broken_modules:
            raise self._broken_modules[module](function)
        if self._strikes.get(function, 0) >= self._limits.timeout_strikes:
            raise StudentTimeout(
                function, [Message("fault.timeout_repeat", {"function": function, "strikes": self._strikes[function]})]
            )
        budget = self._budget_left(function)
        if budget <= 0:
            raise StudentTimeout(
                function, [Message("fault.budget_spent", {"seconds": self._limits.submission_seconds})]
            )
        stub = self._stubs.get((function, checks.is_hidden()))
        if stub is not None:  # an untouched stub raises the same whatever it is given
            self.answers += 1
            raise self._raised(function, stub)
        key = call_key(function, tuple(args), kwargs) if function in course.REPEATABLE else None
        if key is not None and key in self._answered:
            return self._answered_again(key)
        seconds = min(self._limits.call_seconds, budget)
        start = time.monotonic()
        try:
            reply = self._worker.call(function, args, kwargs, seconds=seconds, start_seconds=budget)
        except NotebookStopped as stopped:
            self._spent += time.monotonic() - start
            if stopped.too_slow:
                seconds = self._limits.notebook_seconds
                raise StudentTimeout(function, [Message("fault.notebook_too_slow", {"seconds": seconds})]) from None
            if stopped.budget:  # restarting the notebook's cells used up what was left
                budget_spent = Message("fault.budget_spent", {"seconds": self._limits.submission_seconds})
                raise StudentTimeout(function, [budget_spent]) from None
            raise StudentCrashed(function, [Message("fault.notebook_stopped")]) from None
        # A notebook's cells, run once as Jupyter ran them, are not its functions' time (each
        # cell has its own limit); running them again after a crash or a timeout is.
        self._spent += time.monotonic() - start - reply.first_start_seconds
        result = self._interpret(function, module, reply, seconds, args, kwargs)
        if key is not None and self.last_call is not None and _small(result):
            self._answered[key] = (fresh_copy(result), self.last_call)
        return result

    def _answered_again(self, key: bytes) -> Any:
        """A repeated call's answer, as the first call gave it (see ``course.REPEATABLE``)."""
        result, record = self._answered[key]
        self.last_call = record
        self.answers += 1
        if record.stdout.strip():
            self.output.append(record.stdout)
        return fresh_copy(result)

    def _interpret(
        self, function: str, module: str, reply: Reply, seconds: float, args: list[Any], kwargs: dict[str, Any]
    ) -> Any:
        if reply.kind is ReplyKind.TIMEOUT:
            raise self._timed_out(function, module, reply, seconds)
        if reply.kind is ReplyKind.DIED:
            raise self._died(function, module, reply)
        if reply.kind is ReplyKind.INVALID:
            raise self._bad_result(function, reply.detail)
        self.answers += 1
        return self._answer(function, module, answers.parse(reply.message, args, kwargs))

    def _budget_left(self, function: str) -> float:
        """What is left of the submission's time for a call of ``function``. Once the budget is
        spent, a function that never ran out of time, and calls none that did (``course.CALLS``),
        still runs, on a reserve of the same size: a hang in rmsnorm, and in the functions that
        call it, must not cost inspect_config, which calls neither, its points (trial 58). A
        submission that hangs everywhere still ends within twice the budget."""
        left = self._limits.submission_seconds - self._spent
        callees = course.callees(function)
        if left > 0 or function in self._hung or not self._hung.isdisjoint(callees):
            return left
        return left + self._limits.submission_seconds

    def _timed_out(self, function: str, module: str, reply: Reply, seconds: float) -> StudentFault:
        self._hung.add(function)
        if seconds < self._limits.call_seconds:
            # What was left of the budget depends on how long the student's code ran: only the
            # budget we set is named.
            budget = Message("fault.budget_spent", {"seconds": self._limits.submission_seconds})
            return StudentTimeout(function, [budget])
        if reply.importing:
            timeout = Message("fault.import_timeout", {"module": self._file_name(module), "seconds": seconds})
            return self._broken(module, function, lambda name: StudentTimeout(name, [timeout]))
        self._strikes[function] = self._strikes.get(function, 0) + 1
        # Where the student's code was is the worker's word (a hidden input can choose the line
        # that runs longest): public tests only.
        where = [Message("fault.timeout_where", {"traceback": self._placed(reply.where[:4000])})] if reply.where else []
        return StudentTimeout(
            function, [Message("fault.timeout", {"function": function, "seconds": seconds})], private=where
        )

    def _answer(self, function: str, module: str, answer: answers.Answer) -> Any:
        """The result of a call that returned; every other answer raises its fault."""
        if isinstance(answer, answers.Malformed):
            raise self._bad_result(function, answer.detail)
        if answer.output.strip():
            self.output.append(answer.output)
        if isinstance(answer, answers.ImportFailed):
            file, message, traceback = (
                self._file_name(module),
                self._placed_message(answer.message),
                self._placed(answer.traceback),
            )
            raise self._broken(
                module,
                function,
                lambda name: StudentImportError(name, file, answer.exc_type, answer.builtin_type, message, traceback),
            )
        if isinstance(answer, answers.Missing):
            missing = StudentMissing(function, self._missing_from(module), answer.found)
            _name_from_cell(missing, function, self.failed_names())  # a cell that failed before its def
            raise missing
        if isinstance(answer, answers.Raised):
            if answer.stub:
                self._stubs[(function, checks.is_hidden())] = answer
            raise self._raised(function, answer)
        self.last_call = CallRecord(
            function=function,
            mutated=[course.parameter_name(function, name) for name in answer.mutated],
            sublayers=answer.sublayers,
            stdout=answer.output,
            seconds=answer.seconds,
        )
        return answer.result

    def _raised(self, function: str, answer: answers.Raised) -> StudentFault:
        raised = student_raised(
            function,
            answer.exc_type,
            answer.builtin_type,
            self._placed_message(answer.message),
            self._placed(answer.traceback),
            answer.raised_in,
        )
        if answer.builtin_type == "NameError":
            self._point_to_failed_cell(raised, answer.missing_name)
        return raised

    def _point_to_failed_cell(self, fault: StudentFault, name: str) -> None:
        """A NameError in a notebook where a cell failed: say so, and (on public tests, where
        the name may be shown) which cell would have defined the name."""
        failed = self.failed_names()
        # Only for a name a failed cell would have bound: a typo (epsilon for eps) in a notebook
        # with an unrelated broken scratch cell is the function's own mistake.
        if name in failed or (failed and not name):
            fault.messages.append(Message("hint.failed_cell_name"))
            _name_from_cell(fault, name, failed)

    @staticmethod
    def _bad_result(function: str, detail: str) -> BadResult:
        # What was wrong may be the student's own text (an encoding error message): public only.
        return BadResult(
            function,
            [Message("fault.bad_result", {"function": function})],
            private=[Message("fault.bad_result_detail", {"detail": str(detail)[:200]})],
        )

    def _died(self, function: str, module: str, reply: Reply) -> StudentFault:
        code = reply.returncode
        # bubblewrap reports a child killed by signal N as exit status 128 + N.
        number = -code if code is not None and code < 0 else code - 128 if code is not None and code > 128 else None
        if number is not None and 0 < number < 128:
            reason, status = SIGNAL_REASONS.get(number, "signal"), _signal_name(number)
        else:
            reason, status = "exit", f"exit code {'?' if code is None else code}"
        # The exit status, and even which way the process died, are the student's code's choice
        # (they can encode hidden inputs, trial 62): a hidden test says only that it died.
        shown = [Message(f"fault.died_{reason}", {"function": function})]
        private = [Message("fault.died_detail", {"status": status})]
        hidden = [Message("fault.died_hidden", {"function": function})]
        if reply.importing:
            crashed = Message("fault.import_crashed", {"module": self._file_name(module)})
            return self._broken(
                module,
                function,
                lambda name: StudentCrashed(
                    name,
                    [crashed, Message(f"fault.died_{reason}", {"function": name})],
                    private=private,
                    hidden=[crashed, Message("fault.died_hidden", {"function": name})],
                ),
            )
        return StudentCrashed(function, shown, private=private, hidden=hidden)

    def _broken(self, module: str, function: str, fault: Callable[[str], StudentFault]) -> StudentFault:
        """Keep ``module``'s import fault for the calls after this one; this call's fault."""
        self._broken_modules[module] = fault
        return fault(function)

    def take_output(self) -> str:
        """The print output collected since the last call to this method."""
        text, self.output = "".join(self.output), []
        return text


KEPT_ANSWER_ITEMS = 100_000
"""Items (array elements, characters, entries) an answer kept for a repeated call may hold:
a report is a few dozen; an answer that is megabytes is made again rather than kept, so a
student cannot make the grading process hold a copy of each."""


def _small(answer: Any) -> bool:
    """The answer holds at most ``KEPT_ANSWER_ITEMS`` items, counted without recursion."""
    pending, items = [answer], 0
    while pending and items <= KEPT_ANSWER_ITEMS:
        value = pending.pop()
        if isinstance(value, np.ndarray):
            items += value.size
        elif isinstance(value, (str, bytes)):
            items += len(value)
        elif isinstance(value, dict):
            items += len(value)
            pending += [*value.keys(), *value.values()]
        elif isinstance(value, (list, tuple)):
            items += len(value)
            pending += value
        else:
            items += 1
    return items <= KEPT_ANSWER_ITEMS
