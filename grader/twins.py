"""Public tests that a table of their answers cannot pass.

The public tests' answers ship to students (``answers.json``: the reference's answer to each
public call), so code that hashes its arguments and returns the recorded answer passed every
public test without computing anything (a red team's lookup table earned 25 points). In a final
grading, where the reference is loaded, each public check is repeated on a *twin* of its
input: the same arrays with their first axis in reverse order (rows of tokens, layers of a
stack), judged against the reference's answer to that call; where the reversal leaves the
reference's answer as it is (a mean over the tokens), the reversed arrays are also doubled, or
a function returning the printed answer as a constant would pass. Code that computes passes
both; a table knows only the first. The twin is derived from the public input by a rule the message
states, so it tells nothing hidden; ``normlab check`` (no reference) runs no twins.

Calls whose arguments are not plain arrays and values (lists of probes, dicts, files) have no
twin: their parts must stay paired in ways a reversal would break.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from grader import checks
from grader.expected import Expected, Judgement, judge, without_skipped
from grader.messages import Message

Args = tuple[tuple[Any, ...], dict[str, Any]]


def twin(args: tuple[Any, ...], kwargs: dict[str, Any], scale: float = 1.0) -> Args | None:
    """The call's twin arguments, or None when the call has none (see the module's docstring):
    with ``scale``, each reversed array also multiplied by it."""
    changed = False

    def reversed_copy(value: Any) -> Any:
        nonlocal changed
        if isinstance(value, np.ndarray) and value.dtype.kind == "f" and value.ndim >= 1 and value.shape[0] >= 2:
            changed = True
            return np.ascontiguousarray(value[::-1] * value.dtype.type(scale))
        return value.copy() if isinstance(value, np.ndarray) else value

    plain = (np.ndarray, int, float, str, bool, type(None), checks.Sublayer)
    if not all(isinstance(v, plain) for v in (*args, *kwargs.values())):
        return None
    result = tuple(reversed_copy(a) for a in args), {k: reversed_copy(v) for k, v in kwargs.items()}
    return result if changed else None


def _same(a: Any, b: Any) -> bool:
    """Whether two answers are the same values (NaN where NaN)."""
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return len(a) == len(b) and all(map(_same, a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    try:
        return bool(np.array_equal(a, b, equal_nan=True))
    except (TypeError, ValueError):  # not numbers: NaN means nothing to them
        return bool(a == b)


@dataclass
class _Twin:
    function: Callable[..., Any]
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    original: Args
    """A copy of the call's own arguments, as they were before it."""
    scaled: Args
    """The twin with its reversed arrays also doubled: for an answer the reversal leaves as
    it is (a mean over tokens), which a function returning a constant would also give."""
    what: str
    names: tuple[str, ...]
    rel: float | None
    skip: frozenset[str]


class TwinExpected(Expected):
    """:class:`Expected` for a final grading: each check's twin is judged once the test's own
    checks are done (its calls would otherwise change what the test reads of the last call)."""

    def __init__(self, base: Expected, reference: Any) -> None:
        super().__init__(base.answers)
        self.reference = reference
        self.pending: list[_Twin] = []

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
        # Made before the call: it may change its inputs in place.
        pair, scaled, original = twin(args, kwargs), twin(args, kwargs, scale=2.0), _copied(args, kwargs)
        answer = super().check(function, *args, what=what, names=names, rel=rel, skip=skip, **kwargs)
        if pair is not None and scaled is not None:
            self.pending.append(_Twin(function, *pair, original, scaled, what, tuple(names), rel, frozenset(skip)))
        return answer

    def verify(self) -> None:
        """Judge every twin; a wrong one fails the test with a message that says what the twin is."""
        for item in self.pending:
            name = item.function.__name__
            reference = getattr(self.reference, name)
            (args, kwargs), rule = (item.args, item.kwargs), "check.public_twin"
            want = reference(*args, **kwargs)
            if _same(want, reference(*item.original[0], **item.original[1])):
                (args, kwargs), rule = item.scaled, "check.public_twin_scaled"
                want = reference(*args, **kwargs)
            got = item.function(*args, **kwargs)
            got, want = without_skipped(got, want, item.skip)
            try:
                with checks.public_inputs():
                    judge(got, want, Judgement(item.what, item.names, [], item.rel))
            except checks.Mismatch:
                raise checks.Mismatch([Message(rule, {"function": name, "what": item.what})]) from None
        self.pending.clear()


def _copied(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Args:
    def copy(value: Any) -> Any:
        return value.copy() if isinstance(value, np.ndarray) else value

    return tuple(copy(a) for a in args), {k: copy(v) for k, v in kwargs.items()}


__all__ = ["TwinExpected", "twin"]
