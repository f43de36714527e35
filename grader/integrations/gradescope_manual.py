"""The written parts of the questions as Gradescope manual questions: an outline to enter by hand.

Gradescope grades a programming assignment's written work by hand once "Enable Manual Grading"
is ticked in the assignment's settings; the rubric of each question is built in its grading
interface, item by item (a point value and a description, markdown allowed), or imported from a
question of another Gradescope assignment ("Grading a Programming Assignment" and the rubric
guides on guides.gradescope.com). Gradescope documents no file format that creates questions or
rubric items, so this is not an import file: it is the outline an instructor enters once, one
section per manual question, with its points and its rubric items in Gradescope's own terms
(positive scoring). ``results.json`` carries the automatic tests only (Decision 8), so the
manual questions' points add to the autograder's score without overlapping it.

For the instructor only: the rubric never travels in the bundle or anything a student receives.
"""

from __future__ import annotations

from grader import questions
from grader.policy import Policy, scaled

INTRO = """\
# Manual questions for Gradescope: the written parts of the verification questions

Gradescope has no file format to import questions or rubric items, so enter this outline by
hand, once (a later assignment can import the rubrics from this one, in Gradescope):

1. In the programming assignment's settings, tick **Enable Manual Grading**.
2. In the assignment's outline, keep the autograder's question (its points are the score of
   `results.json`: the exercises' tests and the questions' automatic parts, {auto} points of
   which come from the questions) and add one question per section below, **titled and
   weighted as the section says**. They add {written} points, graded by hand.
3. In each question's grading page, use positive scoring and add its rubric items: the points
   and the description as listed. An item's points are given when the answer does what it says.

A student's answer is in the submission: `verification.toml`, under `[qN]`, key `written`
(or, in a notebook, the written part's answer cell under question N).
"""


def _section(question: questions.Question, written: questions.Written, lang: str) -> str:
    """One manual question: its title, points, prompts and rubric items."""
    prompts = [
        f"- {lang_}: {written.prompt[lang_]}" for lang_ in dict.fromkeys((lang, "en")) if lang_ in written.prompt
    ]
    items = "\n".join(f"| {item.points:g} | {item.text} |" for item in written.rubric)
    return "\n".join(
        [
            f"## Q{question.number} written ({written.points:g} points)",
            "",
            f"Title: `Q{question.number} written`. Points: {written.points:g}. Question {question.number}: "
            f"{question.text.get(lang, question.text['en'])}",
            "",
            "What the student is asked:",
            "",
            *prompts,
            "",
            "Rubric items (positive scoring):",
            "",
            "| points | description |",
            "| --- | --- |",
            items,
        ]
    )


def manual_questions(lang: str = "en", course_policy: Policy | None = None) -> str:
    """The outline of Gradescope manual questions for every written part of the bank, at the
    course policy's points (a dropped question has none)."""
    course_policy = course_policy or Policy()
    bank = questions.load()
    written = [
        (q, q.written.scaled(course_policy.written_factor(q.id, q.written.points)))
        for q in bank.questions
        if q.written is not None and q.id not in course_policy.drop
    ]
    auto = sum(scaled(q.auto_points, course_policy.factor(q.id, q.auto_points)) for q in bank.questions)
    manual = sum(w.points for _, w in written)
    intro = INTRO.format(auto=f"{auto:g}", written=f"{manual:g}")
    return "\n\n".join([intro.rstrip(), *(_section(q, w, lang) for q, w in written)]) + "\n"


__all__ = ["manual_questions"]
