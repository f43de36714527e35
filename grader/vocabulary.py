"""What feedback may say: the one rule between a check's verdict and the words a student reads.

Public tests may show the student's own values (type, shape, dtype, numbers): their inputs are
public. Hidden tests may show only our fixed vocabulary: pass or fail, the case's role, the
name of a diagnosed mistake, a type or dtype name from an allowlist, a relative shape statement
("one axis short"), and labels, names and limits that we wrote. Never a string, count or number
that came from the worker: the student's code chooses those and could spell a hidden input.

:func:`for_hidden` enforces it for every message of every hidden test, in one place (the
plugin calls it): a message whose id is not allowed on hidden tests, or one of whose parameters
is not of its declared kind, is replaced by a neutral one. ``HIDDEN`` declares, per allowed
message, what kind each parameter is; a test checks the declarations against the catalog.
"""

from __future__ import annotations

import builtins
import re
from collections.abc import Callable, Iterable

from grader.course import MODULE_OF, MODULES
from grader.messages import Message
from grader.submission import SINGLE_MODULE

BUILTIN_EXCEPTIONS = frozenset(
    name for name, obj in vars(builtins).items() if isinstance(obj, type) and issubclass(obj, BaseException)
)
SHOWN_EXCEPTIONS = frozenset(
    {
        "ValueError",
        "TypeError",
        "IndexError",
        "KeyError",
        "AttributeError",
        "NameError",
        "ZeroDivisionError",
        "OverflowError",
        "RecursionError",
        "MemoryError",
        "AssertionError",
        "FileNotFoundError",
        "FloatingPointError",  # numpy's, under np.seterr(all="raise")
    }
)
"""The exceptions a hidden test names: the ones students' numpy code really raises. Every
name a student can pick is a few bits they could spell a hidden input with, so the list is
short and everything else is "an exception" (the public tests name any type)."""
SAFE_TYPE_NAMES = frozenset(
    {"NoneType", "bool", "int", "float", "complex", "str", "bytes", "list", "tuple", "dict", "set", "module", "type"}
    | {"float16", "float32", "float64", "int32", "int64", "bool_", "complex128"}  # numpy scalars
    | {"numpy.ma.core.MaskedArray", "numpy.matrix", "numpy array of Python objects"}
)
"""Type names a hidden test may show: Python's and numpy's own, never one a student defined."""
NEUTRAL_TYPE = "an object of another type"
NEUTRAL_EXCEPTION = "an exception"
DTYPE_NAMES = frozenset(
    [f"float{n}" for n in (16, 32, 64, 128)]
    + [f"int{n}" for n in (8, 16, 32, 64)]
    + [f"uint{n}" for n in (8, 16, 32, 64)]
)
"""Dtypes a hidden test may name: the one it expected (what the student returned is not named)."""
RETURNED_TYPES = frozenset({"NoneType", NEUTRAL_TYPE})
"""What a hidden test may call the type of an answer: which type the student's code returned is its
choice (trial 62); None, a forgotten ``return``, is named for its hint."""
VALUE_TYPES = frozenset({"bool", "int", "float", "str", "dict", "list"})
ROLES = frozenset(
    {
        "a single vector",
        "a sequence of tokens",
        "a batch of sequences",
        "a 4-D batch",
        "a wide vector",
        "a narrow vector",
        "tiny values",
        "large values",
    }
)
"""How hidden feedback names a case: by its role, never by its sizes."""

_TYPE_TOKENS = re.compile(r"\b(?:u?int|float|complex)(?:8|16|32|64|128)\b")
_LABEL = re.compile(r"[A-Za-z_ ()\[\]\"'.,+*=/-]{1,120}")


def builtin_name(name: object) -> str:
    """``name`` if it is one of the few exceptions hidden tests name, else a neutral phrase."""
    return name if isinstance(name, str) and name in SHOWN_EXCEPTIONS else NEUTRAL_EXCEPTION


def safe_type_name(name: object) -> str:
    """A type name from a fixed vocabulary: anything the student named themselves is hidden."""
    return name if isinstance(name, str) and name in SAFE_TYPE_NAMES else NEUTRAL_TYPE


def is_label(value: object) -> bool:
    """A label we wrote for what a check looks at (``rmsnorm(x, gamma, eps)``): letters and
    code punctuation only. Digits (sizes, indices, literal arguments) are not labels, except
    inside a dtype name."""
    return isinstance(value, str) and _LABEL.fullmatch(_TYPE_TOKENS.sub("dtype", value)) is not None


def _names(allowed: Iterable[str]) -> Callable[[object], bool]:
    members = frozenset(allowed)
    return lambda value: isinstance(value, str) and value in members


def _listed(check: Callable[[object], bool]) -> Callable[[object], bool]:
    """A comma-separated list of values that each pass ``check``."""
    return lambda value: isinstance(value, str) and all(check(part) for part in value.split(", "))


def _our_number(value: object) -> bool:
    """A number the grader chose (a limit, a count of its own): never one from the worker;
    which messages carry one is declared below and reviewed with the catalog."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


KINDS: dict[str, Callable[[object], bool]] = {
    "label": is_label,
    "function": _names(MODULE_OF),
    "module": _names([f"{m}.py" for m in (*MODULES, SINGLE_MODULE)]),
    "exception": _names(SHOWN_EXCEPTIONS | {NEUTRAL_EXCEPTION}),
    "type": _names(SAFE_TYPE_NAMES | {NEUTRAL_TYPE}),
    "returned_type": _names(RETURNED_TYPES),
    "value_type": _names(VALUE_TYPES),
    "dtype": _names(DTYPE_NAMES),
    "role": _names(ROLES),
    "key_list": _listed(lambda part: isinstance(part, str) and re.fullmatch(r"[a-z_]{1,40}", part) is not None),
    "our_number": _our_number,
    # Read from the submission's file before any test ran (a file name, a parser's complaint):
    # the student's own material, never anything a hidden input could have shaped.
    "submission_text": lambda value: isinstance(value, str) and len(value) <= 300,
}
"""Each kind of parameter a hidden message may carry, with what a value of it must look like."""

HIDDEN: dict[str, dict[str, str]] = {
    "fault.not_implemented": {"function": "function"},
    "fault.raised_hidden": {"function": "function"},
    "fault.details_withheld": {"function": "function"},
    "fault.missing": {"function": "function", "module": "module"},
    "fault.module_missing": {"function": "function", "module": "module"},
    "fault.not_callable": {"function": "function", "module": "module", "found": "type"},
    "fault.missing_in_submission": {"function": "function"},
    "fault.not_implemented_inside_hidden": {"function": "function"},
    "fault.not_callable_in_submission": {"function": "function", "found": "type"},
    "fault.import_error": {"function": "function", "module": "module", "exc_type": "exception"},
    "fault.import_timeout": {"module": "module", "seconds": "our_number"},
    "fault.import_crashed": {"module": "module"},
    "fault.timeout": {"function": "function", "seconds": "our_number"},
    "fault.timeout_repeat": {"function": "function", "strikes": "our_number"},
    "fault.budget_spent": {"seconds": "our_number"},
    "fault.bad_result": {"function": "function"},
    "fault.bad_record": {"function": "function"},
    "fault.notebook_stopped": {},
    "fault.died_hidden": {"function": "function"},
    "check.not_array": {"what": "label", "type": "returned_type"},
    "check.absent_package": {"what": "label"},
    "check.bad_kind_hidden": {"what": "label"},
    "check.shape_fewer_axes": {"what": "label"},
    "check.shape_more_axes": {"what": "label"},
    "check.shape_other_sizes": {"what": "label"},
    "check.dtype_hidden": {"what": "label", "expected": "dtype"},
    "check.non_finite_hidden": {"what": "label"},
    "check.values_hidden": {"what": "label"},
    "check.value_type": {"what": "label", "expected_type": "value_type", "type": "returned_type"},
    "check.value_hidden": {"what": "label"},
    "check.note_length": {"what": "label", "limit": "our_number"},
    "check.note_sentences": {"what": "label"},
    "check.note_norm_missing_hidden": {"what": "label"},
    "check.note_other_norm_hidden": {"what": "label"},
    "check.note_placement_missing_hidden": {"what": "label"},
    "check.note_other_placement_hidden": {"what": "label"},
    "check.note_eps": {"what": "label"},
    "check.note_norm_count": {"what": "label"},
    "check.note_inferred": {"what": "label"},
    "check.keys_hidden": {"what": "label", "expected": "key_list"},
    "check.did_not_raise": {"what": "label", "exc_type": "exception"},
    "check.tuple_of": {"what": "label", "n": "our_number"},
    "check.mutated_hidden": {"function": "function"},
    "check.config_modified": {"function": "function"},
    "check.attempt_needed": {},
    "check.sublayer_calls_hidden": {"function": "function"},
    "check.about_zero": {"what": "label"},
    "check.uses_failing": {"function": "function"},
    "check.unusable_answer": {"function": "function"},
    "check.failed_hidden": {},
    "check.withheld": {},
    "check.probes_not_list": {"type": "returned_type"},
    "check.probes_count": {"limit": "our_number"},
    "check.probe_form": {"width": "our_number", "rows": "our_number"},
    "check.porting_label": {},
    "submission.notebook_too_large": {"limit": "our_number"},
    "submission.notebook_too_many_values": {"limit": "our_number"},
    "submission.notebook_too_many_items": {"limit": "our_number"},
    "submission.notebook_not_json": {"line": "submission_text", "column": "submission_text"},
    "submission.notebook_empty": {},
    "fault.submission_unreadable": {},
    "submission.notebook_no_cells": {},
    "submission.file_unreadable": {"path": "submission_text"},
    "result.skipped": {},
    "result.grader_fault": {},
    "result.no_report": {},
}
"""Every message a hidden test may show, with the kind of each of its parameters. Hints carry
no parameters and are all allowed."""

NEUTRAL = Message("check.withheld")


def allowed_on_hidden(message: Message) -> bool:
    """Whether ``message`` may be shown on a hidden test as it is."""
    if message.id.startswith("hint."):
        return not message.params
    kinds = HIDDEN.get(message.id)
    if kinds is None or set(message.params) != set(kinds):
        return False
    return all(KINDS[kinds[name]](value) for name, value in message.params.items())


def for_hidden(messages: Iterable[Message]) -> tuple[Message, ...]:
    """The messages of a hidden test as a student may read them: any message that is not
    allowed becomes the neutral one (once)."""
    out: list[Message] = []
    for message in messages:
        shown = message if allowed_on_hidden(message) else NEUTRAL
        if shown not in out:
            out.append(shown)
    return tuple(out)
