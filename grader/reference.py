"""The reference solution, loaded only into the trusted process, for the hidden suites.

The solution modules import each other by plain name (``from rmsnorm import rmsnorm``), as
the students' do. They are imported with ``solutions/`` briefly first on ``sys.path`` and then
removed from ``sys.modules`` again, so that nothing else in this process can pick them up by
name; the functions keep working through their own module globals.
"""

from __future__ import annotations

import copy
import hashlib
import importlib
import io
import os
import pickle
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from grader.course import EXERCISES, MODULE_OF
from grader.faults import GraderFault
from grader.sandbox.inside import callables
from grader.sandbox.inside.wire import WireCallable, WireFile


def _import_solutions(directory: Path) -> dict[str, Any]:
    saved_path = list(sys.path)
    saved_modules = {name: sys.modules.pop(name) for name in EXERCISES if name in sys.modules}
    try:
        sys.path.insert(0, str(directory))
        modules = {name: importlib.import_module(name) for name in EXERCISES}
        return {fn: getattr(modules[mod], fn) for fn, mod in MODULE_OF.items()}
    except Exception as exc:
        raise GraderFault(f"the reference solution in {directory} does not import: {exc!r}") from exc
    finally:
        sys.path[:] = saved_path
        for name in EXERCISES:
            sys.modules.pop(name, None)
        sys.modules.update(saved_modules)


CACHED_CALLS = 8192
"""Reference answers kept per process: a grading of the lab makes a few hundred calls, the same
ones for every submission (the suites' inputs come from fixed seeds)."""


class _Unkeyable(Exception):
    """An argument that is not data to key a cache on."""


class _Array:
    """Stands for an array in a call's key: its dtype, shape and bytes in C order."""


class _Scalar:
    """Stands for a numpy scalar in a call's key: its dtype and bytes."""


class _Callable:
    """Stands for a sublayer description in a call's key: its kind and parameters."""


class _File:
    """Stands for a file argument in a call's key: its name and text."""


_MARKS = (_Array, _Scalar, _Callable, _File)
_PLAIN = frozenset({type(None), bool, int, float, complex, str, bytes, list, tuple, dict})


class _KeyPickler(pickle.Pickler):
    """Pickles a call's arguments as the material of its key. The containers and plain values
    are written by pickle's own C code (walking them in Python cost more than computing some
    answers); every other value comes through :meth:`reducer_override`, which writes the data
    types the suites pass as their data and refuses anything else (an object array holds
    pointers; an unknown object may pickle only part of what the reference would see)."""

    def reducer_override(self, obj: Any) -> Any:
        if type(obj) in _PLAIN or any(obj is mark for mark in _MARKS):
            return NotImplemented  # pickle's own format (a mark: by its name)
        if isinstance(obj, np.ndarray) and not obj.dtype.hasobject:
            # Out of band: the array's memory is hashed where it is, not copied into the stream.
            return _Array, (obj.dtype.str, obj.shape, pickle.PickleBuffer(np.ascontiguousarray(obj).data))
        if isinstance(obj, np.generic) and not obj.dtype.hasobject:
            return _Scalar, (obj.dtype.str, obj.tobytes())
        if isinstance(obj, WireCallable):
            return _Callable, (obj.kind, obj.params)
        if isinstance(obj, WireFile):
            return _File, (obj.name, obj.text, obj.as_path)
        raise _Unkeyable(type(obj).__name__)


def call_key(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> bytes | None:
    """A digest of one reference call, or None when an argument cannot be keyed. The arrays'
    bytes follow the stream in its order; their dtypes and shapes in it fix where each ends.
    SHA-256: the CPU's own instructions hash it at twice blake2b's speed (a grading of the lab
    hashes ~9 MB of arguments)."""
    buffer = io.BytesIO()
    arrays: list[pickle.PickleBuffer] = []
    try:
        _KeyPickler(buffer, protocol=5, buffer_callback=arrays.append).dump((name, list(args), kwargs))
    except (_Unkeyable, pickle.PicklingError, TypeError, ValueError, RecursionError, BufferError):
        return None
    digest = hashlib.sha256(buffer.getbuffer())
    for array in arrays:
        digest.update(array.raw())
    return digest.digest()


_IMMUTABLE = frozenset({type(None), bool, int, float, complex, str, bytes})


def fresh_copy(value: Any) -> Any:
    """A copy that its user may change freely: ``copy.deepcopy`` for plain data (arrays,
    numbers, strings, and lists, tuples and dicts of them: a reference answer, a student's answer
    as the wire decodes it, a config) at a fraction of its cost; anything else through
    ``deepcopy`` itself."""
    kind = type(value)
    if kind in _IMMUTABLE or isinstance(value, np.generic):
        return value
    if kind is np.ndarray and not value.dtype.hasobject:
        return value.copy(order="K")  # its memory layout too, as deepcopy keeps it
    if kind is tuple or kind is list:
        return kind(fresh_copy(v) for v in value)
    if kind is dict:
        return {k: fresh_copy(v) for k, v in value.items()}
    return copy.deepcopy(value)


class AnswerFile:
    """A process's reference answers kept on disk for the next process, so that a one-off
    ``normlab grade`` (or a pool process's first grading) does not compute them again (~0.2 s of
    a grading's CPU). The answers hold hidden values: the file lives beside the hidden suites
    (``suites/__pycache__``, left out of the student copy and of the wheel like the suites'
    compiled files), readable by its owner only. Its name is a digest of everything an answer
    depends on (the reference solution's files, how arguments are rebuilt, the interpreter and
    numpy versions): a change to any of them reads no stale answer. Any problem reading or
    writing it only means the answers are computed, as without it."""

    def __init__(self, directory: Path, solutions: Path) -> None:
        self.directory = directory
        self.path = directory / f"reference-answers-{identity(solutions)}.pickle"

    def load(self) -> dict[bytes, Any]:
        try:
            with self.path.open("rb") as handle:
                info = os.fstat(handle.fileno())
                if info.st_uid != os.getuid() or info.st_mode & 0o022:
                    return {}  # written by someone else, or writable by others: not ours to trust
                answers = pickle.load(handle)
        except Exception:  # absent, torn or unreadable: computed again
            return {}
        ok = isinstance(answers, dict) and all(isinstance(k, bytes) for k in answers)
        return answers if ok else {}

    def save(self, answers: dict[bytes, Any]) -> None:
        tmp = None
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            for stale in self.directory.glob("reference-answers-*.pickle"):
                if stale != self.path:
                    stale.unlink(missing_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.directory, prefix=".reference-answers-", suffix=".tmp")
            with os.fdopen(fd, "wb") as handle:
                pickle.dump(answers, handle, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(tmp, self.path)
        except Exception:  # a read-only install, a full disk: the next process computes them
            if tmp is not None:
                Path(tmp).unlink(missing_ok=True)


class _Uncached:
    """See :attr:`Reference.uncached`."""

    def __init__(self, reference: Reference) -> None:
        self._reference = reference

    def __getattr__(self, name: str) -> Any:
        ref = self._reference
        if name.startswith("_") or name not in ref._functions:
            raise AttributeError(name)
        function = ref._functions[name]
        return lambda *args, **kwargs: function(*ref._convert(list(args)), **ref._convert(kwargs))


def identity(solutions: Path) -> str:
    """A digest of what the reference answers depend on (see :class:`AnswerFile`)."""
    h = hashlib.blake2b(repr((sys.version, np.__version__)).encode(), digest_size=16)
    named = [(p.name, p) for p in (Path(__file__), Path(callables.__file__))]
    files = sorted(p for p in solutions.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
    named += [(p.relative_to(solutions).as_posix(), p) for p in files]
    for name, path in named:
        data = path.read_bytes()
        h.update(repr((name, len(data))).encode())
        h.update(data)
    return h.hexdigest()


class Reference:
    """Calls the reference the way the student proxy calls the student.

    Arguments are copied (so a test's inputs stay pristine), sublayer descriptions become
    functions and file arguments become real files, exactly as in the worker.
    """

    def __init__(self, directory: Path, kept: AnswerFile | None = None) -> None:
        self._functions = _import_solutions(directory)
        self._scratch_dir: Path | None = None
        self._kept = kept
        self._answers: dict[bytes, Any] = kept.load() if kept is not None else {}
        """Answers by :func:`call_key`: the reference is a pure function of its inputs, so each
        is computed once per process, not once per submission; copies are handed out."""
        self._saved = len(self._answers)

    @property
    def _scratch(self) -> Path:
        """Where file arguments are written: made on first use after each :meth:`close`, so one
        Reference serves every grading of a process."""
        if self._scratch_dir is None:
            self._scratch_dir = Path(tempfile.mkdtemp(prefix="normlab-ref-"))
        return self._scratch_dir

    def converted(self, value: Any) -> Any:
        """``value`` as the reference receives it: copied, sublayers and files made real."""
        return self._convert(value)

    def _convert(self, value: Any) -> Any:
        if isinstance(value, WireCallable):
            return callables.Recorded(value.kind, value.params)
        if isinstance(value, WireFile):
            path = Path(tempfile.mkdtemp(dir=self._scratch)) / Path(value.name).name
            path.write_text(value.text, encoding="utf-8")
            return path if value.as_path else str(path)
        if isinstance(value, np.ndarray):
            return value.copy()
        if isinstance(value, dict):
            return {k: self._convert(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return type(value)(self._convert(v) for v in value)
        return value

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_") or name not in self._functions:
            raise AttributeError(name)
        function = self._functions[name]

        def call(*args: Any, **kwargs: Any) -> Any:
            key = call_key(name, args, kwargs)
            if key is not None and key in self._answers:
                return fresh_copy(self._answers[key])
            answer = function(*self._convert(list(args)), **self._convert(kwargs))
            if key is not None and len(self._answers) < CACHED_CALLS:
                self._answers[key] = fresh_copy(answer)
            return answer

        call.__name__ = name
        return call

    @property
    def uncached(self) -> _Uncached:
        """The reference for arguments a student chose (``uncached.forward(...)``): answered but
        never kept, so a student's data cannot fill the cache every later grading loads."""
        return _Uncached(self)

    def close(self) -> None:
        """Remove the scratch files written for file arguments (they hold hidden inputs); keep
        the answers for the next process if this grading computed new ones."""
        if self._scratch_dir is not None:
            shutil.rmtree(self._scratch_dir, ignore_errors=True)
            self._scratch_dir = None
        if self._kept is not None and len(self._answers) > self._saved:
            self._kept.save(self._answers)
            self._saved = len(self._answers)
