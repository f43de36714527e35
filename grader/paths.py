"""Where the course lives: a source checkout, or the copy a wheel carries."""

from __future__ import annotations

from pathlib import Path

PACKAGE = Path(__file__).resolve().parent


def course_root() -> Path:
    """The directory holding ``exercises/`` (and, for instructors, ``solutions/``).

    In a checkout (or an editable install) that is the repository, and in a student bundle
    the bundle's folder; a wheel carries both under ``grader/_course``.
    """
    checkout = PACKAGE.parent
    if (checkout / "exercises").is_dir() and (checkout / "grader").is_dir():
        return checkout
    return PACKAGE / "_course"


def solutions_dir() -> Path:
    return course_root() / "solutions"


def exercises_dir() -> Path:
    return course_root() / "exercises"


def suites_dir() -> Path:
    """The hidden suites. Absent from a student's copy of the grader."""
    return PACKAGE / "suites"


def _in_lesson_order(files: list[Path]) -> list[Path]:
    from grader.manifest import MODULES

    def key(path: Path) -> tuple[int, str]:
        name = path.stem.removeprefix("test_")
        return (MODULES.index(name) if name in MODULES else len(MODULES), name)

    return sorted(files, key=key)


def public_tests() -> list[Path]:
    """The public test files, from the course (never from the submission being graded)."""
    return _in_lesson_order(list(exercises_dir().glob("test_*.py")))


def hidden_tests() -> list[Path]:
    return _in_lesson_order(list(suites_dir().glob("test_*.py")))
