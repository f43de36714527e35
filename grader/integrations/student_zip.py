"""The student zip, for courses without nbgrader: stubs, public tests, a checker, a README.

The checker is normlab's own grader package minus everything hidden: the hidden suites, the
verification questions' keys and rubrics (the bank travels as its public view,
``questions_public.json``) and any bundled reference. ``python -m grader check`` then runs
the public tests exactly as final grading does; ``grade`` refuses, for lack of hidden suites.
A ``pyproject.toml`` makes the folder pip-installable as ``normlab-student``: the same package,
with the exercises inside it and no course an instructor keeps.
"""

from __future__ import annotations

import importlib.metadata
import zipfile
from pathlib import Path

from grader import course, questions
from grader.course import MODULES
from grader.report import jinja

ROOT = "normlab-student"
# Never in a student's hands: hidden tests, rubrics (answer keys), the reference solutions.
EXCLUDED_PARTS = {"suites", "_course", "__pycache__"}
EXCLUDED_FILES = {"questions.toml", "descriptions.toml", "classbench.py"}
"""Written into the zip in part (:func:`public_descriptions`) or not at all: the class benchmark
builds its class from a working rmsnorm and a snippet that defeats nbgrader's own path."""


def _grader_files() -> list[tuple[Path, str]]:
    out = []
    for path in sorted(course.PACKAGE.rglob("*")):
        relative = path.relative_to(course.PACKAGE)
        if path.is_dir() or EXCLUDED_PARTS & set(relative.parts) or path.name in EXCLUDED_FILES:
            continue
        if path.suffix in (".pyc",):
            continue
        out.append((path, f"{ROOT}/grader/{relative.as_posix()}"))
    return out


def public_descriptions() -> str:
    """``descriptions.toml`` without the hidden tests' entries: their names and what each
    checks are for after grading (Gradescope holds them back until the due date)."""
    text = (course.PACKAGE / "descriptions.toml").read_text(encoding="utf-8")
    return "\n\n".join(block for block in text.split("\n\n") if "/hidden/" not in block.split("\n", 1)[0])


def _exercise_files() -> list[tuple[Path, str]]:
    base = course.exercises_dir()
    return [
        (p, f"{ROOT}/exercises/{p.relative_to(base).as_posix()}")
        for p in sorted(base.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    ]


def student_files() -> list[tuple[Path, str]]:
    """(source file, name in the zip) for everything a student receives."""
    return _exercise_files() + _grader_files()


def _student_pyproject() -> str:
    """The student package's metadata: normlab's own version and run-time requirements (no
    extras: the nbgrader, docs and dev tools are the instructor's)."""
    requirements = importlib.metadata.requires("normlab") or []
    dependencies = sorted(r for r in requirements if "extra ==" not in r)
    return jinja.render(
        "student_pyproject.toml.j2", version=importlib.metadata.version("normlab"), dependencies=dependencies
    )


def write_student_zip(target: Path) -> Path:
    readme = jinja.render("student_readme.md.j2", modules=", ".join(f"`{m}.py`" for m in MODULES))
    target.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(target, "w", compression=zipfile.ZIP_DEFLATED) as bundle:
        bundle.writestr(f"{ROOT}/README.md", readme)
        bundle.writestr(f"{ROOT}/pyproject.toml", _student_pyproject())
        # The questions without their keys: enough for `check` to list the blank answers.
        bundle.writestr(f"{ROOT}/grader/{questions.PUBLIC_FILE}", questions.public_json(questions.load()))
        bundle.writestr(f"{ROOT}/grader/descriptions.toml", public_descriptions())
        for source, name in student_files():
            bundle.write(source, name)
    return target
