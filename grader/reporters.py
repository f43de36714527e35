"""Reports for people and machines: text, JSON, Gradescope ``results.json`` and CSV.

All wording comes from the message catalog; this module only arranges it. Each reporter takes
a :class:`~grader.model.Report` and a language and returns a string.
"""

from __future__ import annotations

import csv
import io
import json
from typing import Any

from grader.messages import Message, describe, render, render_all
from grader.model import CheckResult, Report, Status

FORMATS = ("text", "json", "gradescope", "csv")

STATUS_MARK = {
    Status.PASSED: "PASS",
    Status.FAILED: "FAIL",
    Status.ERROR: "ERROR",
    Status.TIMEOUT: "TIMEOUT",
    Status.CRASHED: "CRASH",
    Status.SKIPPED: "SKIP",
}


def _points(x: float) -> str:
    return f"{x:g}"


def test_output(result: CheckResult, lang: str) -> str:
    """The student-facing text of one test: its messages, then what the code printed."""
    parts = [render_all(result.messages, lang)] if result.messages else []
    if result.student_output.strip():
        parts.append(render(Message("report.printed", {"output": result.student_output.rstrip()}), lang))
    return "\n".join(parts)


def isolation_summary(report: Report, lang: str) -> str:
    params = {
        "layers": ", ".join(report.isolation) or "-",
        "uid": "-" if report.worker_uid is None else report.worker_uid,
    }
    line = render(Message("report.isolation", params), lang)
    if report.missing_layers:
        line += "\n" + render(Message("report.degraded", {"missing": ", ".join(report.missing_layers)}), lang)
    return line


def to_text(report: Report, lang: str = "en", width: int = 88) -> str:
    """A table per exercise, then each failure's explanation, then the total."""
    out = [
        render(Message("report.title", {"submission": report.submission, "suites": " + ".join(report.suites)}), lang)
    ]
    out.append(isolation_summary(report, lang))
    out += [f"  * {render(note, lang)}" for note in report.notes]
    for exercise in report.exercises():
        rows = [r for r in report.results if r.exercise == exercise]
        got, total = sum(r.score for r in rows), sum(r.max_score for r in rows)
        out.append("")
        out.append(f"{exercise} ".ljust(width - 12, "-") + f" {_points(got)}/{_points(total)}".rjust(12))
        for r in rows:
            where = render(Message(f"feedback.{r.visibility.value}"), lang)
            label = f"  {STATUS_MARK[r.status]:<7} {where:<7} {describe(r.name, r.description, lang)}"
            if len(label) > width - 10:
                label = label[: width - 13] + "..."
            out.append(label.ljust(width - 10) + f"{_points(r.score)}/{_points(r.max_score)}".rjust(10))
            if r.status is not Status.PASSED:
                detail = test_output(r, lang)
                out += ["          " + line for line in detail.splitlines()]
    out.append("")
    out.append(
        render(Message("report.total", {"score": _points(report.score), "max_score": _points(report.max_score)}), lang)
    )
    return "\n".join(out) + "\n"


def to_dict(report: Report, lang: str = "en") -> dict[str, Any]:
    """The ``--json`` object: ``score``, ``max_score`` and one entry per test."""
    return {
        "submission": report.submission,
        "score": report.score,
        "max_score": report.max_score,
        "suites": list(report.suites),
        "language": lang,
        "isolation": {
            "active": list(report.isolation),
            "missing": list(report.missing_layers),
            "uid": report.worker_uid,
        },
        "notes": [render(n, lang) for n in report.notes],
        "tests": [
            {
                "name": r.name,
                "exercise": r.exercise,
                "visibility": r.visibility.value,
                "description": describe(r.name, r.description, lang),
                "score": r.score,
                "max_score": r.max_score,
                "status": r.status.value,
                "output": test_output(r, lang),
                "message_ids": [m.id for m in r.messages],
            }
            for r in report.results
        ],
    }


def to_json(report: Report, lang: str = "en") -> str:
    return json.dumps(to_dict(report, lang), indent=2, ensure_ascii=False) + "\n"


def to_gradescope(report: Report, lang: str = "en") -> str:
    """Gradescope's ``results.json``: one test entry per check, all visible to the student.

    Hidden tests are visible by *name and message* only; their source never leaves the
    grader. Gradescope accepts ``passed``/``failed`` as a test status.
    """
    summary = [isolation_summary(report, lang), *(render(n, lang) for n in report.notes)]
    data = {
        "score": report.score,
        "output": "\n".join(summary),
        "output_format": "text",
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "tests": [
            {
                "name": f"{r.exercise}: {describe(r.name, r.description, lang)}",
                "number": r.name,
                "score": r.score,
                "max_score": r.max_score,
                "status": "passed" if r.status is Status.PASSED else "failed",
                "output": (f"[{r.status.value}] " + test_output(r, lang)).strip()
                if r.status is not Status.PASSED
                else "",
                "visibility": "visible",
                "tags": [r.exercise, r.visibility.value],
            }
            for r in report.results
        ],
        "extra_data": {"isolation": list(report.isolation), "missing_layers": list(report.missing_layers)},
    }
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def to_csv(report: Report, lang: str = "en") -> str:
    """One row per test (for spreadsheets), with the total last."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["name", "exercise", "visibility", "status", "score", "max_score"])
    for r in report.results:
        writer.writerow(
            [r.name, r.exercise, r.visibility.value, r.status.value, _points(r.score), _points(r.max_score)]
        )
    writer.writerow(["TOTAL", "", "", "", _points(report.score), _points(report.max_score)])
    return buf.getvalue()


def render_report(report: Report, fmt: str, lang: str = "en") -> str:
    """Dispatch on the format name (one of :data:`FORMATS`)."""
    return {"text": to_text, "json": to_json, "gradescope": to_gradescope, "csv": to_csv}[fmt](report, lang)
