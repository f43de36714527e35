"""Worker slots: one per concurrent grading on this host, each with its own unprivileged uid.

A slot is a lock file held with ``flock`` for as long as one grading uses it. The kernel drops
the lock when its holder exits, however it exits, so a killed grader never leaks a slot. Every
way of grading claims its slot here (the CLI, the local pool, Dask workers), so no two
concurrent gradings on a host ever share a uid or its ``RLIMIT_NPROC`` (as in isolate's boxes
and DOMjudge's per-core users).

The lock directory belongs to the grader's user: ``/run/normlab/slots`` when running as root,
else a private directory under ``$XDG_RUNTIME_DIR`` or ``/tmp``. A directory that is a symlink
or owned by someone else is refused, so another user cannot steer which slot we take.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import stat
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

from grader.faults import GraderFault

MAX_SLOTS = 256


def default_directory() -> Path:
    if os.geteuid() == 0 and Path("/run").is_dir():
        return Path("/run/normlab/slots")
    base = os.environ.get("XDG_RUNTIME_DIR") or tempfile.gettempdir()
    return Path(base) / f"normlab-slots-{os.geteuid()}"


def _private_directory(path: Path) -> Path:
    """``path``, created if missing, checked to be a real directory that only we can write."""
    path.mkdir(mode=0o755, parents=True, exist_ok=True)
    info = os.lstat(path)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid() or info.st_mode & 0o022:
        raise GraderFault(f"the slot directory {path} is not a private directory of this user; remove it")
    return path


class Slot:
    """A claimed slot; ``release()`` (or exiting the process) frees it."""

    def __init__(self, number: int, fd: int) -> None:
        self.number = number
        self._fd = fd

    def release(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)  # closing the descriptor drops the flock
            self._fd = -1

    def __enter__(self) -> Slot:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def claim(directory: Path | None = None, count: int = MAX_SLOTS) -> Slot:
    """The lowest free slot. Raises :class:`GraderFault` when all ``count`` are taken."""
    folder = _private_directory(directory or default_directory())
    for number in range(count):
        fd = os.open(folder / f"slot-{number}.lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue
        return Slot(number, fd)
    raise GraderFault(f"all {count} worker slots of this host are in use ({folder})")


_HELD: dict[Path, list[Slot]] = {}
"""Slots this process holds between two of its gradings, by lock directory: a slot's warm
sandbox (``zygote.py``) lives only while the process that started it holds the slot."""
_HELD_LOCK = threading.Lock()


@contextlib.contextmanager
def lease(directory: Path | None = None, count: int = MAX_SLOTS) -> Iterator[Slot]:
    """A slot for one grading: one this process already holds and is not using, else a newly
    claimed one. It stays held when the grading ends (the process's exit frees it), so the
    next grading in this process finds the slot's warm sandbox ready."""
    folder = directory or default_directory()
    with _HELD_LOCK:
        idle = _HELD.setdefault(folder, [])
        slot = idle.pop() if idle else None
    if slot is None:
        slot = claim(folder, count)
    try:
        yield slot
    finally:
        with _HELD_LOCK:
            _HELD[folder].append(slot)
