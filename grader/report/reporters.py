"""Reports for people and machines: text, JSON, Gradescope ``results.json`` and CSV.

All wording comes from the message catalog; this module only arranges it. Each reporter takes
a :class:`~grader.model.Report` and a language and returns a string.
"""

from __future__ import annotations

import csv
import io
import json
import re
import textwrap
from collections.abc import Mapping
from typing import Any

from grader.messages import Message, describe, render
from grader.model import Report, Status
from grader.policy import DIGITS, manual_points
from grader.report.encoding import report_to_data, test_output
from grader.settings import GRADESCOPE_VISIBILITY

FORMATS = ("text", "json", "gradescope", "csv")

STATUS_MARK = {
    Status.PASSED: "PASS",
    Status.FAILED: "FAIL",
    Status.ERROR: "ERROR",
    Status.TIMEOUT: "TIMEOUT",
    Status.CRASHED: "CRASHED",
    Status.SKIPPED: "SKIP",
}
"""The one label of each status, in every report, notebook and feedback page."""


def points(x: float) -> str:
    return f"{x:g}"


def isolation_summary(report: Report, lang: str) -> str:
    params = {
        "layers": ", ".join(report.isolation) or "-",
        "uid": "-" if report.worker_uid is None else report.worker_uid,
    }
    line = render(Message("report.isolation", params), lang)
    if report.missing_layers:
        line += "\n" + render(Message("report.degraded", {"missing": ", ".join(report.missing_layers)}), lang)
    if "own-environment" in report.missing_layers:  # the one a student fixes with one command
        line += "\n" + render(Message("report.no_own_environment"), lang)
    return line


def manual_lines(report: Report, lang: str) -> list[str]:
    """The written parts of the questions, each with its maximum: graded by a person."""
    if not report.manual:
        return []
    lines = ["", render(Message("report.manual_title"), lang)]
    for part in report.manual:
        state = render(Message("report.manual_answered" if part.answered else "report.manual_blank"), lang)
        params = {"question": part.question, "points": points(part.max_score), "state": state}
        lines.append("  " + render(Message("report.manual_line", params), lang))
    return lines


def suite_names(report: Report, lang: str) -> str:
    """The suites that ran, in the reader's language ("public + hidden")."""
    return " + ".join(render(Message(f"suite.{suite}"), lang) for suite in report.suites)


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff]")


def printable(text: str) -> str:
    """``text`` with its control characters shown as ``\\x1b``: a student's output, traceback
    or cell printed raw could clear the screen, move the cursor over the total or set the
    terminal's title (a red team drew a fake "Total: 253/253"); bidi overrides and Unicode line
    separators likewise; newlines and tabs are kept."""
    return _CONTROL.sub(_escaped, text.replace("\r\n", "\n"))


def _escaped(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def escaped_name(text: str) -> str:
    """``text`` shown as :func:`printable` shows it, its line breaks and tabs escaped too: a
    name (a file the student named) that must not start lines of its own in a report."""
    return printable(text).replace("\n", "\\n").replace("\t", "\\t")


def to_text(report: Report, lang: str = "en", width: int = 88) -> str:
    """A table per exercise, then each failure's explanation, then the total (and the points
    of written answers still to be graded by hand, when there are some)."""
    out = [
        render(
            Message(
                "report.title", {"submission": escaped_name(report.submission), "suites": suite_names(report, lang)}
            ),
            lang,
        )
    ]
    out.append(isolation_summary(report, lang))
    out += [f"  * {render(note, lang)}" for note in report.notes]
    for exercise, rows in report.by_exercise():
        got, total = sum(r.score for r in rows), sum(r.max_score for r in rows)
        out.append("")
        out.append(f"{exercise} ".ljust(width - 12, "-") + f" {points(got)}/{points(total)}".rjust(12))
        for r in rows:
            where = render(Message(f"feedback.{r.visibility.value}"), lang)
            prefix = f"  {STATUS_MARK[r.status]:<7} {where:<7} "
            # The description is wrapped, never cut: it is what the test checks.
            lines = textwrap.wrap(describe(r.name, r.description, lang), width - 10 - len(prefix)) or [""]
            out.append((prefix + lines[0]).ljust(width - 10) + f"{points(r.score)}/{points(r.max_score)}".rjust(10))
            out += [" " * len(prefix) + line for line in lines[1:]]
            if r.status is not Status.PASSED:
                detail = test_output(r, lang)
                out += ["          " + line for line in detail.splitlines()]
    out += manual_lines(report, lang)
    out.append("")
    out.append(
        render(Message("report.total", {"score": points(report.score), "max_score": points(report.max_score)}), lang)
    )
    out += manual_sentences(report, lang)
    return printable("\n".join(out) + "\n")


def manual_sentences(report: Report, lang: str) -> list[str]:
    """What the score does not count of the written answers: the points of those answered,
    still to be graded by hand, and of those left blank, which score nothing (a student who
    answered none was told 21 points were still to come, trial 61)."""
    answered = round(sum(p.max_score for p in report.manual if p.answered), DIGITS)
    blank = round(manual_points(report) - answered, DIGITS)
    lines = [render(Message("feedback.manual_points", {"points": points(answered)}), lang)] if answered else []
    if blank:
        lines.append(render(Message("feedback.manual_blank", {"points": points(blank)}), lang))
    return lines


def to_json(report: Report, lang: str = "en") -> str:
    """The ``--json`` report: the report's one JSON encoding, with the text rendered in ``lang``."""
    return json.dumps(report_to_data(report, lang), indent=2, ensure_ascii=False) + "\n"


def to_gradescope(report: Report, lang: str = "en", visibility: Mapping[str, str] | None = None) -> str:
    """Gradescope's ``results.json``: one test entry per check.

    ``visibility`` says when Gradescope shows each kind of test (``public``/``hidden`` to
    ``visible``, ``after_due_date``, ``after_published`` or ``hidden``; the course file's
    ``[gradescope]``); by default hidden tests wait for the due date. Even then a hidden test
    shows its *name and message* only; its source never leaves the grader. Gradescope accepts
    ``passed``/``failed`` as a test status.
    """
    shown = {**GRADESCOPE_VISIBILITY, **(visibility or {})}
    summary = [isolation_summary(report, lang), *(render(n, lang) for n in report.notes)]
    data: dict[str, Any] = {
        "score": report.score,
        "output": printable("\n".join(summary)),
        "output_format": "text",
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "tests": [
            {
                "name": f"{r.exercise}: {describe(r.name, r.description, lang)}",
                "number": r.name,
                # A policy's scaled points are kept unrounded in the report so that an item's total
                # comes out exact; Gradescope shows each test's figures as given (3.3333333333333335).
                "score": round(r.score, DIGITS),
                "max_score": round(r.max_score, DIGITS),
                "status": "passed" if r.status is Status.PASSED else "failed",
                "output": printable(f"[{status_word(r.status, lang)}] " + test_output(r, lang)).strip()
                if r.status is not Status.PASSED
                else "",
                "visibility": shown[r.visibility.value],
                "tags": [r.exercise, r.visibility.value],
            }
            for r in report.results
        ],
        "extra_data": {"isolation": list(report.isolation), "missing_layers": list(report.missing_layers)},
    }
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def status_word(status: Status, lang: str) -> str:
    """A test's status in the reader's words (``falhou``): Gradescope's output and the feedback page."""
    return render(Message(f"status.{status.value}"), lang)


def to_csv(report: Report) -> str:
    """One row per test (for spreadsheets), with the total last."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["name", "exercise", "visibility", "status", "score", "max_score"])
    for r in report.results:
        writer.writerow([r.name, r.exercise, r.visibility.value, r.status.value, points(r.score), points(r.max_score)])
    writer.writerow(["TOTAL", "", "", "", points(report.score), points(report.max_score)])
    return buf.getvalue()


def render_report(
    report: Report,
    fmt: str,
    lang: str = "en",
    visibility: Mapping[str, str] | None = None,
) -> str:
    """Dispatch on the format name (one of :data:`FORMATS`)."""
    if fmt == "csv":
        return to_csv(report)
    if fmt == "text":
        return to_text(report, lang)
    if fmt == "gradescope":
        return to_gradescope(report, lang, visibility)
    return {"text": to_text, "json": to_json, "gradescope": to_gradescope}[fmt](report, lang)
