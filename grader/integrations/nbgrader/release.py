"""Write an nbgrader course from the single source: ``solutions/``, the public tests and the
hidden suites.

``normlab release --course-dir DIR`` writes ``nbgrader_config.py`` and
``source/<assignment>/lab.ipynb`` (plus the config bank the notebook's last exercise reads).
The notebook is built with nbformat from jinja2 templates:

* locked markdown cells introduce each exercise (from the module docstrings);
* one solution cell per graded function, keeping its docstring and the solution region
  (``nbgrader generate_assignment`` replaces the region with a stub; the hint stays above it);
* provided helpers and imports in locked code cells;
* per exercise, a public test cell (the public tests, visible) and a hidden test cell (a call
  to :func:`grader.integrations.nbgrader.native.run_hidden` inside ``### BEGIN HIDDEN TESTS``), each worth the sum of
  its tests' points and answering with the points earned, which nbgrader reads as partial
  credit, so a cell scores exactly what ``normlab grade`` gives those tests;
* the verification questions (``question_cells.py``): per question, an answers code cell and a
  grade cell for its auto-graded parts, and a manually graded answer cell for its written part,
  with a rubric for graders.

The rubric is also written to ``normlab/<assignment>/rubric.md``, outside ``source/``.

An existing course is joined, never overwritten: an instructor's ``nbgrader_config.py`` is kept
as it is, with only the settings normlab needs and it lacks appended at its end (a value the
instructor chose is kept, and said); other assignments in ``source/`` are left alone; and an
assignment folder holding notebooks normlab did not write is refused, as is a config that
cannot be read or that points nbgrader at another course root.
"""

from __future__ import annotations

import ast
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import nbformat

from grader import course, discovery, policy
from grader.course import EXERCISES, MODULES, PLAIN_CHECKS
from grader.integrations.nbgrader import question_cells
from grader.integrations.nbgrader.words import Words
from grader.messages import Message
from grader.notebook import first_line
from grader.policy import Policy, PolicyError, scaled
from grader.public import ANSWERS_FILE
from grader.report import jinja
from grader.settings import COURSE_FILE
from grader.stubs import BEGIN

NOTEBOOK = "lab"
DEFAULT_ASSIGNMENT = "normlab"
COURSE_ID = "normlab"
CONFIG = "nbgrader_config.py"
NEEDED = {
    ("OverwriteCells", "add_missing_cells"): True,
    ("ExecutePreprocessor", "timeout"): 120,
    ("ExecutePreprocessor", "interrupt_on_timeout"): True,
}
"""What the course needs from nbgrader's config: deleted test cells put back, and time for the
hidden test cells on the native path."""
RESTORE = """\
# Hidden tests are restored at autograde without a warning for every honest student (nbgrader
# stores their checksum before it removes them from the release: jupyter/nbgrader#1961). A cell
# a student did change is still reported. Without normlab installed here, nbgrader's own.
try:
    from grader.integrations.nbgrader.restore import RestoreHiddenTests
    from nbgrader.preprocessors import CheckCellMetadata, ClearOutput, DeduplicateIds, OverwriteKernelspec

    c.Autograde.sanitize_preprocessors = [
        ClearOutput, DeduplicateIds, OverwriteKernelspec, RestoreHiddenTests, CheckCellMetadata
    ]
except ImportError:
    pass"""
"""The one setting normlab needs that is not a plain value: merged as a block."""
MERGED = "# --- added by `normlab release`: settings normlab needs (everything above is yours, kept) ---"
OURS = "rmsnorm-hidden"
"""A grade id only a notebook normlab wrote has."""


class ReleaseRefused(Exception):
    """The course cannot be written without destroying something of the instructor's."""

    def __init__(self, message: Message) -> None:
        super().__init__(message.id)
        self.message = message


@dataclass(frozen=True)
class Written:
    """What a release wrote, and what it chose not to change (to tell the instructor)."""

    paths: list[Path]
    notes: list[Message]


_HINT_LINE = re.compile(r"^(\s*)### BEGIN SOLUTION\s*hint:\s*(.*\S)\s*$")


def _meta(
    grade_id: str, *, grade: bool = False, solution: bool = False, locked: bool = False, points: float | None = None
) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "grade": grade,
        "solution": solution,
        "locked": locked,
        "grade_id": grade_id,
        "schema_version": 3,
    }
    if points is not None:
        meta["points"] = points
    return {"nbgrader": meta}


def _keep_hint(source: str) -> str:
    """Move each region's hint to a comment above it, where nbgrader's stub leaves it visible."""
    lines = []
    for line in source.splitlines():
        match = _HINT_LINE.match(line)
        if match:
            indent, hint = match.groups()
            lines += [f"{indent}# Hint: {hint}", f"{indent}{BEGIN}"]
        else:
            lines.append(line)
    return "\n".join(lines)


def _segments(source: str) -> tuple[str, list[tuple[str, ast.stmt, str]]]:
    """A module's docstring and its top-level statements with their source text."""
    tree = ast.parse(source)
    lines = source.splitlines()
    doc = ast.get_docstring(tree) or ""
    parts = []
    body = [n for n in tree.body if not (n is tree.body[0] and isinstance(n, ast.Expr) and doc)]
    for node, following in zip(body, [*body[1:], None], strict=True):
        # Up to the next statement, so trailing comments (an END SOLUTION marker) stay.
        end = first_line(following) - 1 if following is not None else len(lines)
        text = "\n".join(lines[first_line(node) - 1 : end]).rstrip()
        parts.append((type(node).__name__, node, text))
    return doc, parts


def _is_sibling_import(node: ast.stmt) -> bool:
    return isinstance(node, ast.ImportFrom) and node.module in MODULES


def public_test_points(exercise: str) -> tuple[list[str], str]:
    """The public tests of an exercise: their names and their source (imports left out)."""
    source = (course.exercises_dir() / f"test_{exercise}.py").read_text()
    _, parts = _segments(source)
    names = [node.name for _, node, _ in parts if isinstance(node, ast.FunctionDef) and node.name.startswith("test_")]
    # Keep the tests' own imports (json, pathlib...); never pytest or the student's modules.
    body = "\n\n\n".join(
        text
        for kind, node, text in parts
        if kind not in ("Import", "ImportFrom") or not (_is_sibling_import(node) or "pytest" in text)
    )
    return names, body


def hidden_points(exercise: str) -> float:
    return sum(test.points for test in discovery.hidden_suite(exercise))


def exercise_points(exercise: str, course_policy: Policy) -> tuple[float, float, float]:
    """(the factor the policy scales the exercise's tests by, its public test cell's points,
    its hidden test cell's points)."""
    public, hidden = float(len(public_test_points(exercise)[0])), hidden_points(exercise)
    factor = course_policy.factor(exercise, public + hidden)
    return factor, scaled(public, factor), scaled(hidden, factor)


def _test_cells(exercise: str, course_policy: Policy, lang: str = "en") -> list[nbformat.NotebookNode]:
    """The public and the hidden test cell, at the policy's points: 0 when the policy drops the
    exercise, whose cells stay grade cells (nbgrader cannot remove a cell once students have
    submitted, so dropping an exercise later only changes points)."""
    factor, public_points, hidden_points_ = exercise_points(exercise, course_policy)
    names, functions = public_test_points(exercise)
    words = Words(lang)
    public = jinja.render(
        "public_cell.py.j2",
        exercise=exercise,
        points=public_points,
        functions=functions,
        names=names,
        factor=factor,
        words=words,
    )
    hidden = jinja.render(
        "hidden_cell.py.j2", exercise=exercise, points=hidden_points_, factor=factor, lang=lang, words=words
    )
    return [
        nbformat.v4.new_code_cell(
            source,
            metadata=_meta(f"{exercise}-{kind}", grade=True, locked=True, points=points),
        )
        for kind, source, points in (("public", public, public_points), ("hidden", hidden, hidden_points_))
    ]


def _exercise_cells(number: int, exercise: str, course_policy: Policy, lang: str = "en") -> list[nbformat.NotebookNode]:
    """Intro, imports, one cell per function, then the public and the hidden test cell."""
    doc, parts = _segments((course.solutions_dir() / f"{exercise}.py").read_text())
    intro = jinja.render("exercise.md.j2", number=number, module=f"{exercise}.py", docstring=doc, words=Words(lang))
    cells = [nbformat.v4.new_markdown_cell(intro, metadata=_meta(f"{exercise}-intro", locked=True))]
    imports = [text for kind, node, text in parts if kind in ("Import", "ImportFrom") and not _is_sibling_import(node)]
    if imports:
        cells.append(nbformat.v4.new_code_cell("\n".join(imports), metadata=_meta(f"{exercise}-imports", locked=True)))
    for kind, node, text in parts:
        if kind in ("Import", "ImportFrom"):
            continue
        grade_id = f"{exercise}-{getattr(node, 'name', f'line{node.lineno}')}"
        if BEGIN in text:
            cells.append(nbformat.v4.new_code_cell(_keep_hint(text), metadata=_meta(grade_id, solution=True)))
        else:
            cells.append(nbformat.v4.new_code_cell(text, metadata=_meta(grade_id, locked=True)))
    return cells + _test_cells(exercise, course_policy, lang)


def grade_cell_points(course_policy: Policy) -> dict[str, float]:
    """Each grade cell's points under ``course_policy``, by grade id: what a release writes."""
    out: dict[str, float] = {}
    for exercise in EXERCISES:
        _, public, hidden = exercise_points(exercise, course_policy)
        out |= {f"{exercise}-public": public, f"{exercise}-hidden": hidden}
    return out | question_cells.grade_cell_points(course_policy)


def policy_mismatch(released: Any, course_policy: Policy) -> str | None:
    """Where a released notebook's grade cells disagree with ``course_policy`` (None if nowhere):
    nbgrader keeps each cell's maximum from the release, so scores under another policy would
    not fit them."""
    found = {
        cell.metadata["nbgrader"]["grade_id"]: float(cell.metadata["nbgrader"].get("points", 0))
        for cell in released.cells
        if cell.metadata.get("nbgrader", {}).get("grade")
    }
    wanted = grade_cell_points(course_policy)
    differ = sorted(k for k in found.keys() | wanted.keys() if abs(found.get(k, -1) - wanted.get(k, -1)) > 1e-6)
    if not differ:
        return None
    shown = ", ".join(
        f"{k} ({found.get(k, 'absent')} released, {wanted.get(k, 'absent')} by the policy)" for k in differ[:4]
    )
    return shown + (f" and {len(differ) - 4} more" if len(differ) > 4 else "")


def build_notebook(title: str | None = None, course_policy: Policy | None = None, lang: str = "en") -> Any:
    """The instructor's source notebook (solutions and hidden tests included), its grade cells
    worth what ``course_policy`` says (default: the suites' own points), its verification
    questions in the course's language ``lang`` (the exercises' text is the modules' own)."""
    course_policy = course_policy or Policy()
    auto_points = sum(sum(exercise_points(e, course_policy)[1:]) for e in EXERCISES)
    question_auto, manual_points = question_cells.points(course_policy)
    intro = jinja.render(
        "intro.pt-BR.md.j2" if lang == "pt-BR" else "intro.md.j2",
        title=title or Words(lang).say("title"),
        auto_points=auto_points + question_auto,
        manual_points=manual_points,
    )
    cells = [
        nbformat.v4.new_markdown_cell(intro, metadata=_meta("intro", locked=True)),
        nbformat.v4.new_code_cell(jinja.render("setup_cell.py.j2", lang=lang), metadata=_meta("setup", locked=True)),
    ]
    for number, exercise in enumerate(EXERCISES, start=1):
        cells += _exercise_cells(number, exercise, course_policy, lang)
    cells += question_cells.cells(_meta, course_policy, lang)
    nb = nbformat.v4.new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    return nb


def _course_language(course_file: Path, lang: str) -> str:
    """The language the course file names (``[grading] language``), else ``lang`` (trial 50: a
    course file that names none released an English notebook under ``--lang pt-BR``)."""
    import tomllib

    from grader.messages import chosen_language

    try:
        named = tomllib.loads(course_file.read_text(encoding="utf-8")).get("grading", {}).get("language")
        return chosen_language(named) if isinstance(named, str) else lang
    except (OSError, ValueError, AttributeError):  # said when the course is graded; here ``lang``
        return lang


def _course_file_text(lang: str = "en") -> str:
    """The course file, its limits calibrated on the reference (the defaults if it cannot be
    graded here, with the reason)."""
    from grader import calibration as cal
    from grader.faults import GraderFault
    from grader.sandbox.limits import Limits
    from grader.settings import current

    values: dict[str, Any] = {
        "floors": {"call": cal.CALL_FLOOR, "submission": cal.SUBMISSION_FLOOR},
        "multiples": {"call": cal.CALL_MULTIPLE, "submission": cal.SUBMISSION_MULTIPLE},
    }
    try:
        measured = cal.calibrate(current().replace(require_sandbox=False))
        values |= {"calibration": measured, "call_seconds": measured.call_seconds}
        values["submission_seconds"] = measured.submission_seconds
    except GraderFault as exc:
        defaults = Limits()
        values |= {"calibration": None, "reason": " ".join(str(exc)[:200].split())}
        values |= {"call_seconds": defaults.call_seconds, "submission_seconds": defaults.submission_seconds}
    return jinja.render("normlab.toml.j2", **values, **_default_points(), lang=lang).rstrip("\n") + "\n"


def _default_points() -> dict[str, list[tuple[str, float]]]:
    """Each item's points under the default policy, for the course file's commented defaults."""
    from grader import questions

    cells = grade_cell_points(Policy())
    automatic = [(e, cells[f"{e}-public"] + cells[f"{e}-hidden"]) for e in EXERCISES]
    bank = questions.load().questions
    automatic += [(q.id, q.auto_points) for q in bank if q.parts]
    return {"automatic": automatic, "written": [(q.id, q.written.points) for q in bank if q.written]}


def _merge_config(course_dir: Path) -> tuple[bool, list[Message]]:
    """Join an existing ``nbgrader_config.py``: append what normlab needs and it lacks; keep
    the rest. Returns whether it was changed, and notes on values kept."""
    from traitlets.config.loader import PyFileConfigLoader

    path = course_dir / CONFIG
    try:
        config = PyFileConfigLoader(CONFIG, path=str(course_dir)).load_config()
    except Exception as exc:  # whatever is wrong in the instructor's file, it is not touched
        raise ReleaseRefused(Message("release.config_unreadable", {"path": str(path), "reason": str(exc)})) from None
    root = config.get("CourseDirectory", {}).get("root")
    if root and Path(str(root)).resolve() != course_dir:
        raise ReleaseRefused(Message("release.config_root", {"path": str(path), "root": str(root)}))
    added, notes = [], []
    for (section, key), value in NEEDED.items():
        mine = config.get(section, {})
        if key not in mine:
            added.append(f"c.{section}.{key} = {value!r}")
        elif mine[key] != value:
            notes.append(
                Message(
                    "release.config_kept",
                    {"setting": f"{section}.{key}", "yours": repr(mine[key]), "ours": repr(value)},
                )
            )
    sanitize = config.get("Autograde", {}).get("sanitize_preprocessors")
    if sanitize is None:
        if "RestoreHiddenTests" not in path.read_text(encoding="utf-8"):  # the block, unimportable here
            added.append(RESTORE)
    elif "RestoreHiddenTests" not in repr(sanitize):
        ours = "[..., RestoreHiddenTests, ...]"
        notes.append(
            Message(
                "release.config_kept", {"setting": "Autograde.sanitize_preprocessors", "yours": "...", "ours": ours}
            )
        )
    if added:
        text = path.read_text(encoding="utf-8")
        path.write_text(text.rstrip("\n") + "\n\n" + MERGED + "\n" + "\n".join(added) + "\n", encoding="utf-8")
    return bool(added), notes


def _check_source(source: Path, assignment: str) -> None:
    """Refuse an assignment folder that holds notebooks normlab did not write."""
    if not source.is_dir():
        return
    for notebook in sorted(source.glob("*.ipynb")):
        try:
            cells = nbformat.read(str(notebook), as_version=4).cells
            ours = notebook.name == f"{NOTEBOOK}.ipynb" and any(
                c.metadata.get("nbgrader", {}).get("grade_id") == OURS for c in cells
            )
        except Exception:  # unreadable: certainly not something to overwrite
            ours = False
        if not ours:
            raise ReleaseRefused(Message("release.not_ours", {"assignment": assignment, "notebook": notebook.name}))


def write_course(course_dir: Path, assignment: str = DEFAULT_ASSIGNMENT, lang: str = "en") -> Written:
    """Write (or refresh) the nbgrader course files for ``assignment`` in a new or existing
    course; raises :class:`ReleaseRefused` before writing anything it would destroy. A new
    course file says ``lang``; the notebook's questions are in the course file's language."""
    course_dir = course_dir.resolve()
    source = course_dir / "source" / assignment
    _check_source(source, assignment)
    config = course_dir / CONFIG
    written: list[Path] = []
    notes: list[Message] = []
    if config.exists():
        changed, notes = _merge_config(course_dir)
        if changed:
            written.append(config)
    else:
        config.parent.mkdir(parents=True, exist_ok=True)
        config.write_text(jinja.render("nbgrader_config.py.j2", course_id=COURSE_ID, restore=RESTORE) + "\n")
        written.append(config)
    source.mkdir(parents=True, exist_ok=True)
    course_file = course_dir / COURSE_FILE
    if not course_file.exists():  # the instructor's own settings are never overwritten
        course_file.write_text(_course_file_text(lang), encoding="utf-8")
        written.append(course_file)
    elif "[limits]" not in course_file.read_text(encoding="utf-8"):
        notes.append(Message("release.limits_not_calibrated", {"path": str(course_file)}))
    try:
        course_policy = policy.from_course_file(course_file)
    except (PolicyError, ValueError) as exc:  # a TOML error is a ValueError
        reason = {"path": str(course_file), "reason": str(exc)}
        raise ReleaseRefused(Message("release.policy_invalid", reason)) from None
    notebook = source / f"{NOTEBOOK}.ipynb"
    language = _course_language(course_file, lang)
    nbformat.write(build_notebook(course_policy=course_policy, lang=language), str(notebook))
    written.append(notebook)
    bank = source / "configs"
    if bank.exists():
        shutil.rmtree(bank)
    shutil.copytree(course.exercises_dir() / "configs", bank)
    written.append(bank)
    # What the public test cells compare with, and their checks where normlab is absent.
    for name in (ANSWERS_FILE, PLAIN_CHECKS):
        shutil.copy2(course.exercises_dir() / name, source / name)
        written.append(source / name)
    rubric = course_dir / "normlab" / assignment / "rubric.md"
    rubric.parent.mkdir(parents=True, exist_ok=True)
    rubric.write_text(question_cells.rubric_markdown(course_policy), encoding="utf-8")
    written.append(rubric)
    return Written(written, notes)


__all__ = ["ReleaseRefused", "Written", "build_notebook", "write_course"]
