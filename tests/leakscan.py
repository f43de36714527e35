"""Find hidden material in a student-facing artifact: hidden test code, solution code, rubrics.

Hidden test docstrings are excluded: they are the descriptions students are meant to see.
"""

from __future__ import annotations

import ast
import html

import tomllib

from grader import paths, stubs

MIN_LENGTH = 25  # shorter lines (``return out``, ``)``) are not distinctive


def _code_lines(source: str) -> set[str]:
    tree = ast.parse(source)
    docstrings = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (
            isinstance(body, list)
            and body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
        ):
            docstrings.update(range(body[0].lineno, body[0].end_lineno + 1))
    return {
        line.strip()
        for number, line in enumerate(source.splitlines(), start=1)
        if number not in docstrings
        and len(line.strip()) >= MIN_LENGTH
        and not line.strip().startswith(("#", "@", "def ", "import ", "from "))
    }


def public_text() -> str:
    """Everything students receive anyway: stubs, public tests, the config bank."""
    return "\n".join(
        p.read_text()
        for p in sorted(paths.exercises_dir().rglob("*"))
        if p.is_file() and p.suffix in (".py", ".json", ".md")
    )


def _not_public(lines: set[str]) -> set[str]:
    public = public_text()
    return {line for line in lines if line not in public}


def hidden_lines() -> set[str]:
    """Code lines of the hidden suites (their test code and hidden inputs) that are not public."""
    return _not_public(set().union(*(_code_lines(p.read_text()) for p in paths.suites_dir().glob("*.py"))))


def solution_lines() -> set[str]:
    found: set[str] = set()
    for path in paths.solutions_dir().glob("*.py"):
        found |= {line for line in stubs.solution_lines(path.read_text()) if len(line) >= MIN_LENGTH}
    return _not_public(found)


def rubric_lines() -> set[str]:
    data = tomllib.loads((paths.PACKAGE / "questions.toml").read_text())
    return {
        line.strip("- ").strip()
        for q in data["question"]
        for line in q["rubric"].splitlines()
        if len(line.strip("- ").strip()) >= MIN_LENGTH
    }


def leaks(text: str, *, solutions: bool = True) -> list[str]:
    """Hidden lines found in ``text`` (HTML entities decoded first). ``solutions=False`` for an
    artifact of a student who submitted the reference code themselves."""
    text = html.unescape(text)
    lines = hidden_lines() | rubric_lines() | (solution_lines() if solutions else set())
    return sorted(line for line in lines if line in text)
