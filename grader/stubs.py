"""Generate the student stubs in ``exercises/`` from the reference in ``solutions/``.

``solutions/`` is the single source. In every ``.py`` file, each region between a line
containing ``### BEGIN SOLUTION`` and one containing ``### END SOLUTION`` becomes
``raise NotImplementedError("<hint>")``, indented like the marker; the hint is the text after
``hint:`` on the BEGIN line. Everything else (docstrings, provided helpers, public tests, the
config bank) is copied unchanged, ``answers.json`` is recorded from the reference (see
``recording.py``) and ``verification.toml``, the blank answers file of the verification
questions, is written from the question bank (``questions.py``). ``normlab stubs --check``
fails when ``exercises/`` differs.
"""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from grader import public, questions, recording
from grader.course import PLAIN_CHECKS
from grader.expected import ANSWERS_FILE

BEGIN = "### BEGIN SOLUTION"
END = "### END SOLUTION"
_HINT = re.compile(r"hint:\s*(.*\S)")
# Files a student never receives even though they live in solutions/.
SKIP = {"__pycache__", ".pytest_cache"}


class StubError(Exception):
    """A solution file's markers are unbalanced or nested."""


def strip_solutions(source: str, origin: str = "<source>") -> str:
    """Replace every solution region of ``source`` with a ``NotImplementedError`` stub."""
    out: list[str] = []
    inside = False
    for number, line in enumerate(source.splitlines(keepends=True), start=1):
        if BEGIN in line:
            if inside:
                raise StubError(f"{origin}:{number}: nested {BEGIN}")
            inside = True
            indent = line[: len(line) - len(line.lstrip())]
            match = _HINT.search(line)
            hint = match.group(1) if match else "replace this line with your implementation"
            out.append(f"{indent}raise NotImplementedError({hint!r})\n")
        elif END in line:
            if not inside:
                raise StubError(f"{origin}:{number}: {END} without {BEGIN}")
            inside = False
        elif not inside:
            out.append(line)
    if inside:
        raise StubError(f"{origin}: {BEGIN} without {END}")
    return "".join(out)


def solution_lines(source: str) -> list[str]:
    """The non-blank, non-comment lines inside solution regions (to scan releases for leaks)."""
    lines, inside = [], False
    for line in source.splitlines():
        if BEGIN in line:
            inside = True
        elif END in line:
            inside = False
        elif inside and line.strip() and not line.strip().startswith("#"):
            lines.append(line.strip())
    return lines


@dataclass(frozen=True)
class Generated:
    relative: Path
    content: bytes


def render(solutions: Path) -> list[Generated]:
    """Every file of the student tree, as it should be."""
    files = []
    for path in sorted(solutions.rglob("*")):
        relative = path.relative_to(solutions)
        if path.is_dir() or SKIP & set(relative.parts) or path.suffix == ".pyc":
            continue
        if relative == Path(questions.ANSWERS_FILE):  # the key: the student gets the blank file
            continue
        data = path.read_bytes()
        if path.suffix == ".py":
            data = strip_solutions(data.decode("utf-8"), str(relative)).encode("utf-8")
        files.append(Generated(relative, data))
    # The reference's answers to the public tests' calls, for ``expected.check`` (recording.py).
    files.append(Generated(Path(ANSWERS_FILE), recording.answers_json(solutions)))
    # The plain checks, for public tests run where normlab is not installed (public.py).
    files.append(Generated(Path(PLAIN_CHECKS), Path(public.__file__).read_bytes()))
    # Where the student answers the verification questions: the bank's questions, no keys.
    files.append(Generated(Path(questions.ANSWERS_FILE), questions.answers_template(questions.load()).encode("utf-8")))
    return sorted(files, key=lambda item: item.relative)


def write(solutions: Path, exercises: Path) -> list[Path]:
    """Regenerate ``exercises`` from ``solutions``; returns the files written."""
    wanted = render(solutions)
    if exercises.exists():
        shutil.rmtree(exercises)
    for item in wanted:
        target = exercises / item.relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(item.content)
    return [exercises / item.relative for item in wanted]


def differences(solutions: Path, exercises: Path) -> list[str]:
    """Files that are missing, stale or extra in ``exercises``; empty when in sync."""
    wanted = {item.relative: item.content for item in render(solutions)}
    problems = []
    for relative, content in wanted.items():
        target = exercises / relative
        if not target.is_file():
            problems.append(f"missing: {relative}")
        elif target.read_bytes() != content:
            problems.append(f"stale: {relative}")
    for path in sorted(exercises.rglob("*")) if exercises.exists() else []:
        relative = path.relative_to(exercises)
        if path.is_file() and not SKIP & set(relative.parts) and path.suffix != ".pyc" and relative not in wanted:
            problems.append(f"extra: {relative}")
    return problems
