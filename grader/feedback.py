"""Per-student feedback as HTML: scores and the same guarded messages as every report.

Built from a :class:`~grader.model.Report` (never from test source), so it cannot contain a
hidden test's code, inputs or expected values: hidden results carry only their description
and the messages written for hidden tests. Autoescaped by jinja2.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import jinja2

from grader.messages import Message, describe, render
from grader.model import Report
from grader.reporters import STATUS_MARK, test_output


def _env() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(Path(str(resources.files("grader"))) / "templates")),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
    )


def feedback_html(report: Report, *, student: str, assignment: str, lang: str = "en") -> str:
    exercises = []
    for name in report.exercises():
        rows = [r for r in report.results if r.exercise == name]
        exercises.append(
            {
                "name": name,
                "score": f"{sum(r.score for r in rows):g}",
                "max_score": f"{sum(r.max_score for r in rows):g}",
                "tests": [
                    {
                        "status": r.status.value,
                        "status_label": STATUS_MARK[r.status],
                        "visibility_label": render(Message(f"feedback.{r.visibility.value}"), lang),
                        "description": describe(r.name, r.description, lang),
                        "output": test_output(r, lang),
                        "score": f"{r.score:g}",
                        "max_score": f"{r.max_score:g}",
                    }
                    for r in rows
                ],
            }
        )
    return (
        _env()
        .get_template("feedback.html.j2")
        .render(
            lang=lang,
            title=render(Message("feedback.title", {"assignment": assignment, "student": student}), lang),
            total_label=render(Message("feedback.total"), lang),
            score=f"{report.score:g}",
            max_score=f"{report.max_score:g}",
            notes=[render(n, lang) for n in report.notes],
            exercises=exercises,
            footer=render(Message("feedback.footer"), lang),
        )
    )
