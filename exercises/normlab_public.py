"""The public tests' answers file, and a plain way to run the tests where normlab is absent.

This module needs only numpy and the standard library: it is also copied, as
``normlab_public.py``, beside the stubs and the released notebook, so that the public tests run
in any Python with numpy (a bare ``pytest``, a Colab kernel). Where normlab is installed the
tests use :class:`grader.expected.Expected` instead: the very checks and messages of the hidden
suites. Here the checks are simpler and the messages English or Brazilian Portuguese only.

``answers.json`` maps a digest of each public call (its function's name and arguments) to the
reference's answer and the answers of the common mistakes, with the mistakes' hints.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import inspect
import io
import json
import os
import sys
import warnings
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

ANSWERS_FILE = "answers.json"


# --- the answers file ------------------------------------------------------------------------


def _canonical(value: Any) -> Any:
    """A JSON-able description of an argument, equal for equal arguments on every machine."""
    if isinstance(value, np.ndarray):
        digest = hashlib.sha256(np.ascontiguousarray(value).tobytes()).hexdigest()
        return ["array", value.dtype.str, list(value.shape), digest]
    if hasattr(value, "kind") and hasattr(value, "params"):  # a sublayer, described or built
        return ["sublayer", value.kind, _canonical(dict(value.params))]
    if isinstance(value, dict):
        return ["dict", sorted((str(k), _canonical(v)) for k, v in value.items())]
    if isinstance(value, (list, tuple)):
        return [type(value).__name__, [_canonical(v) for v in value]]
    if isinstance(value, (bool, int, float, str)) or value is None:
        return [type(value).__name__, repr(value)]
    return ["other", type(value).__name__]


def key(function: str, args: tuple[Any, ...] | list[Any], kwargs: dict[str, Any]) -> str:
    """Where the answer to ``function(*args, **kwargs)`` is recorded."""
    text = json.dumps([function, _canonical(list(args)), _canonical(kwargs)], sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def encode(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        data = base64.b64encode(np.ascontiguousarray(value).tobytes()).decode()
        return {"$array": data, "dtype": value.dtype.str, "shape": list(value.shape)}
    if isinstance(value, np.generic):
        return encode(value.item())
    if isinstance(value, dict):
        return {"$dict": {str(k): encode(v) for k, v in value.items()}}
    if isinstance(value, (list, tuple)):
        return {"$tuple" if isinstance(value, tuple) else "$list": [encode(v) for v in value]}
    return value


def decode(value: Any) -> Any:
    if isinstance(value, dict) and "$array" in value:
        data = np.frombuffer(base64.b64decode(value["$array"]), dtype=np.dtype(value["dtype"]))
        return data.reshape(value["shape"]).copy()
    if isinstance(value, dict) and "$dict" in value:
        return {k: decode(v) for k, v in value["$dict"].items()}
    if isinstance(value, dict) and "$tuple" in value:
        return tuple(decode(v) for v in value["$tuple"])
    if isinstance(value, dict) and "$list" in value:
        return [decode(v) for v in value["$list"]]
    return value


def read_answers(folder: Path) -> dict[str, Any]:
    """The answers file in ``folder`` (``{"calls": ..., "hints": ...}``); empty when absent."""
    path = Path(folder) / ANSWERS_FILE
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {"calls": {}, "hints": {}}


def recorded(answers: dict[str, Any], function: str, args: Any, kwargs: dict[str, Any]) -> dict[str, Any]:
    """The recorded entry of one call, or a clear error when the call was never recorded."""
    entry: dict[str, Any] | None = answers.get("calls", {}).get(key(function, args, kwargs))
    if entry is None:
        raise LookupError(
            f"no recorded answer for this call of {function}: its inputs are not the test's. Did a function "
            "change an input in place earlier in this test (x /= ..., x *= ...)? If not, the public tests or "
            f"{ANSWERS_FILE} were changed"
        )
    return entry


# --- the fixtures ------------------------------------------------------------------------------


class Sublayer:
    """A stand-in for attention or the FFN, built from its kind and parameters: ``zero``
    (returns zeros), ``scale`` (``h * factor``) or ``linear`` (``h @ w``). Under normlab the
    same description crosses to the sandbox as data and is rebuilt there."""

    KINDS: ClassVar[dict[str, Callable[[np.ndarray, dict[str, Any]], np.ndarray]]] = {
        "zero": lambda h, p: h * 0.0,
        "scale": lambda h, p: h * p["factor"],
        "linear": lambda h, p: h @ p["w"],
    }

    def __init__(self, kind: str, **params: Any) -> None:
        if kind not in self.KINDS:
            raise ValueError(f"unknown sublayer kind {kind!r}; known: {sorted(self.KINDS)}")
        self.kind, self.params = kind, params

    def __call__(self, h: np.ndarray) -> np.ndarray:
        return self.KINDS[self.kind](h, self.params)


class Functions:
    """``student.name``: the function ``name`` as ``lookup`` finds it now, called by that name
    (so the answer is looked up under the name the test used, whatever the function's own)."""

    def __init__(self, lookup: Callable[[str], Any]) -> None:
        self._lookup = lookup

    def __getattr__(self, name: str) -> Callable[..., Any]:
        if name.startswith("_"):
            raise AttributeError(name)
        function = self._lookup(name)
        if not callable(function):
            raise AttributeError(f"{name} is not defined yet: write it (and run its cell, in a notebook)")

        def call(*args: Any, **kwargs: Any) -> Any:
            return function(*args, **kwargs)

        call.__name__ = name
        call.__wrapped__ = function  # type: ignore[attr-defined]  # its parameters' names, for messages
        return call


# --- a plain judge, for where normlab is absent -------------------------------------------------


class PlainFailure(AssertionError):
    """A public check failed; the message says how."""


_course_language: str | None = None
"""The course's language, as the released notebook's setup cell gives it to :func:`run_public`."""


def reader_language() -> str:
    """The reader's language: ``NORMLAB_LANG``, else the course's (a released notebook says it),
    else the locale as POSIX reads it (``LC_ALL``, ``LC_MESSAGES``, ``LANG``). This module is
    shipped alone as ``normlab_public.py``, where normlab's settings do not exist."""
    environ = os.environ
    tag = environ.get("NORMLAB_LANG") or _course_language
    tag = tag or environ.get("LC_ALL") or environ.get("LC_MESSAGES") or environ.get("LANG") or ""
    return "pt-BR" if tag.lower().startswith("pt") else "en"


WORDS = {
    "en": {
        "not_implemented": "NotImplementedError: a function this test calls is not implemented yet (it still raises).",
        "failed": "{failed} of {total} public tests failed:",
        "PASS": "PASS",
        "FAIL": "FAIL",
        "in_place": "{function} modified its input(s) in place ({names}): compute on a copy (for example "
        "x = x.astype(np.float32) or y = x / ...) instead of x /= ... or x *= ...",
        "input_in_place": "{function} modified its input {names} in place",
        "should_raise": "{what} should raise {exc}, and returned",
        "note_text": "the note should be a few sentences of text",
        "tuple_of": "{what} should return a tuple of {n}",
        "dict_keys": "{what} should return a dict with the keys {keys}",
        "returned": "{what} returned {got}, expected {want}",
        "not_array": "{what} should be a numpy array, but is a {type}",
        "shape_dtype": "{what} should return shape {shape} and dtype {dtype}, returned {got_shape} {got_dtype}",
        "differs": "{what} differs from the expected answer at index {where}: {got} instead of {want}",
    },
    "pt-BR": {
        "not_implemented": "NotImplementedError: uma função que este teste chama ainda não foi implementada "
        "(ela ainda lança a exceção).",
        "failed": "{failed} de {total} testes públicos falharam:",
        "PASS": "PASSOU",
        "FAIL": "FALHOU",
        "in_place": "{function} modificou a(s) sua(s) entrada(s) no lugar ({names}): calcule sobre uma cópia "
        "(por exemplo x = x.astype(np.float32) ou y = x / ...) em vez de x /= ... ou x *= ...",
        "input_in_place": "{function} modificou a sua entrada {names} no lugar",
        "should_raise": "{what} deveria lançar {exc}, e retornou",
        "note_text": "a nota deveria ter algumas frases de texto",
        "tuple_of": "{what} deveria retornar uma tupla de {n}",
        "dict_keys": "{what} deveria retornar um dict com as chaves {keys}",
        "returned": "{what} retornou {got}, o esperado é {want}",
        "not_array": "{what} deveria ser um array do numpy, mas é um {type}",
        "shape_dtype": "{what} deveria retornar shape {shape} e dtype {dtype}, retornou {got_shape} {got_dtype}",
        "differs": "{what} difere da resposta esperada no índice {where}: {got} em vez de {want}",
    },
}
"""What the kernel's public runner and plain checks say themselves, in each language (no
catalog where this module is shipped alone)."""


def _say(key: str, **params: Any) -> str:
    return WORDS[reader_language()][key].format(**params)


class PlainExpected:
    """``expected.check(student.rmsnorm, x, gamma, what=...)`` with numpy alone."""

    def __init__(self, answers: dict[str, Any]) -> None:
        self.answers = answers

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
        # The answer is looked up by the inputs as the test gave them, before the call can
        # change them in place (which is then the failure to report, not a changed test).
        entry = recorded(self.answers, function.__name__, args, kwargs)
        answer, changed = call_noting_changes(function, args, kwargs)
        if changed:
            raise PlainFailure(_say("in_place", function=function.__name__, names=", ".join(changed)))
        want, got = decode(entry["answer"]), answer
        if isinstance(want, dict) and isinstance(got, dict):
            got = {k: v for k, v in got.items() if k not in set(skip)}
        problem = _difference(got, want, what, tuple(names), 1e-9 if rel is None else rel)
        if problem:
            hints = self.answers.get("hints", {})
            matching = [h for h, c in entry["hints"] if _matches(got, decode(c))]
            texts = [hints.get(h, {}).get(reader_language(), h) for h in matching]
            raise PlainFailure("\n".join([problem, *texts]))
        return answer

    def require(self, condition: bool, message: str, **params: Any) -> None:
        if not condition:
            texts = self.answers.get("messages", {}).get(message, {})
            template = texts.get(reader_language()) or texts.get("en")
            raise PlainFailure(template.format(**params) if template else f"{message} {params}")

    @staticmethod
    def untouched(student: Any, function: str, **inputs: tuple[np.ndarray, np.ndarray]) -> None:
        changed = [name for name, (now, before) in inputs.items() if not np.array_equal(now, before)]
        if changed:
            raise PlainFailure(_say("input_in_place", function=function, names=", ".join(changed)))

    @staticmethod
    @contextlib.contextmanager
    def raises(exc_type: type[Exception], *, what: str) -> Iterator[None]:
        try:
            yield
        except exc_type:
            return
        raise PlainFailure(_say("should_raise", what=what, exc=exc_type.__name__))

    @staticmethod
    def note(note: Any, report: dict[str, Any]) -> None:
        if not isinstance(note, str) or not note.strip():
            raise PlainFailure(_say("note_text"))


def call_noting_changes(
    function: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[Any, list[str]]:
    """Call ``function``; its answer, and the array arguments it changed in place (by name)."""
    try:
        bound = inspect.signature(getattr(function, "__wrapped__", function)).bind(*args, **kwargs).arguments
    except (TypeError, ValueError):  # the call will fail on its own: name them by position
        bound = {f"argument {i + 1}": a for i, a in enumerate(args)} | dict(kwargs)
    before = {name: (value, value.copy()) for name, value in bound.items() if isinstance(value, np.ndarray)}
    answer = function(*args, **kwargs)
    return answer, [name for name, (now, then) in before.items() if not np.array_equal(now, then, equal_nan=True)]


def _matches(got: Any, candidate: Any) -> bool:
    """Whether ``got`` is what a known mistake returns (None: a part the mistake leaves right)."""
    if isinstance(candidate, tuple) and isinstance(got, (tuple, list)) and len(got) == len(candidate):
        return all(c is None or _difference(g, c, "", (), 1e-6) is None for g, c in zip(got, candidate, strict=True))
    return _difference(got, candidate, "", (), 1e-6) is None


def _difference(got: Any, want: Any, what: str, names: tuple[str, ...], rel: float) -> str | None:
    """How ``got`` differs from ``want``, in a sentence; None when it does not."""
    if isinstance(want, np.ndarray):
        return _array_difference(got, want, what)
    if isinstance(want, tuple):
        if not isinstance(got, (tuple, list)) or len(got) != len(want):
            return _say("tuple_of", what=what, n=len(want))
        labels = names or tuple(f"{what}[{i}]" for i in range(len(want)))
        parts = (_difference(g, w, label, (), rel) for g, w, label in zip(got, want, labels, strict=True))
        return next((p for p in parts if p), None)
    if isinstance(want, dict):
        if not isinstance(got, dict) or set(got) != set(want):
            return _say("dict_keys", what=what, keys=", ".join(sorted(want)))
        parts = (_difference(got[k], w, f'{what}["{k}"]', (), rel) for k, w in want.items())
        return next((p for p in parts if p), None)
    number = isinstance(got, (int, float, np.integer, np.floating)) and not isinstance(got, (bool, np.bool_))
    if isinstance(want, float):
        ok = number and (abs(float(got)) < 1e-8 if abs(want) < 1e-8 else abs(float(got) - want) <= rel * abs(want))
    elif isinstance(want, int) and not isinstance(want, bool):
        ok = number and not isinstance(got, (float, np.floating)) and got == want
    else:
        ok = type(got) is type(want) and got == want
    return None if ok else _say("returned", what=what, got=f"{got!r:.80}", want=f"{want!r:.80}")


def _array_difference(got: Any, want: np.ndarray, what: str) -> str | None:
    if not isinstance(got, np.ndarray):
        return _say("not_array", what=what, type=type(got).__name__)
    if got.shape != want.shape or got.dtype != want.dtype:
        shapes = {"shape": want.shape, "dtype": want.dtype, "got_shape": got.shape, "got_dtype": got.dtype}
        return _say("shape_dtype", what=what, **shapes)
    rtol = {"float16": 2e-3, "float32": 1e-5}.get(want.dtype.name, 1e-9)
    g, w = got.astype(np.float64), want.astype(np.float64)
    scale = float(np.sqrt(np.mean(w**2))) if w.size else 0.0
    bad = ~(np.abs(g - w) <= rtol * (np.abs(w) + scale) + 1e-12)
    if not bad.any():
        return None
    at = np.unravel_index(int(np.argmax(np.where(bad, np.abs(g - w), -1))), w.shape)
    where = tuple(int(i) for i in at)
    return _say("differs", what=what, where=where, got=f"{g[at]:.10g}", want=f"{w[at]:.10g}")


# --- running public tests in a notebook --------------------------------------------------------


def expected_here(folder: Path) -> Any:
    """normlab's checks, on normlab's own copy of the answers, when normlab is importable (so a
    submission's copy of the file never counts); else the plain ones, on ``folder``'s copy."""
    try:
        from grader.discovery import course_expected
    except ImportError:
        return PlainExpected(read_answers(folder))
    return course_expected()


def _failure_text(exc: BaseException) -> str:
    messages = getattr(exc, "messages", None)
    if messages:
        try:
            from grader.messages import render_all

            return str(render_all(messages, reader_language()))
        except ImportError:
            pass
    if isinstance(exc, NotImplementedError) and not str(exc).strip():
        return _say("not_implemented")
    if isinstance(exc, PlainFailure):  # the check's own sentence: its class is no one's business
        return str(exc).strip()
    return f"{type(exc).__name__}: {str(exc).strip()}"


def _description(test: Callable[..., None], answers: dict[str, Any]) -> str:
    """The test's docstring on one line, in the reader's language where it is translated."""
    english = " ".join((test.__doc__ or test.__name__).split())
    translated = answers.get("descriptions", {}).get(test.__name__, {}).get(reader_language())
    return str(translated or english)


def run_public(
    tests: list[Callable[..., None]], namespace: dict[str, Any], folder: Path | None = None, lang: str | None = None
) -> float:
    """Run public tests on the functions defined in ``namespace`` (a notebook's globals), print
    one line each, and return the points earned (one per test). ``lang``: the course's language."""
    global _course_language
    _course_language = lang or _course_language
    folder = Path.cwd() if folder is None else folder
    fixtures = {"student": Functions(namespace.get), "sublayer": Sublayer, "expected": expected_here(folder)}
    answers = read_answers(folder)
    earned, failures = 0, []
    for test in tests:
        doc = _description(test, answers)
        try:
            # A warning printed to stderr would make nbgrader give the whole cell zero.
            with warnings.catch_warnings(), contextlib.redirect_stderr(io.StringIO()):
                warnings.simplefilter("ignore")
                test(**{name: fixtures[name] for name in inspect.signature(test).parameters})
        except Exception as exc:
            failures.append(f"{_say('FAIL')}  {doc}\n      {_failure_text(exc)[:800]}")
            print(failures[-1])
        else:
            earned += 1
            print(f"{_say('PASS')}  {doc}")
    _tell_validate(failures, len(tests))
    return float(earned)


def _tell_validate(failures: list[str], total: int) -> None:
    """Under ``nbgrader validate`` (which sets ``NBGRADER_EXECUTION``), say what failed on
    stderr: validate shows a failing cell's stderr as its error, where it would otherwise say
    only "Partial credit". Never while grading, where stderr would zero the cell."""
    if failures and os.environ.get("NBGRADER_EXECUTION") == "validate":
        said = _say("failed", failed=len(failures), total=total)
        print(said + "\n" + "\n".join(failures), file=sys.stderr)
