"""Reports on disk: an exact JSON round trip, written atomically.

A batch writes each finished grading at once, as its own file, through a temporary file and
``os.replace``: a crash or Ctrl-C at any moment leaves either the old file or the new one,
never half of one, so an interrupted batch resumes without regrading what finished.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from grader.messages import Message
from grader.model import CheckResult, Report, Status, Visibility

FORMAT = 1


def _message(m: Message) -> dict[str, Any]:
    return {"id": m.id, "params": m.params}


def report_to_data(report: Report) -> dict[str, Any]:
    """Everything in the report, as JSON-compatible data."""
    return {
        "format": FORMAT,
        "submission": report.submission,
        "suites": list(report.suites),
        "isolation": list(report.isolation),
        "missing_layers": list(report.missing_layers),
        "notes": [_message(n) for n in report.notes],
        "worker_uid": report.worker_uid,
        "seconds": report.seconds,
        "results": [
            {
                "name": r.name,
                "exercise": r.exercise,
                "description": r.description,
                "visibility": r.visibility.value,
                "status": r.status.value,
                "score": r.score,
                "max_score": r.max_score,
                "messages": [_message(m) for m in r.messages],
                "student_output": r.student_output,
                "seconds": r.seconds,
            }
            for r in report.results
        ],
    }


def report_from_data(data: dict[str, Any]) -> Report:
    if data.get("format") != FORMAT:
        raise ValueError(f"unknown report format {data.get('format')!r}")
    return Report(
        submission=data["submission"],
        suites=tuple(data["suites"]),
        isolation=tuple(data["isolation"]),
        missing_layers=tuple(data["missing_layers"]),
        notes=tuple(Message(n["id"], n["params"]) for n in data["notes"]),
        worker_uid=data["worker_uid"],
        seconds=data["seconds"],
        results=tuple(
            CheckResult(
                name=r["name"],
                exercise=r["exercise"],
                description=r["description"],
                visibility=Visibility(r["visibility"]),
                status=Status(r["status"]),
                score=r["score"],
                max_score=r["max_score"],
                messages=tuple(Message(m["id"], m["params"]) for m in r["messages"]),
                student_output=r["student_output"],
                seconds=r["seconds"],
            )
            for r in data["results"]
        ),
    )


def write_atomic(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` in one step (same directory, then ``os.replace``)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


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


def digest(*paths: Path) -> str:
    """A hash of files' names and contents (missing files count as absent)."""
    h = hashlib.sha256()
    for path in paths:
        h.update(str(path.name).encode() + b"\0")
        if path.is_file():
            h.update(path.read_bytes())
        h.update(b"\0")
    return h.hexdigest()
