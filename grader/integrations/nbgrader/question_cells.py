"""The verification questions in the nbgrader notebook, built from the question bank.

Per question: a locked markdown cell (the question, its parts and options); a plain code cell
where the student answers the auto-graded parts (``answers_q1 = {...}``, kept as the student
leaves it); a locked grade cell worth the auto-graded points, whose hidden region (source
notebook only) scores those answers in the kernel on nbgrader's native path, while
``normlab autograde`` reads them as data and writes the same points into it; and the written
part's manually graded answer cell, its rubric inside the solution region (source only).
"""

from __future__ import annotations

from typing import Any

import nbformat

from grader import questions
from grader.integrations.nbgrader.words import Words
from grader.messages import normalize_language
from grader.policy import Policy, scaled
from grader.questions import Bank, Question
from grader.report import jinja


def auto_cell_id(qid: str) -> str:
    """The grade id of a question's auto-graded cell."""
    return f"{qid}-auto"


def _question_cells(
    bank: Bank, q: Question, meta: Any, course_policy: Policy, words: Words
) -> list[nbformat.NotebookNode]:
    lang = words.lang
    text = jinja.render(
        "question.md.j2",
        number=q.number,
        qid=q.id,
        group=bank.groups[q.group][lang],
        text=q.text[lang],
        parts=q.parts,
        written=q.written,
        lang=lang,
        words=words,
    )
    cells = [nbformat.v4.new_markdown_cell(text, metadata=meta(f"{q.id}-question", locked=True))]
    if q.parts:
        answers = jinja.render("answers_cell.py.j2", number=q.number, qid=q.id, parts=q.parts, words=words)
        cells.append(nbformat.v4.new_code_cell(answers))
        factor = course_policy.factor(q.id, q.auto_points)
        points = scaled(q.auto_points, factor)
        grade = jinja.render(
            "question_cell.py.j2", number=q.number, qid=q.id, points=points, factor=factor, lang=lang, words=words
        )
        # A dropped question's cells stay, worth 0: nbgrader cannot remove a cell once students
        # have submitted, so dropping a question later only changes points.
        cells.append(
            nbformat.v4.new_code_cell(grade, metadata=meta(auto_cell_id(q.id), grade=True, locked=True, points=points))
        )
    written = course_policy.written_points(q.id, q.written.points) if q.written is not None else 0.0
    if q.written is not None:
        answer = jinja.render("answer.md.j2", rubric=q.written.rubric)
        cells.append(
            nbformat.v4.new_markdown_cell(
                answer, metadata=meta(f"{q.id}-answer", grade=True, solution=True, points=written)
            )
        )
    return cells


def cells(meta: Any, course_policy: Policy, lang: str = "en") -> list[nbformat.NotebookNode]:
    """Every question's cells, after an introduction, at the policy's points, in the course's
    language. ``meta`` builds nbgrader metadata."""
    bank = questions.load()
    words = Words(normalize_language(lang))
    out = [nbformat.v4.new_markdown_cell(words.say("intro"), metadata=meta("questions-intro", locked=True))]
    for q in bank.questions:
        out += _question_cells(bank, q, meta, course_policy, words)
    return out


def points(course_policy: Policy) -> tuple[float, float]:
    """(auto-graded points, points graded by hand) of all the questions, as the policy counts them."""
    bank = questions.load()
    auto = sum(scaled(q.auto_points, course_policy.factor(q.id, q.auto_points)) for q in bank.questions)
    written = sum(course_policy.written_points(q.id, q.written.points) for q in bank.questions if q.written)
    return auto, written


def grade_cell_points(course_policy: Policy) -> dict[str, float]:
    """Each question grade cell's points under ``course_policy``, by grade id."""
    out: dict[str, float] = {}
    for q in questions.load().questions:
        if q.parts:
            out[auto_cell_id(q.id)] = scaled(q.auto_points, course_policy.factor(q.id, q.auto_points))
        if q.written is not None:
            out[f"{q.id}-answer"] = course_policy.written_points(q.id, q.written.points)
    return out


def rubric_markdown(course_policy: Policy) -> str:
    """The graders' rubric file: every written part, item by item, at the policy's points
    (never released)."""
    bank = questions.load()
    out = ["# Rubric for the written parts of the questions"]
    for q in bank.questions:
        if q.written is None or q.id in course_policy.drop:
            continue
        written = q.written.scaled(course_policy.written_factor(q.id, q.written.points))
        out.append(f"## {q.id} ({bank.groups[q.group]['en']}, {written.points:g} points)\n\n{q.text['en']}")
        out.append("\n".join(f"- ({item.points:g} pt) {item.text}" for item in written.rubric))
    return "\n\n".join(out) + "\n"


__all__ = ["auto_cell_id", "cells", "grade_cell_points", "points", "rubric_markdown"]
