"""Outcomes of a call into student code that are not an answer.

The student proxy raises these inside a test; the pytest plugin turns each into a scored
status (error, timeout, crashed, failed) with the messages it carries. They are the student's
faults, never the grader's: a :class:`GraderFault` is the one exception here that stops
grading without a score.
"""

from __future__ import annotations

from grader.messages import Message
from grader.model import Status
from grader.vocabulary import BUILTIN_EXCEPTIONS, builtin_name, safe_type_name


class GraderFault(Exception):
    """The grader itself failed (a bug, a broken suite, a missing reference): issue no score."""


class StudentFault(Exception):
    """A call into the student's code ended without a usable answer."""

    status: Status = Status.ERROR

    def __init__(
        self,
        function: str,
        messages: list[Message],
        *,
        private: list[Message] | None = None,
        hidden: list[Message] | None = None,
    ) -> None:
        super().__init__(function)
        self.function = function
        self.messages = messages
        """What every student sees."""
        self.private = private or []
        """Further detail that is shown only on public tests (it may echo hidden inputs)."""
        self.hidden = messages if hidden is None else hidden
        """What a hidden test shows in place of ``messages``: nothing the student's code chose."""


class StudentRaised(StudentFault):
    """The student's function raised an exception."""

    def __init__(
        self, function: str, exc_type: str, builtin_type: str, message: str, traceback: str, raised_in: str = ""
    ) -> None:
        self.exc_type, self.builtin_type, self.exc_message, self.traceback = exc_type, builtin_type, message, traceback
        if builtin_type == "NotImplementedError" and raised_in and raised_in != function:
            # An implemented function calling one still a stub: name the stub. Which function
            # raised is the student's code's choice (trial 62: a stub chosen by the hidden input's
            # size), so a hidden test says only that one did.
            shown = [Message("fault.not_implemented_inside", {"function": function, "inner": raised_in})]
            hidden = [Message("fault.not_implemented_inside_hidden", {"function": function})]
            private: list[Message] = []
        elif builtin_type == "NotImplementedError":
            shown = hidden = [Message("fault.not_implemented", {"function": function})]
            private = []
        else:
            # The exception's class, name and text are the student's choice and may carry hidden
            # inputs (trial 62: a built-in type chosen by the input's size), so a hidden test
            # says only that it raised; the rest is for public tests.
            shown = [Message("fault.raised", {"function": function, "exc_type": builtin_name(builtin_type)})]
            hidden = [Message("fault.raised_hidden", {"function": function})]
            # The traceback ends with the exception's own line: its text alone only without one.
            if traceback:
                private = [Message("fault.traceback", {"traceback": traceback})]
            else:
                private = [Message("fault.exception_text", {"text": f"{exc_type}: {message[:500]}"})]
            if builtin_type == "ValueError" and "could not be broadcast together" in message:
                private.append(Message("hint.broadcast_lost_axis"))  # numpy's text: on public tests only
        super().__init__(function, shown, private=private, hidden=hidden)


# Built-in exceptions a test may expect with ``pytest.raises(ValueError)``. A student's
# exception of one of these types arrives as a class deriving from both StudentRaised and the
# built-in, so the same test works on local functions and through the worker.
EXPECTABLE: dict[str, type[Exception]] = {
    cls.__name__: cls
    for cls in (
        ValueError,
        TypeError,
        KeyError,
        IndexError,
        LookupError,
        ZeroDivisionError,
        ArithmeticError,
        FileNotFoundError,
        OSError,
    )
}
_mixed: dict[str, type[StudentRaised]] = {}


def student_raised(
    function: str, exc_type: str, builtin_type: object, message: str, traceback: str, raised_in: str = ""
) -> StudentRaised:
    """The exception for a student's raise, catchable as its built-in type where that is safe."""
    builtin_type = builtin_type if isinstance(builtin_type, str) and builtin_type in BUILTIN_EXCEPTIONS else "Exception"
    if builtin_type not in EXPECTABLE:
        return StudentRaised(function, exc_type, builtin_type, message, traceback, raised_in)
    if builtin_type not in _mixed:
        try:
            _mixed[builtin_type] = type(f"Student{builtin_type}", (StudentRaised, EXPECTABLE[builtin_type]), {})
        except TypeError:  # incompatible instance layouts (OSError family): no mixing
            return StudentRaised(function, exc_type, builtin_type, message, traceback)
    return _mixed[builtin_type](function, exc_type, builtin_type, message, traceback)


class StudentMissing(StudentFault):
    """The submission does not define the function (or defines something that is not callable)."""

    def __init__(self, function: str, module: str | None, found: str | None, handed_in: bool = True) -> None:
        """``module``: the file as the student knows it; None for a submission whose file name
        the student chose, on a hidden test (no student-chosen text reaches hidden feedback).
        ``handed_in``: False when the module's file is not in the submission at all."""
        where = {"function": function} if module is None else {"function": function, "module": module}
        suffix = "_in_submission" if module is None else ""
        if not handed_in and module is not None:
            messages = [Message("fault.module_missing", where)]
        elif found is None:
            messages = [Message(f"fault.missing{suffix}", where)]
        else:
            messages = [Message(f"fault.not_callable{suffix}", where | {"found": safe_type_name(found)})]
        super().__init__(function, messages)


class StudentImportError(StudentFault):
    """Importing the module that should define the function failed."""

    def __init__(
        self, function: str, module: str, exc_type: str, builtin_type: object, message: str, traceback: str
    ) -> None:
        private = [Message("fault.exception_text", {"text": f"{exc_type}: {message[:500]}"})]
        if traceback:
            private.append(Message("fault.traceback", {"traceback": traceback}))
        super().__init__(
            function,
            [
                Message(
                    "fault.import_error",
                    {"function": function, "module": module, "exc_type": builtin_name(builtin_type)},
                )
            ],
            private=private,
        )


class StudentTimeout(StudentFault):
    """The call did not finish within its wall-clock limit and the worker was killed."""

    status = Status.TIMEOUT


class StudentCrashed(StudentFault):
    """The worker process died while answering (a signal, an exit, a resource limit)."""

    status = Status.CRASHED


class BadResult(StudentFault):
    """The worker answered, but not with data the grader accepts (too large, malformed)."""

    status = Status.FAILED
