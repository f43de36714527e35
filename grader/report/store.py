"""Reports on disk: an exact JSON round trip, written atomically.

A batch writes each finished grading at once, as its own file, through a temporary file and
``os.replace``: a crash or Ctrl-C at any moment leaves either the old file or the new one,
never half of one, so an interrupted batch resumes without regrading what finished.
"""

from __future__ import annotations

import contextlib
import glob
import hashlib
import json
import os
import tempfile
from pathlib import Path

from grader.model import Report
from grader.report.encoding import report_from_data, report_to_data


def remove_leftovers(path: Path) -> None:
    """Remove the temporary files a write of ``path`` killed half-way left (SIGKILL skips the
    cleanup of :func:`write_atomic`). Only for files one class run writes, under its run lock:
    nbgrader's ``generate_feedback`` copied such a leftover to the student (instructor trial 34)."""
    for stale in path.parent.glob(f".{glob.escape(path.name)}.*.tmp"):
        with contextlib.suppress(OSError):
            stale.unlink()


def write_atomic(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` in one step (same directory, then ``os.replace``).

    Any Python string can be written: a lone surrogate (from a student's print, answer or file
    name) is escaped as ``\\udXXX`` instead of stopping the write."""
    tmp = write_staged(path, text)
    try:
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_staged(path: Path, text: str, mode: int = 0o600) -> Path:
    """``text`` written in full beside ``path`` under a temporary name, for ``os.replace`` once
    what it goes with is written too; the caller removes it if that never comes."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", errors="backslashreplace") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return Path(tmp)


def save_report(path: Path, report: Report, key: str) -> None:
    """Store a report with the key (a hash of the submission) it was graded from."""
    write_atomic(path, json.dumps({"key": key, "report": report_to_data(report)}, ensure_ascii=False))


def load_report(path: Path, key: str) -> Report | None:
    """The stored report if it exists, is readable and was graded from ``key``; else None."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return report_from_data(data["report"]) if data.get("key") == key else None
    except (OSError, ValueError, KeyError, TypeError):
        return None


def key_of(*parts: bytes) -> str:
    """A hash of what was handed in (its parts in order, each delimited), to tell a submission
    that changed from one already graded."""
    h = hashlib.sha256()
    for part in parts:
        h.update(len(part).to_bytes(8, "big") + part)
    return h.hexdigest()
