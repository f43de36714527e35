"""What hidden suites use to judge an answer: comparison hygiene, named tolerances, hints.

Every check runs in the trusted process on plain data that came back from the worker. Before
any numpy comparison the answer must be an exact ``np.ndarray`` of a real numeric dtype with
exactly the expected shape (no broadcasting) and only finite values; then it is compared in
float64 against a tolerance that scales with the data.

A failed check raises :class:`Mismatch`, whose messages say what was expected and what came
back. On a hidden test they never contain the expected values or the inputs.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import math
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, ParamSpec, overload

import numpy as np

from grader.faults import StudentRaised
from grader.messages import Message, listed, render_all
from grader.sandbox.inside import callables
from grader.sandbox.inside.wire import Unsupported, WireCallable, WireFile
from grader.vocabulary import NEUTRAL_TYPE

__all__ = [
    "TOLERANCES",
    "Hints",
    "Mismatch",
    "StudentRaised",
    "Sublayer",
    "Tolerance",
    "deferred",
    "describe_type",
    "expect",
    "expect_array",
    "expect_attempt",
    "expect_called_once",
    "expect_config_unchanged",
    "expect_keys",
    "expect_note",
    "expect_raises",
    "expect_untouched",
    "expect_value",
    "file_arg",
    "tolerance_for",
]


@dataclass(frozen=True)
class Tolerance:
    """How close an answer must be: ``|got - want| <= rtol * (|want| + rms(want)) + atol``.

    Scaling by the array's own RMS keeps near-zero elements from demanding absurd relative
    precision, while ``atol`` decides only when the expected array is all zeros.
    """

    rtol: float
    atol: float


Hint = tuple[Any, str]
"""A known mistake's output on a check's input, and the hint that names the mistake."""
P = ParamSpec("P")


class Hints(Sequence[Hint]):
    """Hint candidates worked out the first time a check reads them. A check reads them only
    when the answer is wrong, so a right answer (most of a class's) never pays for the
    mistakes' maths: about 9 ms of the trusted process's CPU on a solved submission. The
    inputs must stay as they are until the check: every suite builds its hints next to it."""

    def __init__(self, build: Callable[[], Iterable[Hint]]) -> None:
        self._build: Callable[[], Iterable[Hint]] | None = build
        self._items: list[Hint] = []

    def _built(self) -> list[Hint]:
        if self._build is not None:
            self._items, self._build = list(self._build()), None
        return self._items

    @overload
    def __getitem__(self, index: int) -> Hint: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[Hint]: ...
    def __getitem__(self, index: int | slice) -> Hint | Sequence[Hint]:
        return self._built()[index]

    def __len__(self) -> int:
        return len(self._built())


def deferred(build: Callable[P, Iterable[Hint]]) -> Callable[P, Hints]:
    """``build`` (a hint builder) run when its hints are first read, not when it is called."""

    @functools.wraps(build)
    def later(*args: P.args, **kwargs: P.kwargs) -> Hints:
        return Hints(lambda: build(*args, **kwargs))

    return later


TOLERANCES: dict[str, Tolerance] = {
    "float64": Tolerance(rtol=1e-9, atol=1e-12),
    "float32": Tolerance(rtol=1e-5, atol=1e-7),
    # float16 keeps 11 significant bits: about 5e-4 relative per rounding.
    "float16": Tolerance(rtol=2e-3, atol=1e-4),
    # Different but correct algorithms (a backward pass, a long stack) round differently.
    "algorithm": Tolerance(rtol=1e-7, atol=1e-10),
}


def tolerance_for(dtype: Any) -> Tolerance:
    """The named tolerance for results of this dtype (float64 for anything else)."""
    return TOLERANCES.get(np.dtype(dtype).name, TOLERANCES["float64"])


_hidden: contextvars.ContextVar[bool] = contextvars.ContextVar("normlab_hidden", default=True)


def set_hidden(hidden: bool) -> None:
    """Called by the plugin before each test: hidden tests get the guarded messages."""
    _hidden.set(hidden)


def is_hidden() -> bool:
    return _hidden.get()


@contextlib.contextmanager
def public_inputs() -> Iterator[None]:
    """Checks inside judge answers to public inputs: their messages may show the values
    (the default, for any check outside, is the guarded hidden form)."""
    token = _hidden.set(False)
    try:
        yield
    finally:
        _hidden.reset(token)


class Mismatch(AssertionError):
    """A check failed. Carries the messages for the student (already safe for hidden tests)."""

    def __init__(self, messages: list[Message]) -> None:
        super().__init__("; ".join(m.id for m in messages))
        self.messages = messages

    def __str__(self) -> str:
        """The messages in the reader's language: what plain pytest prints for a public test."""
        from grader.public import reader_language  # numpy-only, no cycle; imported when printed

        return render_all(self.messages, reader_language())


def expect(condition: bool, message_id: str, **params: Any) -> None:
    """Fail with the catalog message ``message_id`` unless ``condition`` holds."""
    if not condition:
        raise Mismatch([Message(message_id, params)])


ABSENT_TYPE = "inside.cells.Absent"
"""What the worker names the stand-in for a package the grading environment lacks
(``sandbox/inside/cells.py``): an answer computed with that package."""


def _wrong_type(what: str, got: Any, message_id: str, **params: str) -> Mismatch:
    """The answer is not of the type asked for. One computed with a package that is not installed
    where notebooks are graded says so, rather than naming the grader's own stand-in class."""
    if isinstance(got, Unsupported) and got.type_name == ABSENT_TYPE:
        return Mismatch([Message("check.absent_package", {"what": what})])
    wrong = Message(message_id, {"what": what, **params, "type": describe_type(got)})
    if got is not None:
        return Mismatch([wrong])
    # A value inside the answer (report["eps_source"], a tuple's part) is None while the function
    # did return: "no return statement?" would send the student after the wrong bug (trial 65).
    return Mismatch([wrong, Message("hint.part_none" if what.endswith("]") else "hint.returned_none")])


def describe_type(value: Any) -> str:
    """The answer's type name; on a hidden test none but None's: which type the student's code
    returned is its choice, and could carry hidden inputs out through the feedback (trial 62).
    None, a forgotten ``return``, keeps its name and its hint."""
    if is_hidden():
        return "NoneType" if value is None else NEUTRAL_TYPE
    return (value.type_name if isinstance(value, Unsupported) else type(value).__name__)[:80]


def _short(value: Any) -> str:
    try:
        text = repr(value)
    except ValueError:  # an int too long to print
        text = f"<{type(value).__name__} too long to show>"
    return text if len(text) <= 80 else text[:77] + "..."


def _hint_messages(got: np.ndarray, hints: Iterable[tuple[Any, str]], tol: Tolerance) -> list[Message]:
    """Every hint whose candidate the answer matches (NaN matching NaN, inf matching inf). On
    some inputs two mistakes give the same answer (with a silent sublayer, post-norm and a
    normalized residual agree): then both are named, not one at random, after a line saying
    that the input cannot tell them apart (a student read two hints as contradicting)."""
    g = got.astype(np.float64)
    found: list[Message] = []
    for candidate, hint_id in hints:
        cand = np.asarray(candidate, dtype=np.float64)
        if cand.shape != g.shape or Message(hint_id) in found:
            continue
        if not all(np.array_equal(test(g), test(cand)) for test in (np.isnan, np.isposinf, np.isneginf)):
            continue
        finite = np.isfinite(cand)
        if within_tolerance(g[finite], cand[finite], tol).all():
            found.append(Message(hint_id))
    return [Message("check.hints_agree"), *found] if len(found) > 1 else found


def within_tolerance(got: np.ndarray, want: np.ndarray, tol: Tolerance) -> np.ndarray:
    """Element by element, whether ``got`` is ``want`` within ``tol`` (relative to each value
    and to the answer's RMS, so values near zero in a large answer are not held to nothing)."""
    g, w = got.astype(np.float64), want.astype(np.float64)
    scale = math.sqrt(float(np.mean(np.square(w)))) if w.size else 0.0
    return np.abs(g - w) <= tol.rtol * (np.abs(w) + scale) + tol.atol


def expect_array(
    got: Any,
    want: np.ndarray,
    *,
    what: str,
    tol: Tolerance | None = None,
    dtype: bool = True,
    hints: Sequence[tuple[Any, str]] = (),
) -> None:
    """The answer must be an array like ``want``: type, dtype, shape, finite, then values.

    Args:
        got: what the student returned (plain data from the worker).
        want: the reference answer, computed in the trusted process.
        what: a code-like label for messages, e.g. ``"rmsnorm(x, gamma)"``.
        tol: defaults to the named tolerance for ``want``'s dtype.
        dtype: whether the dtype must equal ``want``'s.
        hints: ``(candidate, hint id)`` pairs; when the answer matches a candidate (the output
            of a known mistake on the same input) that hint is added to the message.
    """
    want = np.asarray(want)
    if not np.isfinite(want.astype(np.float64)).all():
        raise ValueError(f"reference answer for {what} is not finite: the suite is wrong")
    tol = tol or tolerance_for(want.dtype)
    _expect_form(got, want, what=what, dtype=dtype, hints=hints, tol=tol)
    ok = within_tolerance(got, want, tol)
    if not ok.all():
        raise Mismatch([_values_message(got, want, ok, what, tol), *_hint_messages(got, hints, tol)])


IGNORES_AN_ARGUMENT = frozenset(
    {
        "hint.missing_gamma",
        "hint.missing_beta",
        "hint.hardcoded_eps",
        # No normalization at all: gamma and eps ignored, ``x + sublayer(x)`` (or its gradient).
        "hint.missing_norm",
        "hint.unnormalized_sublayer_input",
        "hint.norm_backward_skipped",
        # No answer at all: a function that returns None computed nothing.
        "hint.returned_none",
    }
)
"""Diagnosed mistakes that consist of ignoring an argument (or computing nothing): they earn
no property points, or code that drops an argument on purpose would collect them (decision 1)."""


def expect_attempt(
    got: Any, want: np.ndarray, *, what: str, hints: Sequence[tuple[Any, str]], tol: Tolerance | None = None
) -> None:
    """The answer is right, or is what one of the diagnosed mistakes in ``hints`` gives: the
    student implemented the function and made a known error. A test of a property (inputs
    left alone, the sublayer called once) checks this first, so that the property earns its
    points for an honest attempt, never for code that does none of the maths (decision 1)."""
    try:
        expect_array(got, want, what=what, tol=tol, hints=hints)
    except Mismatch as mismatch:
        if not any(m.id.startswith("hint.") and m.id not in IGNORES_AN_ARGUMENT for m in mismatch.messages):
            # Said, or a student looks for an in-place change that is not there (trial 60).
            mismatch.messages.append(Message("check.attempt_needed"))
            raise


def _expect_form(
    got: Any, want: np.ndarray, *, what: str, dtype: bool, hints: Sequence[tuple[Any, str]], tol: Tolerance
) -> None:
    """Everything but the values: an exact ndarray, a real dtype, the shape, the dtype, finite."""
    hidden = is_hidden()
    if type(got) is not np.ndarray:
        raise _wrong_type(what, got, "check.not_array")
    if got.dtype.kind not in "fiu":
        if hidden:  # which kind is the student's code's choice (trial 62): not named
            raise Mismatch([Message("check.bad_kind_hidden", {"what": what})])
        raise Mismatch([Message("check.bad_kind", {"what": what, "dtype": str(got.dtype)[:80]})])
    if got.shape != want.shape:
        # On a hidden test neither shape is shown: the student's sizes could encode inputs, and
        # the expected ones are the hidden input's. Only how they differ is said.
        shape = (
            Message(_shape_relation(got.shape, want.shape), {"what": what})
            if hidden
            else Message("check.shape", {"what": what, "actual": str(got.shape), "expected": str(want.shape)})
        )
        raise Mismatch([shape, *_hint_messages(got, hints, tol)])
    if dtype and got.dtype != want.dtype:
        if hidden:  # the dtype returned is the student's code's choice (trial 62: one per input size)
            raise Mismatch([Message("check.dtype_hidden", {"what": what, "expected": str(want.dtype)})])
        raise Mismatch([Message("check.dtype", {"what": what, "actual": str(got.dtype), "expected": str(want.dtype)})])
    finite = np.isfinite(got)
    if not finite.all():
        index = str(tuple(int(i) for i in np.argwhere(~finite)[0]))
        messages = [
            Message("check.non_finite_hidden", {"what": what})
            if hidden
            else Message("check.non_finite", {"what": what, "count": int((~finite).sum()), "index": index})
        ]
        raise Mismatch(messages + _hint_messages(got, hints, tol))


def _shape_relation(got: tuple[int, ...], want: tuple[int, ...]) -> str:
    if len(got) < len(want):
        return "check.shape_fewer_axes"
    return "check.shape_more_axes" if len(got) > len(want) else "check.shape_other_sizes"


def _distinct(a: float, b: float) -> tuple[str, str]:
    """``a`` and ``b`` with the fewest digits (6 at least) that tell them apart."""
    for digits in range(6, 18):
        left, right = f"{a:.{digits}g}", f"{b:.{digits}g}"
        if left != right:
            return left, right
    return f"{a:.17g}", f"{b:.17g}"


def _values_message(got: np.ndarray, want: np.ndarray, ok: np.ndarray, what: str, tol: Tolerance) -> Message:
    """Where the values are furthest from the reference, and by how much."""
    g, w = got.astype(np.float64), want.astype(np.float64)
    err = np.abs(g - w)
    worst = np.unravel_index(int(np.argmax(err)), err.shape) if err.ndim else ()
    index = str(tuple(int(i) for i in worst))
    rel = float(err[worst] / max(abs(float(w[worst])), 1e-300))
    if is_hidden():
        # Nothing computed from the answer: its index would give the hidden input's sizes away
        # and its error is a number the student's code chose.
        return Message("check.values_hidden", {"what": what})
    return Message(
        "check.values_public",
        {
            "what": what,
            "count": int((~ok).sum()),
            "size": int(ok.size),
            "index": index,
            "rtol": tol.rtol,
            "expected": _distinct(float(w[worst]), float(g[worst]))[0],
            "actual": _distinct(float(w[worst]), float(g[worst]))[1],
            "abs_err": f"{float(err[worst]):.3g}",
            "rel_err": f"{rel:.3g}",
        },
    )


def expect_value(
    got: Any, want: Any, *, what: str, rel: float | None = None, hints: Sequence[tuple[Any, str]] = ()
) -> None:
    """A scalar answer: exact for ``str``, ``bool`` and ``int``; relative ``rel`` for floats.

    The student's own value is always shown; the expected one only on public tests. ``hints``
    are ``(value a known mistake gives, hint id)`` pairs, as for :func:`expect_array`.
    """
    if isinstance(want, bool):
        ok_type = isinstance(got, (bool, np.bool_))
        kind = "bool"
    elif isinstance(want, int):
        ok_type = isinstance(got, (int, np.integer)) and not isinstance(got, (bool, np.bool_))
        kind = "int"
    elif isinstance(want, float):
        ok_type = isinstance(got, (int, float, np.integer, np.floating)) and not isinstance(got, (bool, np.bool_))
        kind = "float"
    elif isinstance(want, str):
        ok_type = isinstance(got, str)
        kind = "str"
    else:
        raise TypeError(f"expect_value does not compare {type(want).__name__}: the suite is wrong")
    if not ok_type:
        raise _wrong_type(what, got, "check.value_type", expected_type=kind)
    if kind == "float":
        try:
            g = float(got)
        except OverflowError:  # an int beyond float's range is simply wrong
            g = math.inf
        w = float(want)
        bound = (1e-9 if rel is None else rel) * abs(w)
        ok = math.isfinite(g) and abs(g - w) <= bound + 1e-300
    else:
        ok = got == want
    if ok:
        return
    hint = [Message(h) for candidate, h in hints if _same_value(got, candidate, rel)][:1]
    if is_hidden():
        # The student's value is not echoed either: it could be a hidden input smuggled out.
        raise Mismatch([Message("check.value_hidden", {"what": what}), *hint])
    raise Mismatch(
        [Message("check.value_public", {"what": what, "actual": _short(got), "expected": _short(want)}), *hint]
    )


def _same_value(got: Any, candidate: Any, rel: float | None) -> bool:
    if isinstance(candidate, float) and isinstance(got, (int, float, np.integer, np.floating)):
        try:
            return abs(float(got) - candidate) <= (1e-9 if rel is None else rel) * abs(candidate) + 1e-300
        except OverflowError:
            return False
    return bool(got == candidate)


def expect_keys(got: Any, keys: Iterable[str], *, what: str) -> None:
    """The answer must be a ``dict`` with exactly these keys."""
    keys = sorted(keys)
    if not isinstance(got, dict):
        raise _wrong_type(what, got, "check.value_type", expected_type="dict")
    missing = sorted(set(keys) - set(got))
    extra = sorted(str(k)[:40] for k in set(got) - set(keys))
    if missing or extra:
        if is_hidden():
            # Which keys are missing, and how many others there are, is the student's choice.
            raise Mismatch([Message("check.keys_hidden", {"what": what, "expected": ", ".join(keys)})])
        params = {"what": what, "expected": ", ".join(keys), "missing": ", ".join(missing) or "-"}
        raise Mismatch([Message("check.keys", params | {"extra": listed(extra) or "-"})])


@contextlib.contextmanager
def expect_raises(exc_type: type[Exception], *, what: str) -> Iterator[None]:
    """The student's call inside the block must raise ``exc_type`` (a built-in type).

    A different exception propagates and is scored as the student's error (so an untouched
    stub still reads "not implemented yet"); returning normally fails with a message.
    """
    try:
        yield
    except exc_type:
        return
    raise Mismatch([Message("check.did_not_raise", {"what": what, "exc_type": exc_type.__name__})])


def expect_untouched(changed: Sequence[str], *, function: str) -> None:
    """The call left its inputs as they were (``changed``: what the worker saw modified,
    already limited to the names of the arguments we passed)."""
    if changed and is_hidden():  # which of them changed is the student's choice
        raise Mismatch([Message("check.mutated_hidden", {"function": function})])
    if changed:
        raise Mismatch([Message("check.mutated", {"function": function, "names": ", ".join(changed)})])


def expect_config_unchanged(changed: Sequence[str], *, function: str) -> None:
    """The call left the config it read as it was (a dict: its keys and values, and those of
    the dicts inside it). Names no key: which one changed is the student's code's choice."""
    if changed:
        raise Mismatch([Message("check.config_modified", {"function": function})])


def expect_called_once(calls: int, *, function: str) -> None:
    """The function called the sublayer it was given exactly once."""
    if calls != 1:
        if is_hidden():  # the count is the student's number
            raise Mismatch([Message("check.sublayer_calls_hidden", {"function": function})])
        raise Mismatch([Message("check.sublayer_calls", {"function": function, "calls": calls})])


NORM_WORDS = {"layernorm": ("layernorm",), "rmsnorm": ("rmsnorm",), "gemma_rmsnorm": ("rmsnorm", "1 + weight")}
_NOT_IDENTIFIER = r"(?<![a-z0-9_])"
_NOT_IDENTIFIER_END = r"(?![a-z0-9_])"
NORM_WORD_PATTERNS = {
    # Not "layer norm": an RMSNorm note may call its norm "the layer norm" in the generic sense.
    "layernorm": re.compile(_NOT_IDENTIFIER + r"layernorms?" + _NOT_IDENTIFIER_END),
    "rmsnorm": re.compile(_NOT_IDENTIFIER + r"rms ?norms?" + _NOT_IDENTIFIER_END),
    "1 + weight": re.compile(r"1\s*\+\s*weight"),
}
"""How a note names each norm word, matched in the lower-cased note: as a word of its own,
"LayerNorm" (or "RMS norm"), never inside a module or class identifier (``input_layernorm``,
``post_attention_layernorm``, ``T5LayerNorm``, ``LlamaRMSNorm``), which names a module, not the
norm type (Llama's ``input_layernorm`` is an RMSNorm); "(1+weight)" counts like "(1 + weight)"."""
OWN_NORM_WORD_PATTERNS = {
    **NORM_WORD_PATTERNS,
    "layernorm": re.compile(_NOT_IDENTIFIER + r"layer[ -]?norms?" + _NOT_IDENTIFIER_END),
}
"""How a note names its own norm: "Layer Norm" names a LayerNorm note's own, as "RMS Norm" does
an RMSNorm's (in an RMSNorm note, "the layer norm" is generic and names no other norm)."""
PLACEMENT_WORDS = {
    "pre": ("pre-norm",),
    "post": ("post-norm",),
    "sandwich": ("sandwich",),
    "post_sublayer": ("norm-on-output", "post-sublayer"),
    "parallel": ("parallel",),
}
"""The words a note may use, compared without case ("Pre-norm" opens a sentence)."""
CONTAINED_PLACEMENTS = {"sandwich": ("pre-norm", "post-norm"), "parallel": ("pre-norm",)}
"""Other placements' words a note may use for its own: a sandwich is a pre-norm and a post-norm
around each sublayer; a parallel block's branches read one pre-norm input."""
OTHER_PLACEMENT_PATTERNS = {
    # Pre-norm and post-norm go by other spellings too: Pre-LN, post norm, postnorm, Post-LayerNorm.
    "pre-norm": re.compile(_NOT_IDENTIFIER + r"pre[ -]?(?:norm|ln" + _NOT_IDENTIFIER_END + r"|layer[ -]?norm)"),
    "post-norm": re.compile(_NOT_IDENTIFIER + r"post[ -]?(?:norm|ln" + _NOT_IDENTIFIER_END + r"|layer[ -]?norm)"),
    # "parallel" in a serving engineer's other senses names no placement: tensor-, pipeline-, data-,
    # expert-, model-, sequence- or context-parallel shards, parallelism, or a config key
    # (use_parallel_residual).
    "parallel": re.compile(
        r"(?<!tensor[ -])(?<!pipeline[ -])(?<!data[ -])(?<!expert[ -])(?<!model[ -])(?<!sequence[ -])(?<!context[ -])"
        + _NOT_IDENTIFIER
        + r"parallel"
        + _NOT_IDENTIFIER_END
    ),
}
"""How a note names another placement than its own, where a plain substring would also find
words that are no placement (the note's own placement is still found as a substring)."""
INFERRED = re.compile(r"\b(?:infer(?:s|red|ring)?|assum(?:e|ed|es|ing|ption)|guess(?:ed|es|ing)?)\b", re.IGNORECASE)
"""How a note says that an unknown family's norm and placement were inferred from its keys
(not "inference", a serving engineer's word for running the model)."""
EPS_LIKE = re.compile(r"\b\d(?:\.\d+)?e-0*[1-9]\d*\b|\b0\.0{3,}[1-9]\d*\b")
"""A small number: ``1e-6``, ``0.00001``. The zeros and the digits after them never overlap: a
student's run of 30,000 zeros split them every way (seconds per zero squared, red team 41)."""
EPS_SIZED = 1e-4
"""The largest number a note's reader could take for another eps: a note may also name a
float16 precision (``7.8e-3``) or a drift (``1e-3``), as the docstring says."""
NOTE_CHARS = 2000
"""The longest note read (2 to 4 sentences): every pattern below then costs little."""
SENTENCE_END = re.compile(
    r"(?:(?<!\be\.g)(?<!\bi\.e)(?<!\bcf)(?<!\bvs)(?<!\betc)[.!?]|(?<=\betc)\.(?=\s*$|\s+(?-i:[A-Z])))(?:\s+|$)",
    re.IGNORECASE,
)
"""Where a sentence ends; an abbreviation's full stop (e.g., i.e., cf., vs.) ends none, and
"etc." ends one only before a capital letter or the end."""


DENIED = re.compile(r"(?:\b(?:not|no|nor|neither|never)|n't|n’t)\s+(?:(?:a|an|the)\s+)?$")
"""What, just before the note's own norm or placement word, denies it ("not a LayerNorm")."""
DENIAL_REACH = 24
"""How far before a word :data:`DENIED` looks: the note is the student's text, and searching all
of it before each mention would be quadratic in its length."""


def _affirmed(pattern: re.Pattern[str], text: str) -> bool:
    """Whether ``text`` names what ``pattern`` finds at least once without denying it."""
    return any(
        DENIED.search(text, max(0, found.start() - DENIAL_REACH), found.start()) is None
        for found in pattern.finditer(text)
    )


def expect_note(note: Any, want: dict[str, Any]) -> None:
    """The note says what the report says, and nothing that contradicts it: the right norm and
    placement words, at least once not denied (and no other's, even denied), the eps (and no
    other eps), the count, in 2 to 4 sentences. A note that lists every name and value
    contradicts itself and fails."""
    expect_value(isinstance(note, str), True, what='the type of inspect_config(config)["note"]')
    _note_says(len(note) <= NOTE_CHARS, "check.note_length", limit=NOTE_CHARS)
    sentences = [part for part in SENTENCE_END.split(note.strip()) if part.strip()]
    _note_says(2 <= len(sentences) <= 4, "check.note_sentences")
    text = note.lower()
    own = set(NORM_WORDS[want["norm_type"]])
    for word in sorted({w for words in NORM_WORDS.values() for w in words}):
        if word in own:  # the own type's word may also come inside a class name (LlamaRMSNorm)
            inside = re.compile(re.escape(word).replace(r"\ ", r"\s*"))
            named = _affirmed(OWN_NORM_WORD_PATTERNS[word], text) or _affirmed(inside, text)
            _note_says(named, "check.note_norm_missing", word=NOTE_WORDS[word])
        else:
            named = NORM_WORD_PATTERNS[word].search(text) is not None
            _note_says(not named, "check.note_other_norm", word=NOTE_WORDS[word])
    mine = PLACEMENT_WORDS[want["placement"]]
    named = any(_affirmed(re.compile(re.escape(word)), text) for word in mine)
    _note_says(named, "check.note_placement_missing", word=" / ".join(mine))
    for placement, words in PLACEMENT_WORDS.items():
        for word in words:
            if word in CONTAINED_PLACEMENTS.get(want["placement"], ()):
                continue
            if placement != want["placement"] and not any(word in own_word for own_word in mine):
                pattern = OTHER_PLACEMENT_PATTERNS.get(word)
                named = word in text if pattern is None else pattern.search(text) is not None
                _note_says(not named, "check.note_other_placement", word=word)
    eps = want["eps"]
    numbers = {n for n in map(float, EPS_LIKE.findall(note)) if n <= EPS_SIZED or n == eps}
    # EPS_LIKE finds the small numbers a note may use for an eps; an eps of 1e-3 or more is
    # written by repr as 0.001 or 0.01, which it does not find: its own repr counts as named.
    if re.search(rf"(?<![\w.]){re.escape(repr(eps))}(?![\w]|\.\d)", note):
        numbers.add(eps)
    _note_says(numbers == {eps}, "check.note_eps")
    _note_says(re.search(rf"\b{want['n_norms']}\b", note) is not None, "check.note_norm_count")
    if INFERRED.search(want["note"]):  # an unknown family: what the report assumed is said
        _note_says(INFERRED.search(note) is not None, "check.note_inferred")


NOTE_WORDS = dict(zip(("layernorm", "rmsnorm", "1 + weight"), ("LayerNorm", "RMSNorm", "(1 + weight)"), strict=True))
"""Each norm word as a note writes it, for the feedback."""


def _note_says(ok: bool, message_id: str, **params: Any) -> None:
    """One requirement of the note, met or said. Which word a hidden test's note lacks or names
    is the expected answer's, or the student's choice: a hidden test says only what is wrong."""
    if ok:
        return
    shown = {k: v for k, v in params.items() if k == "limit"} if is_hidden() else params
    hidden = "_hidden" if is_hidden() and "word" in params else ""
    raise Mismatch([Message(message_id + hidden, {"what": 'inspect_config(config)["note"]', **shown})])


class Sublayer(WireCallable):
    """A sublayer for a student call, described as data (see ``sandbox/inside/callables.py``).

    Pass it to ``student.block(...)`` as is; the worker rebuilds it as a function. The
    ``reference`` fixture turns it into the same function in the trusted process.
    """

    def __init__(self, kind: str, **params: Any) -> None:
        if kind not in callables.KINDS:
            raise ValueError(f"unknown sublayer kind {kind!r}; known: {sorted(callables.KINDS)}")
        super().__init__(kind, params)

    def build(self) -> callables.Recorded:
        return callables.Recorded(self.kind, self.params)


def file_arg(name: str, text: str, as_path: bool = False) -> WireFile:
    """A file argument: the worker writes ``text`` to a scratch file and passes its path, a
    ``str`` or, with ``as_path``, a ``pathlib.Path``."""
    return WireFile(name, text, as_path)
