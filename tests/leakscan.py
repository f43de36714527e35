"""Find hidden material in a student-facing artifact: hidden test code, solution code, rubrics.

Hidden test docstrings are excluded: they are the descriptions students are meant to see.
"""

from __future__ import annotations

import ast
import html
import tomllib

from grader import course, stubs

MIN_LENGTH = 25  # shorter lines (``return out``, ``)``) are not distinctive


def docstring_lines(source: str) -> set[int]:
    """Line numbers (1-based) of every docstring in ``source``."""
    found: set[int] = set()
    for node in ast.walk(ast.parse(source)):
        body = getattr(node, "body", None)
        first = body[0] if isinstance(body, list) and body else None
        if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
            found.update(range(first.lineno, (first.end_lineno or first.lineno) + 1))
    return found


def code_lines(source: str, min_length: int = MIN_LENGTH) -> set[str]:
    """Distinctive statement lines of ``source``: no docstrings, comments, decorators, defs or imports."""
    skipped = docstring_lines(source)
    return {
        line.strip()
        for number, line in enumerate(source.splitlines(), start=1)
        if number not in skipped
        and len(line.strip()) >= min_length
        and not line.strip().startswith(("#", "@", "def ", "import ", "from "))
    }


def public_text() -> str:
    """Everything students receive anyway: stubs, public tests, the config bank, and the
    checker's own code (the grader package minus the hidden parts, as the student zip has it)."""
    from grader.integrations.student_zip import student_files

    return "\n".join(
        source.read_text() for source, _ in student_files() if source.suffix in (".py", ".json", ".md", ".j2", ".toml")
    )


def _not_public(lines: set[str]) -> set[str]:
    public = public_text()
    return {line for line in lines if line not in public}


def hidden_lines() -> set[str]:
    """Code lines of the hidden suites (their test code and hidden inputs) that are not public."""
    return _not_public(set().union(*(code_lines(p.read_text()) for p in course.suites_dir().glob("*.py"))))


def solution_lines() -> set[str]:
    found: set[str] = set()
    for path in course.solutions_dir().glob("*.py"):
        found |= {line for line in stubs.solution_lines(path.read_text()) if len(line) >= MIN_LENGTH}
    return _not_public(found)


def rubric_lines() -> set[str]:
    """The question bank's hidden text: rubric items, every option's feedback (the feedback of
    a right option names it) and the reference answers' written parts."""
    data = tomllib.loads((course.PACKAGE / "questions.toml").read_text())
    found = {item["text"] for q in data["question"] for item in q.get("written", {}).get("rubric", ())}
    for q in data["question"]:
        for part in q.get("part", ()):
            found |= {text for option in part.get("option", ()) for text in option["feedback"].values()}
    reference = tomllib.loads((course.solutions_dir() / "verification.toml").read_text())
    for answers in reference.values():
        found |= {line.strip() for line in answers.get("written", "").splitlines()}
    return {" ".join(line.split()) for line in found if len(line.strip()) >= MIN_LENGTH}


def key_lines() -> set[str]:
    """The number keys written out, where distinctive (five characters or more: ``266240``) and
    not public anyway (Gemma's eps is in its published config)."""
    data = tomllib.loads((course.PACKAGE / "questions.toml").read_text())
    return _not_public(
        {
            f"{part['answer']:g}"
            for q in data["question"]
            for part in q.get("part", ())
            if "answer" in part and len(f"{part['answer']:g}") >= 5
        }
    )


def leaks(text: str, *, solutions: bool = True) -> list[str]:
    """Hidden lines found in ``text`` (HTML entities decoded first). ``solutions=False`` for an
    artifact of a student who submitted the reference code and answers themselves (their own
    answers are in it, by right)."""
    text = html.unescape(text)
    flat = " ".join(text.split())  # prose wrapped over lines (a rubric item in a notebook cell)
    lines = hidden_lines() | (solution_lines() if solutions else set())
    prose = rubric_lines() | (key_lines() if solutions else set())
    return sorted({line for line in lines if line in text} | {line for line in prose if line in flat})
