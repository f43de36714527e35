"""Turn what a student handed in into a directory the worker can import, and nothing more.

Three shapes are accepted: a directory laid out like ``exercises/`` (one ``<module>.py`` per
exercise), a single ``.py`` file, or a notebook (``.ipynb``). Only the expected module files
are copied, as regular files read without following symlinks, so a ``conftest.py``,
``sitecustomize.py`` or ``numpy.py`` shipped beside them never reaches the worker.
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from grader.course import MODULE_OF, MODULES
from grader.messages import Message
from grader.notebook import NotebookUnreadable, extract

MAX_MODULE_BYTES = 2 << 20
SINGLE_MODULE = "submission"


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

    def setup(self) -> dict[str, object]:
        """The worker's setup message (its ``directory`` is filled in by the launcher)."""
        return {"modules": dict(MODULE_OF), "single": self.single}

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
            prepared = _prepare_single(origin, directory, "file", _read_regular(origin, MAX_MODULE_BYTES))
        elif origin.suffix == ".ipynb":
            prepared = _prepare_notebook(origin, directory)
        else:
            raise SubmissionError(f"{origin} is not a directory, a .py file or a .ipynb notebook")
    except BaseException:
        shutil.rmtree(directory, ignore_errors=True)
        raise
    return prepared


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


def _prepare_notebook(origin: Path, directory: Path) -> Prepared:
    raw = _read_regular(origin, 8 << 20)
    if raw is None:
        return _prepare_single(origin, directory, "notebook", None)
    try:
        extracted = extract(raw)
    except NotebookUnreadable as exc:
        prepared = Prepared(str(origin), directory, "notebook", SINGLE_MODULE)
        prepared.unreadable = exc.message
        return prepared
    prepared = _prepare_single(origin, directory, "notebook", extracted.source.encode())
    prepared.notes.extend(extracted.notes)
    return prepared
