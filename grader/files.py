"""Reading what a student handed in: regular files only, never through a symbolic link at any
depth, and sized before they are read.

A student's folder may hold links to the instructor's files (the reference notebook, another
student's folder) or a sparse file of many gigabytes. Every path below a trusted root is walked
one component at a time with ``O_NOFOLLOW``, so no link is followed anywhere on the way, and a
file is measured with ``fstat`` before a byte of it is read.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path, PurePosixPath

DIRECTORY_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


class Unreadable(Exception):
    """A path that is not what it should be (a link, a missing file, too large, not regular)."""


def _open_directory(root: Path, parts: tuple[str, ...]) -> int:
    """A descriptor of ``root/parts...``, every component opened without following links."""
    fd = os.open(root, DIRECTORY_FLAGS)
    try:
        for part in parts:
            if part in ("", ".", "..") or "/" in part:
                raise Unreadable(f"{part!r} is not a plain name")
            child = os.open(part, DIRECTORY_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = child
    except OSError as exc:
        os.close(fd)
        raise Unreadable(f"{'/'.join(parts)} is not a directory of its own ({exc.strerror})") from None
    except BaseException:
        os.close(fd)
        raise
    return fd


def read(root: Path, relative: str, limit: int) -> bytes:
    """The bytes of the regular file ``root/relative``. Raises :class:`Unreadable` when any
    component is a link, the file is not regular, has other names (hard links, which could be
    the instructor's own files), or is larger than ``limit``."""
    *folders, name = PurePosixPath(relative).parts
    fd = _open_directory(root, tuple(folders))
    try:
        try:
            file = os.open(name, FILE_FLAGS, dir_fd=fd)
        except OSError as exc:
            raise Unreadable(f"{relative} cannot be opened as a plain file ({exc.strerror})") from None
    finally:
        os.close(fd)
    info = os.fstat(file)
    if not stat.S_ISREG(info.st_mode):  # a folder: fdopen would say "Is a directory: <fd>"
        os.close(file)
        raise Unreadable(f"{relative} is not a regular file")
    with os.fdopen(file, "rb") as handle:
        if info.st_nlink > 1:
            raise Unreadable(f"{relative} has other names (hard links); copy the file instead")
        if info.st_size > limit:
            raise Unreadable(f"{relative} is larger than {limit} bytes")
        return handle.read(limit + 1)[:limit]


def entries(root: Path, relative: str = "", names: tuple[str, ...] | None = None) -> dict[str, str]:
    """The entries of the directory ``root/relative``: name -> ``dir``, ``file`` or ``other``
    (links are ``other``: they are never followed). With ``names``, only those of them that
    exist, each looked up alone: a student's folder may hold hundreds of thousands of files,
    and listing them all cost a class run seconds (trial 62)."""
    parts = PurePosixPath(relative).parts if relative else ()
    fd = _open_directory(root, tuple(parts))
    try:
        kinds = {}
        for name in os.listdir(fd) if names is None else names:
            try:
                mode = os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode
            except FileNotFoundError:
                continue  # one of ``names`` that is not there (a listed one gone since)
            kinds[name] = "dir" if stat.S_ISDIR(mode) else "file" if stat.S_ISREG(mode) else "other"
        return kinds
    finally:
        os.close(fd)
