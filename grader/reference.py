"""The reference solution, loaded only into the trusted process, for the hidden suites.

The solution modules import each other by plain name (``from rmsnorm import rmsnorm``), as
the students' do. They are imported with ``solutions/`` briefly first on ``sys.path`` and then
removed from ``sys.modules`` again, so that nothing else in this process can pick them up by
name; the functions keep working through their own module globals.
"""

from __future__ import annotations

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


class Reference:
    """Calls the reference the way the student proxy calls the student.

    Arguments are copied (so a test's inputs stay pristine), sublayer descriptions become
    functions and file arguments become real files, exactly as in the worker.
    """

    def __init__(self, directory: Path) -> None:
        self._functions = _import_solutions(directory)
        self._scratch = Path(tempfile.mkdtemp(prefix="normlab-ref-"))

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
            return function(*self._convert(list(args)), **self._convert(kwargs))

        call.__name__ = name
        return call

    def close(self) -> None:
        """Remove the scratch files written for file arguments (they hold hidden inputs)."""
        shutil.rmtree(self._scratch, ignore_errors=True)
