"""Per-student feedback as HTML: scores and the same guarded messages as every report.

Built from a :class:`~grader.model.Report` (never from test source), so it cannot contain a
hidden test's code, inputs or expected values: hidden results carry only their description
and the messages written for hidden tests. Autoescaped (see ``jinja.py``).
"""

from __future__ import annotations

from typing import Any

from grader.messages import Message, describe, render
from grader.model import CheckResult, Late, Report
from grader.report import jinja
from grader.report.encoding import test_output
from grader.report.reporters import STATUS_MARK, manual_sentences, points, status_word


def _test(result: CheckResult, lang: str) -> dict[str, str]:
    return {
        "status": result.status.value,
        "status_label": _status_label(result, lang),
        "visibility_label": render(Message(f"feedback.{result.visibility.value}"), lang),
        "description": describe(result.name, result.description, lang),
        "output": test_output(result, lang),
        "score": points(result.score),
        "max_score": points(result.max_score),
    }


def _status_label(result: CheckResult, lang: str) -> str:
    """The report's mark (PASS, FAIL) in English; the reader's own word in another language (trial 49)."""
    return STATUS_MARK[result.status] if lang == "en" else status_word(result.status, lang)


ON_TIME = Late()


def terms_lines(report: Report, lang: str, *, late: Late = ON_TIME) -> list[str]:
    """What the score above does not say: a late penalty taken off it (and off the points given
    by hand it counted), and the points of the written answers still to be graded by hand."""
    lines = []
    if late.penalty and late.by_hand:
        counted = report.score + late.by_hand
        params = {"penalty": points(late.penalty), "counted": points(counted), "by_hand": points(late.by_hand)}
        params["score"] = points(max(0.0, counted - late.penalty))
        lines.append(render(Message("feedback.late_penalty_with_hand", params), lang))
    elif late.penalty:
        after = points(max(0.0, report.score - late.penalty))
        params = {"penalty": points(late.penalty), "score": after, "max_score": points(report.max_score)}
        lines.append(render(Message("feedback.late_penalty", params), lang))
    return lines + manual_sentences(report, lang)


def feedback_html(
    report: Report,
    *,
    student: str,
    assignment: str,
    lang: str = "en",
    late: Late = ON_TIME,
) -> str:
    exercises: list[dict[str, Any]] = [
        {
            "name": name,
            "score": points(sum(r.score for r in rows)),
            "max_score": points(sum(r.max_score for r in rows)),
            "tests": [_test(r, lang) for r in rows],
        }
        for name, rows in report.by_exercise()
    ]
    return jinja.render(
        "feedback.html.j2",
        lang=lang,
        title=render(Message("feedback.title", {"assignment": assignment, "student": student}), lang),
        total_label=render(Message("feedback.total"), lang),
        score=points(report.score),
        max_score=points(report.max_score),
        terms=terms_lines(report, lang, late=late),
        notes=[render(n, lang) for n in report.notes],
        exercises=exercises,
        footer=render(Message("feedback.footer"), lang),
    )
