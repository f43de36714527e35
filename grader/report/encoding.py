"""The one JSON encoding of a :class:`~grader.model.Report`.

``report_to_data(report)`` is exact and round-trips through :func:`report_from_data` (the store
keeps reports this way). ``report_to_data(report, lang)`` adds, for people and programs that do
not speak the message catalog, the rendered text in ``lang``: each message's ``text``, each
test's translated ``title`` and its whole student-facing ``output``, and no time for a hidden
test. That is ``--json``.
"""

from __future__ import annotations

from typing import Any

from grader.messages import Message, describe, render, render_all
from grader.model import CheckResult, ManualPart, Report, Status, Visibility

FORMAT = 2


def test_output(result: CheckResult, lang: str) -> str:
    """The student-facing text of one test: its messages, then what the code printed."""
    parts = [render_all(result.messages, lang)] if result.messages else []
    if result.student_output.strip():
        parts.append(render(Message("report.printed", {"output": result.student_output.rstrip()}), lang))
    return "\n".join(parts)


def _message(message: Message, lang: str | None) -> dict[str, Any]:
    data: dict[str, Any] = {"id": message.id, "params": message.params}
    if lang is not None:
        data["text"] = render(message, lang)
    return data


def _result(result: CheckResult, lang: str | None) -> dict[str, Any]:
    data: dict[str, Any] = {
        "name": result.name,
        "exercise": result.exercise,
        "visibility": result.visibility.value,
        "status": result.status.value,
        "score": result.score,
        "max_score": result.max_score,
        "description": result.description,
        "messages": [_message(m, lang) for m in result.messages],
        "student_output": result.student_output,
        "seconds": result.seconds,
    }
    if lang is not None and result.visibility is Visibility.HIDDEN:
        # How long the student's code ran on a hidden input is the student's to choose: a
        # sleep per element told a hidden input's size to the hundredth of a second.
        data["seconds"] = None
    if lang is not None:
        data["title"] = describe(result.name, result.description, lang)
        data["output"] = test_output(result, lang)
    return data


def report_to_data(report: Report, lang: str | None = None) -> dict[str, Any]:
    """Everything in the report as JSON-compatible data (plus rendered text when ``lang``)."""
    data: dict[str, Any] = {
        "format": FORMAT,
        "submission": report.submission,
        "score": report.score,
        "max_score": report.max_score,
        "suites": list(report.suites),
        "isolation": {
            "active": list(report.isolation),
            "missing": list(report.missing_layers),
            "uid": report.worker_uid,
        },
        "notes": [_message(n, lang) for n in report.notes],
        # A person's copy gives no total time once a hidden test ran: it adds up the hidden
        # tests' times, which the student's code chooses (see _result).
        "seconds": None
        if lang is not None and any(r.visibility is Visibility.HIDDEN for r in report.results)
        else report.seconds,
        "tests": [_result(r, lang) for r in report.results],
        "manual": [{"question": m.question, "max_score": m.max_score, "answered": m.answered} for m in report.manual],
    }
    if lang is not None:
        data["language"] = lang
    return data


def _message_from(data: dict[str, Any]) -> Message:
    return Message(data["id"], data["params"])


def report_from_data(data: dict[str, Any]) -> Report:
    """The report encoded by :func:`report_to_data`; raises ``ValueError`` on another format."""
    if data.get("format") != FORMAT:
        raise ValueError(f"unknown report format {data.get('format')!r}")
    isolation = data["isolation"]
    return Report(
        submission=data["submission"],
        suites=tuple(data["suites"]),
        isolation=tuple(isolation["active"]),
        missing_layers=tuple(isolation["missing"]),
        notes=tuple(_message_from(n) for n in data["notes"]),
        worker_uid=isolation["uid"],
        seconds=data["seconds"],
        manual=tuple(ManualPart(m["question"], m["max_score"], m["answered"]) for m in data.get("manual", ())),
        results=tuple(
            CheckResult(
                name=r["name"],
                exercise=r["exercise"],
                description=r["description"],
                visibility=Visibility(r["visibility"]),
                status=Status(r["status"]),
                score=r["score"],
                max_score=r["max_score"],
                messages=tuple(_message_from(m) for m in r["messages"]),
                student_output=r["student_output"],
                seconds=r["seconds"],
            )
            for r in data["tests"]
        ),
    )
