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


def _digest(value: Any, h: Any) -> bool:
    """Feed ``value`` into the hash ``h``; False when it is not a value to key a cache on."""
    if isinstance(value, np.ndarray):
        if value.dtype.hasobject:
            return False
        h.update(repr(("array", value.dtype.str, value.shape)).encode())
        h.update(np.ascontiguousarray(value).tobytes())
        return True
    if isinstance(value, WireCallable):
        h.update(repr(("callable", value.kind)).encode())
        return _digest(value.params, h)
    if isinstance(value, WireFile):
        h.update(repr(("file", value.name, value.text)).encode())
        return True
    if isinstance(value, dict):
        h.update(repr(("dict", len(value))).encode())
        return all(_digest(k, h) and _digest(v, h) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        h.update(repr((type(value).__name__, len(value))).encode())
        return all(_digest(v, h) for v in value)
    if value is None or isinstance(value, (bool, int, float, str, np.generic)):
        h.update(repr((type(value).__name__, value)).encode())
        return True
    return False


def call_key(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> bytes | None:
    """A digest of one reference call, or None when an argument cannot be keyed."""
    h = hashlib.blake2b(name.encode(), digest_size=20)
    return h.digest() if _digest(list(args), h) and _digest(kwargs, h) else None


class Reference:
    """Calls the reference the way the student proxy calls the student.

    Arguments are copied (so a test's inputs stay pristine), sublayer descriptions become
    functions and file arguments become real files, exactly as in the worker.
    """

    def __init__(self, directory: Path) -> None:
        self._functions = _import_solutions(directory)
        self._scratch_dir: Path | None = None
        self._answers: dict[bytes, Any] = {}
        """Answers by :func:`call_key`: the reference is a pure function of its inputs, so each
        is computed once per process, not once per submission; copies are handed out."""

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
            return str(path)
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
                return copy.deepcopy(self._answers[key])
            answer = function(*self._convert(list(args)), **self._convert(kwargs))
            if key is not None and len(self._answers) < CACHED_CALLS:
                self._answers[key] = copy.deepcopy(answer)
            return answer

        call.__name__ = name
        return call

    def close(self) -> None:
        """Remove the scratch files written for file arguments (they hold hidden inputs)."""
        if self._scratch_dir is not None:
            shutil.rmtree(self._scratch_dir, ignore_errors=True)
            self._scratch_dir = None
