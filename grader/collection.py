"""The suites' tests, collected without a pytest session.

The suites are pytest files (plain ``test_*`` functions, ``@pytest.mark.points``), and pytest
runs them as they are. The grader calls their functions itself (``plugin.py``), so all it needs
of a collection is each file imported and its test functions in order with their marks: done
here, that takes a tenth of what a pytest session's configuration and collection took (about
85 ms of a one-off ``normlab grade``, 40 ms of a ``normlab check``). A ``-k`` expression still
goes through pytest (``sessions.py``), which alone knows its grammar.

A file that holds ``assert`` statements is rewritten as pytest rewrites it, so that a failed
public assert explains itself as it would under pytest.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.util
import inspect
import sys
import traceback
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any


@dataclass(frozen=True)
class Collected:
    """One test function of a suite file: what the grading plugin reads of pytest's items."""

    path: Path
    name: str
    obj: Callable[..., Any]
    marks: tuple[Any, ...]
    """The function's pytest marks, then its module's (``pytestmark``)."""

    def iter_markers(self, name: str) -> Iterator[Any]:
        return (mark for mark in self.marks if getattr(mark, "name", None) == name)


def collect(files: list[Path]) -> tuple[list[Collected], list[str]]:
    """Every test function of ``files``, in file order and then in the order each file defines
    them (as pytest collects them), and what failed to import."""
    items: list[Collected] = []
    faults: list[str] = []
    for path in files:
        try:
            module = _imported(path)
        except Exception:  # the suite's own error, or ours: no grading can go on without it
            faults.append(f"collecting {path} failed:\n{traceback.format_exc()[-3000:]}")
            continue
        module_marks = _marks(getattr(module, "pytestmark", []))
        for name, obj in vars(module).items():
            if name.startswith("test_") and inspect.isfunction(obj):
                items.append(Collected(path, name, obj, (*_marks(getattr(obj, "pytestmark", [])), *module_marks)))
    return items, faults


def _marks(found: Any) -> tuple[Any, ...]:
    return tuple(found) if isinstance(found, list | tuple) else (found,)


def _imported(path: Path) -> ModuleType:
    """The suite file as a fresh module, under a name of its own (two files may share a stem)."""
    name = f"normlab_suite_{path.stem}_{hashlib.sha256(str(path).encode()).hexdigest()[:12]}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"{path} cannot be imported")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    source = path.read_bytes()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # as the pytest session ran them
        if b"assert" in source:
            exec(_rewritten(source, path), module.__dict__)
        else:
            spec.loader.exec_module(module)  # Python's own bytecode cache serves the next run
    return module


def _rewritten(source: bytes, path: Path) -> Any:
    """The file compiled with pytest's assertion rewriting, when it holds an ``assert``."""
    from _pytest.assertion.rewrite import rewrite_asserts

    tree = ast.parse(source, str(path))
    if any(isinstance(node, ast.Assert) for node in ast.walk(tree)):
        rewrite_asserts(tree, source, str(path))
    return compile(tree, str(path), "exec", dont_inherit=True)
