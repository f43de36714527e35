"""Shared helpers for the project's own tests: build submissions from the reference."""

from __future__ import annotations

import multiprocessing
import shutil
from pathlib import Path

from grader import course
from grader.course import MODULES


def copy_solutions(target: Path) -> Path:
    """A directory submission identical to the reference (module files only)."""
    target.mkdir(parents=True, exist_ok=True)
    for module in MODULES:
        shutil.copy(course.solutions_dir() / f"{module}.py", target / f"{module}.py")
    return target


def patched(target: Path, module: str, old: str | tuple[str, ...], new: str | tuple[str, ...]) -> Path:
    """Copy the reference and replace ``old`` by ``new`` in one module (``old`` must occur);
    tuples of texts make one mistake of several edits, each replaced by its partner."""
    copy_solutions(target)
    path = target / f"{module}.py"
    source = path.read_text()
    pairs = zip(old, new, strict=True) if isinstance(old, tuple) else [(old, new)]
    for before, after in pairs:
        if before not in source:
            raise AssertionError(f"mutant does not apply: {before!r} not in {module}.py")
        source = source.replace(before, after)
    path.write_text(source)
    return target


def failing(report) -> list:
    return [r for r in report.results if r.status.value != "passed"]


def message_ids(report) -> set[str]:
    return {m.id for r in report.results for m in r.messages}


def reference_answers() -> dict:
    """The reference answers to the verification questions (solutions/verification.toml)."""
    import tomllib

    from grader.questions import ANSWERS_FILE

    return tomllib.loads((course.solutions_dir() / ANSWERS_FILE).read_text(encoding="utf-8"))


def notebook_answer_cell(answers: dict | None = None) -> str:
    """A notebook code cell answering the questions' auto-graded parts, as the release asks."""
    answers = reference_answers() if answers is None else answers
    lines = []
    for qid, parts in answers.items():
        auto = {k: v for k, v in parts.items() if k != "written"}
        if auto:
            lines.append(f"answers_{qid} = {auto!r}")
    return "\n".join(lines) + "\n"


def ends_within(seconds, work):
    """Run ``work`` in a forked process; whether it ended within ``seconds`` (a hang, not a
    timing). Not a thread: a regular expression holds the interpreter's lock until it ends."""
    process = multiprocessing.get_context("fork").Process(target=work)
    process.start()
    process.join(seconds)
    if process.is_alive():
        process.kill()
        process.join()
        return False
    return process.exitcode == 0
