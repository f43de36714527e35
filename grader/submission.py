"""Turn what a student handed in into a directory the worker can import, and nothing more.

Three shapes are accepted: a directory laid out like ``exercises/`` (one ``<module>.py`` per
exercise), a single ``.py`` file, or a notebook (``.ipynb``). Only the expected module files
are copied, as regular files read without following symlinks, so a ``conftest.py``,
``sitecustomize.py`` or ``numpy.py`` shipped beside them never reaches the worker.
"""

from __future__ import annotations

import difflib
import itertools
import json
import os
import re
import shutil
import stat
import tempfile
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from grader import notebook, script
from grader.course import DATA, MODULE_OF, MODULES, exercises_dir
from grader.messages import Message
from grader.notebook import CodeCell, NotebookUnreadable

MAX_MODULE_BYTES = 2 << 20
SINGLE_MODULE = "submission"
CELLS_FILE = "cells.json"
"""A notebook's code cells as the worker runs them, written next to the module files."""


MAX_NOTES = 30
"""Notes shown per submission: a notebook of thousands of cells must not make a report of
thousands of lines (the rest are counted)."""


def capped(notes: list[Message]) -> tuple[Message, ...]:
    """The first notes, and one more saying how many were left out."""
    if len(notes) <= MAX_NOTES:
        return tuple(notes)
    return (*notes[:MAX_NOTES], Message("submission.more_notes", {"count": len(notes) - MAX_NOTES}))


class SubmissionError(Exception):
    """The path cannot be graded at all (it does not exist, or is of an unknown kind)."""


@dataclass
class Prepared:
    """A submission copied into a private directory, ready to be mounted into a worker."""

    origin: str
    directory: Path
    kind: str
    """``directory``, ``file`` or ``notebook``."""
    single: str | None
    """The one module defining everything (file and notebook), or None (directory)."""
    present: set[str] = field(default_factory=set)
    """Modules that exist in the submission."""
    notes: list[Message] = field(default_factory=list)
    unreadable: Message | None = None
    """Set when nothing in the submission can be imported; every test gets this message."""
    cells: list[CodeCell] = field(default_factory=list)
    """A notebook's code cells, in the order the worker runs them (``cells.json``)."""
    skip_cells: dict[int, str] = field(default_factory=dict)
    """Cells not to run again, and why: they ran past their time or stopped the process."""

    def setup(self) -> dict[str, object]:
        """The worker's setup message (its ``directory`` is filled in by the launcher)."""
        setup: dict[str, object] = {"modules": dict(MODULE_OF), "single": self.single, "data": list(DATA)}
        if self.kind == "notebook" and self.unreadable is None:
            setup |= {"cells": CELLS_FILE, "skip_cells": sorted(self.skip_cells)}
        return setup

    def cleanup(self) -> None:
        shutil.rmtree(self.directory, ignore_errors=True)


def _read_regular(path: Path | str, limit: int, dir_fd: int | None = None) -> bytes | None:
    """Read a regular file without following a symlink; None if it is anything else."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=dir_fd)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        with os.fdopen(fd, "rb", closefd=False) as handle:
            return handle.read(limit + 1)
    finally:
        os.close(fd)


def _write(directory: Path, name: str, data: bytes) -> None:
    target = directory / name
    target.write_bytes(data)
    target.chmod(0o644)


def prepare(path: str | Path) -> Prepared:
    """Copy the gradable parts of a submission into a fresh world-readable directory."""
    origin = Path(path)
    if not origin.exists():
        raise SubmissionError(f"{origin} does not exist")
    directory = Path(tempfile.mkdtemp(prefix="normlab-sub-"))
    directory.chmod(0o755)
    try:
        if origin.is_dir():
            prepared = _prepare_directory(origin, directory)
        elif origin.suffix == ".py":
            prepared = _prepare_py(origin, directory)
        elif origin.suffix == ".ipynb":
            prepared = _prepare_notebook(origin, directory)
        else:
            raise SubmissionError(f"{origin} is not a directory, a .py file or a .ipynb notebook")
        _copy_course_data(directory)
    except BaseException:
        shutil.rmtree(directory, ignore_errors=True)
        raise
    return prepared


def _copy_course_data(directory: Path) -> None:
    """The public data that ships beside the lab (the config bank), for relative paths."""
    for name in DATA:
        if (exercises_dir() / name).is_dir():
            shutil.copytree(exercises_dir() / name, directory / name)
            for path in (directory / name).rglob("*"):
                path.chmod(0o755 if path.is_dir() else 0o644)
            (directory / name).chmod(0o755)


def _prepare_directory(origin: Path, directory: Path) -> Prepared:
    prepared = Prepared(str(origin), directory, "directory", None)
    try:
        # The directory itself must not be a symlink either (it could point at the reference);
        # the modules are then opened relative to it, never by a path that could be swapped.
        dir_fd = os.open(origin, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError:
        prepared.notes.append(Message("submission.directory_unreadable", {"path": origin.name}))
        dir_fd = -1
    try:
        _copy_modules(prepared, directory, dir_fd)
    finally:
        if dir_fd >= 0:
            os.close(dir_fd)
    return prepared


def _copy_modules(prepared: Prepared, directory: Path, dir_fd: int) -> None:
    for module in MODULES:
        data = _read_regular(f"{module}.py", MAX_MODULE_BYTES, dir_fd) if dir_fd >= 0 else None
        if data is None:
            prepared.notes.append(Message("submission.module_missing", {"module": f"{module}.py"}))
        elif len(data) > MAX_MODULE_BYTES:
            prepared.notes.append(
                Message("submission.module_too_large", {"module": f"{module}.py", "limit": MAX_MODULE_BYTES})
            )
        else:
            _write(directory, f"{module}.py", data)
            prepared.present.add(module)


def _prepare_single(origin: Path, directory: Path, kind: str, data: bytes | None) -> Prepared:
    prepared = Prepared(str(origin), directory, kind, SINGLE_MODULE)
    if data is None or len(data) > MAX_MODULE_BYTES:
        prepared.unreadable = Message("submission.file_unreadable", {"path": origin.name})
        return prepared
    _write(directory, f"{SINGLE_MODULE}.py", data)
    prepared.present.add(SINGLE_MODULE)
    return prepared


def _prepare_py(origin: Path, directory: Path) -> Prepared:
    """A module, or a notebook downloaded as a ``.py`` file: without what only a notebook runs."""
    data = _read_regular(origin, MAX_MODULE_BYTES)
    module = downloaded_module(data)
    if module is None:
        prepared = _prepare_single(origin, directory, "file", data)
        if prepared.unreadable is None and data is not None and script.too_large_download(data):
            said = {"file": origin.name, "limit": notebook.MAX_PARSED_CHARS}
            prepared.notes.append(Message("submission.notebook_script_too_large", said))
        return prepared
    prepared = _prepare_single(origin, directory, "file", module.encode("utf-8", "surrogatepass"))
    prepared.notes.insert(0, Message("submission.notebook_script", {"file": origin.name}))
    # Only the lab's own function names are said: any other name is the student's text.
    hidden_away = [name for name in script.cell_magic_functions(data or b"") if name in MODULE_OF]
    if hidden_away:
        said = {"file": origin.name, "functions": ", ".join(dict.fromkeys(hidden_away))}
        prepared.notes.insert(1, Message("submission.script_cell_magic", said))
    return prepared


def downloaded_module(data: bytes | None) -> str | None:
    """A ``.py`` file's bytes (as read, up to one byte past the limit) as the module a notebook's
    download is meant to be (:func:`script.plain_module`); None for any other file."""
    return script.plain_module(data) if data is not None and len(data) <= MAX_MODULE_BYTES else None


def _prepare_notebook(origin: Path, directory: Path) -> Prepared:
    """A notebook: its code cells, prepared to run in order as Jupyter runs them."""
    prepared = Prepared(str(origin), directory, "notebook", SINGLE_MODULE)
    raw = _read_regular(origin, notebook.MAX_NOTEBOOK_BYTES + 1)
    if raw is None:
        prepared.unreadable = Message("submission.file_unreadable", {"path": origin.name})
        return prepared
    try:
        read = notebook.read(raw)
    except NotebookUnreadable as exc:
        prepared.unreadable = exc.message
        return prepared
    cells = [{"number": cell.number, "code": cell.code} for cell in read.cells]
    _write(directory, CELLS_FILE, json.dumps(cells).encode())
    prepared.cells, prepared.notes = read.cells, list(read.notes)
    prepared.present.add(SINGLE_MODULE)
    return prepared


_DEFINED = re.compile(r"^(?:(?:async[ \t]+)?def[ \t]+(\w+)|(\w+)[ \t]*(?::[^=\n]*)?=[^=])", re.MULTILINE)


def misspelled(prepared: Prepared) -> list[Message]:
    """A note for each graded function the code never defines while it defines a name close
    to it (``rmsnrom``): the tests call functions by name, so the report says "not defined" for
    a function the student did write. Read from the code handed in, never from a run; the
    released code's own helpers (``_sublayers``) are no misspelling, and in a folder only the
    function's own module is looked in."""
    if prepared.kind == "notebook":
        code = "\n".join(cell.code for cell in prepared.cells)
        defined = dict.fromkeys(MODULES, _defined(code))
    elif prepared.kind == "file":
        defined = dict.fromkeys(MODULES, _defined(_text(prepared.directory / f"{prepared.single}.py")))
    else:
        defined = {module: _defined(_text(prepared.directory / f"{module}.py")) for module in MODULES}
    notes = []
    for function, module in sorted(MODULE_OF.items()):
        if function in defined[module] or len(defined[module]) >= MISSPELLING_NAMES:
            continue
        names = sorted(defined[module] - set(MODULE_OF) - _released_names())
        close = difflib.get_close_matches(function, names, n=1, cutoff=0.8)
        if close:
            notes.append(Message("submission.misspelled", {"function": function, "defined": close[0]}))
    return notes


MISSPELLING_NAMES = 5_000
"""Names past which code is not looked in for misspellings: a lab defines a few hundred, and
comparing each missing function with each of millions of names (a 30 MB notebook of ``x1 = 1``
lines) held the grader for minutes."""


def _defined(code: str) -> set[str]:
    """The names ``code`` defines at the left of a line, at most ``MISSPELLING_NAMES`` of them."""
    found = (name for match in _DEFINED.finditer(code) for name in match.groups() if name)
    return set(itertools.islice(found, MISSPELLING_NAMES))


@cache
def _released_names() -> frozenset[str]:
    """The names the released exercise files define (their helpers, their constants)."""
    return frozenset().union(*(_defined(_text(exercises_dir() / f"{m}.py")) for m in MODULES))


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")[:MAX_MODULE_BYTES]
    except OSError:
        return ""
