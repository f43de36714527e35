"""What the public tests expect, and the one way they check it.

A public test calls a function of the student's on a public input and hands the answer to
:meth:`Expected.check`, which looks up the reference's answer to that very call, and the
answers of the common mistakes, in ``answers.json`` beside the tests, then judges it with the
same checks the hidden suites use (``checks.py``): the same numbers, the same mistake hints.
Only the inputs differ (invariant 10).

``answers.json`` is generated from ``solutions/`` by ``normlab stubs`` (which runs the public
tests against the reference once, recording), so it holds answers to public inputs only:
nothing a public test does not already show. Calls are looked up by their function's name and
a digest of their arguments (``public.py``, which also runs the tests where normlab is absent).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import numpy as np

from grader import checks
from grader.messages import Message
from grader.public import ANSWERS_FILE, call_noting_changes, decode, read_answers, recorded

__all__ = ["ANSWERS_FILE", "Expected", "judge", "without_skipped"]


def without_skipped(got: Any, want: Any, skip: Iterable[str]) -> tuple[Any, Any]:
    """Two dict answers without the keys ``skip`` leaves to other checks; other answers as
    they are."""
    if not (isinstance(want, dict) and isinstance(got, dict)):
        return got, want
    left = set(skip)
    return {k: v for k, v in got.items() if k not in left}, {k: v for k, v in want.items() if k not in left}


class Expected:
    """The public tests' fixture: ``expected.check(student.rmsnorm, x, gamma, eps=0.0, what=...)``."""

    def __init__(self, answers: dict[str, Any]) -> None:
        self.answers = answers

    @classmethod
    def load(cls, folder: Path) -> Expected:
        return cls(read_answers(folder))

    def check(
        self,
        function: Callable[..., Any],
        *args: Any,
        what: str,
        names: Iterable[str] = (),
        rel: float | None = None,
        skip: Iterable[str] = (),
        **kwargs: Any,
    ) -> Any:
        """Call ``function(*args, **kwargs)`` and judge its answer against the reference's
        answer to the same call (``names``: labels of a tuple answer's parts; ``skip``: keys of
        a dict answer left to other checks). Returns the answer, for the test's own checks."""
        # Looked up by the inputs as the test gave them, before a call that changes them in
        # place (in a plain pytest run, where the call is direct) makes the lookup miss.
        entry = recorded(self.answers, function.__name__, args, kwargs)
        answer, changed = call_noting_changes(function, args, kwargs)
        if changed:
            with checks.public_inputs():
                checks.expect_untouched(changed, function=function.__name__)
        got, want = without_skipped(answer, decode(entry["answer"]), skip)
        hints = [(decode(candidate), hint) for hint, candidate in entry.get("hints", [])]
        with checks.public_inputs():
            judge(got, want, Judgement(what, tuple(names), hints, rel))
        return answer

    @staticmethod
    def untouched(student: Any, function: str, **inputs: tuple[np.ndarray, np.ndarray]) -> None:
        """The last call left its inputs as they were: the worker's record under normlab, a
        comparison of ``(now, before)`` copies in a plain pytest run."""
        record = getattr(student, "last_call", None)
        if record is not None:
            changed = list(record.mutated)
        else:
            changed = [name for name, (now, before) in inputs.items() if not np.array_equal(now, before)]
        with checks.public_inputs():
            checks.expect_untouched(changed, function=function)

    @staticmethod
    def require(condition: bool, message: str, **params: Any) -> None:
        """A public test's own condition: when it does not hold, the catalog's ``public.*``
        ``message`` says why, in the reader's language (never a raw English assertion)."""
        if not condition:
            with checks.public_inputs():
                raise checks.Mismatch([Message(message, params)])

    @staticmethod
    def raises(exc_type: type[Exception], *, what: str) -> Any:
        """``with expected.raises(ValueError, what=...):`` the call inside must raise it."""
        return checks.expect_raises(exc_type, what=what)

    @staticmethod
    def note(note: Any, report: dict[str, Any]) -> None:
        """inspect_config's note says what its report says (see ``checks.expect_note``)."""
        with checks.public_inputs():
            checks.expect_note(note, report)


class Judgement:
    """How an answer is judged: its label, the labels of a tuple's parts, the hints, a tolerance."""

    def __init__(self, what: str, names: tuple[str, ...], hints: list[tuple[Any, str]], rel: float | None) -> None:
        self.what, self.names, self.hints, self.rel = what, names, hints, rel

    def part(self, what: str, index: int | None = None) -> Judgement:
        """The judgement of one part of a tuple answer (``index``) or of a dict's value (none:
        mistakes are recorded for whole tuples only)."""
        if index is None:
            return Judgement(what, (), [], self.rel)
        hints = [(c[index], h) for c, h in self.hints if isinstance(c, tuple) and c[index] is not None]
        return Judgement(what, (), hints, self.rel)


ABOUT_ZERO = 1e-8
"""Below this, a float answer is round-off: any value as small is right."""


def judge(got: Any, want: Any, how: Judgement) -> None:
    """The check that fits the reference's answer: arrays, tuples, dicts, scalars."""
    if isinstance(want, np.ndarray):
        checks.expect_array(got, want, what=how.what, hints=how.hints)
    elif isinstance(want, tuple):
        fits = isinstance(got, (tuple, list)) and len(got) == len(want)
        checks.expect(fits, "check.tuple_of", what=how.what, n=len(want))
        labels = how.names or tuple(f"{how.what}[{i}]" for i in range(len(want)))
        for index, (part, label) in enumerate(zip(want, labels, strict=True)):
            judge(got[index], part, how.part(label, index))
    elif isinstance(want, dict):
        checks.expect_keys(got, want, what=how.what)
        # Every wrong entry at once: one at a time, a student fixed op_counts in as many runs
        # as it had wrong counts (trial 65).
        wrong: list[Message] = []
        for name, value in want.items():
            try:
                judge(got[name], value, how.part(f'{how.what}["{name}"]'))
            except checks.Mismatch as mismatch:
                wrong += [m for m in mismatch.messages if m not in wrong]
        if wrong:
            raise checks.Mismatch(wrong)
    elif isinstance(want, float) and abs(want) < ABOUT_ZERO:
        real = isinstance(got, (int, float, np.integer, np.floating)) and not isinstance(got, (bool, np.bool_))
        checks.expect(real and abs(float(got)) < ABOUT_ZERO, "check.about_zero", what=how.what)
    else:
        checks.expect_value(got, want, what=how.what, rel=how.rel, hints=how.hints)
