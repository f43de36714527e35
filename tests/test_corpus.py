"""Real-world notebooks are graded as Jupyter runs them (the corpus in ``tests/corpus/``).

Every corpus notebook is a complete, correct lab saved by a real editor (JupyterLab, VS Code,
Colab, the classic Notebook) with what real notebooks carry: plots, timing magics, shell
commands, failing scratch cells, imports the grading environment does not have. The ground
truth in ``tests/corpus/expected.json`` is what a real Jupyter kernel did with each notebook,
run top to bottom in an environment with numpy and matplotlib only
(``tests/corpus/run_in_jupyter.py``). From it:

* the score: full marks for every function Jupyter ends up defining. When Jupyter leaves a
  graded function undefined (a corpus notebook does that on purpose), the notebook must score
  what the reference scores without that function;
* the notes: every cell Jupyter could not run is mentioned in the report's notes.
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from functools import cache
from pathlib import Path

import pytest

from grader.course import MODULES

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "corpus"
EXPECTED = json.loads((CORPUS / "expected.json").read_text())
NOTEBOOKS: dict[str, dict] = EXPECTED["notebooks"]

CORPUS_EXERCISES = MODULES
"""Every exercise of the lab: each corpus notebook solves all of them (``tests/corpus/make_notebooks.py``)."""

pytestmark = pytest.mark.slow


def cell_is_mentioned(note_texts: list[str], cell: dict) -> bool:
    """Whether the report's notes mention a cell of the notebook.

    ``cell`` is a cell entry of ``expected.json`` (``index``: 0-based among all cells). The
    grader numbers cells from 1 among all cells, markdown included ("Cell 3: ...", "cell 3 has
    a syntax error"). The one place to change when the wording of the notes settles.
    """
    number = cell["index"] + 1
    pattern = re.compile(rf"\bc[eé]lula\s+{number}\b|\bcell\s+{number}\b", re.IGNORECASE)
    return any(pattern.search(text) for text in note_texts)


def grade(path: Path) -> dict:
    out = subprocess.run(
        [sys.executable, "-m", "grader", "grade", str(path), "--json", "--lang", "en"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "NORMLAB_LANG": "en"},
        timeout=300,
    )
    assert out.returncode == 0, f"normlab grade {path.name} exited {out.returncode}:\n{out.stderr[-2000:]}"
    data = json.loads(out.stdout)
    # The corpus is about the exercises: not the verification questions (the free-form notebooks
    # do not answer them).
    tests = [t for t in data["tests"] if t["exercise"] in CORPUS_EXERCISES]
    score, max_score = (round(sum(t[key] for t in tests), 6) for key in ("score", "max_score"))
    return {**data, "tests": tests, "score": score, "max_score": max_score}


def reference_without(missing: tuple[str, ...]) -> str:
    """One file holding the whole reference except the functions ``missing``."""
    parts = []
    for module in MODULES:
        source = (ROOT / "solutions" / f"{module}.py").read_text()
        lines = source.splitlines()
        for node in ast.parse(source).body:
            if isinstance(node, ast.ImportFrom) and node.module in MODULES:
                continue  # the sibling modules are in this same file
            if isinstance(node, ast.FunctionDef) and node.name in missing:
                continue
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
                continue  # module docstring
            parts.append("\n".join(lines[node.lineno - 1 : node.end_lineno]))
    return "\n\n\n".join(parts) + "\n"


@pytest.fixture(scope="module")
def reports() -> dict[str, dict]:
    """``normlab grade --json`` of every corpus notebook, two at a time."""
    names = sorted(NOTEBOOKS)
    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(zip(names, pool.map(lambda name: grade(CORPUS / "notebooks" / name), names), strict=True))


@cache
def _expected_score(missing: tuple[str, ...], tmp: Path) -> float:
    if not missing:
        return -1.0  # full marks: compared with the report's own max_score
    path = tmp / f"reference_without_{'_'.join(missing)}.py"
    path.write_text(reference_without(missing))
    return grade(path)["score"]


def test_every_corpus_notebook_has_ground_truth():
    on_disk = {p.name for p in (CORPUS / "notebooks").glob("*.ipynb")}
    assert on_disk == set(NOTEBOOKS), "re-run tests/corpus/run_in_jupyter.py"
    assert 20 <= len(on_disk) <= 40


@pytest.mark.parametrize("name", sorted(NOTEBOOKS))
def test_notebook_scores_what_jupyter_defines(name, reports, tmp_path_factory):
    report = reports[name]
    missing = tuple(NOTEBOOKS[name]["missing"])
    expected = _expected_score(missing, tmp_path_factory.getbasetemp())
    failing = sorted({t["name"].split("/")[0] for t in report["tests"] if t["status"] != "passed"})
    if not missing:
        assert report["score"] == report["max_score"], (
            f"{name}: {report['score']:g}/{report['max_score']:g}, but Jupyter defines every graded "
            f"function; failing: {failing}; notes: {report['notes']}"
        )
    else:
        assert report["score"] == expected, (
            f"{name}: {report['score']:g}/{report['max_score']:g}; Jupyter leaves {list(missing)} undefined, "
            f"which scores {expected:g}; failing: {failing}; notes: {report['notes']}"
        )


def names_a_skipped_import_binds(name: str) -> set[str]:
    """The names bound by the top-level imports of the cells where Jupyter (run where only
    numpy and matplotlib exist) stopped at a missing package. The grader skips such an import
    and runs the rest of the cell, as on the student's machine, so a later cell that failed in
    Jupyter only for want of one of these names runs here."""
    cells = json.loads((CORPUS / "notebooks" / name).read_text())["cells"]
    names: set[str] = set()
    for cell in NOTEBOOKS[name]["cells"]:
        if cell["status"] != "error" or cell.get("ename") != "ModuleNotFoundError":
            continue
        source = "".join(cells[cell["index"]]["source"])
        lines = [line for line in source.splitlines() if line.startswith(("import ", "from "))]
        for statement in ast.parse("\n".join(lines)).body:
            if isinstance(statement, (ast.Import, ast.ImportFrom)):
                names |= {alias.asname or alias.name.split(".")[0] for alias in statement.names}
    return names


@pytest.mark.parametrize("name", sorted(NOTEBOOKS))
def test_every_cell_jupyter_could_not_run_is_explained(name, reports):
    """nbgrader's own test cells are the exception: they are never run as the student's code
    (the release's hidden-test cells import a grader no kernel of the student's has), so there
    is nothing to explain about them. So is a cell that failed only for want of a name a
    skipped import binds (see ``names_a_skipped_import_binds``)."""
    notes = [note["text"] for note in reports[name]["notes"]]
    unblocked = names_a_skipped_import_binds(name)

    def needs_a_note(cell: dict) -> bool:
        missing = re.fullmatch(r"name '(\w+)' is not defined", cell.get("evalue", ""))
        return not (cell.get("ename") == "NameError" and missing and missing.group(1) in unblocked)

    unexplained = [
        f"cell {cell['index'] + 1} ({cell['ename']}: {cell['evalue'][:80]})"
        for cell in NOTEBOOKS[name]["cells"]
        if cell["status"] == "error"
        and not cell.get("nbgrader_test")
        and needs_a_note(cell)
        and not cell_is_mentioned(notes, cell)
    ]
    assert not unexplained, f"{name}: no note for {unexplained}; notes: {notes}"


FAILED_CELL = (
    "submission.cell_failed",
    "submission.cell_failed_silent",
    "submission.cell_syntax_error",
    "submission.cell_top_level_await",
    "submission.cell_crashed",
    "submission.cell_channel",
    "submission.cell_timeout",
)


@pytest.mark.parametrize("name", sorted(NOTEBOOKS))
def test_no_cell_jupyter_ran_is_reported_as_failing(name, reports):
    """The other way round: a cell Jupyter ran without an error runs here without one too
    (a plot, a widget, a display call), or what it defines after the failing line is lost."""
    ran = {cell["index"] + 1 for cell in NOTEBOOKS[name]["cells"] if cell["status"] == "ok"}
    wrong = [
        note["text"] for note in reports[name]["notes"] if note["id"] in FAILED_CELL and note["params"]["cell"] in ran
    ]
    assert not wrong, f"{name}: {wrong}"


@pytest.mark.parametrize("name", ["instructor_source.ipynb", "lab_autograded_hidden_tests.ipynb"])
def test_nbgrader_test_cells_are_never_run_as_student_code(name, reports):
    """Their failing import (``grader``) would be a note if they ran: there is none."""
    assert not [note for note in reports[name]["notes"] if "grader" in note["text"]]
    assert reports[name]["score"] == reports[name]["max_score"]


def test_the_reference_in_one_file_gets_full_marks(tmp_path):
    """The yardstick for notebooks that miss a function: the whole reference, in one file."""
    path = tmp_path / "reference.py"
    path.write_text(reference_without(()))
    report = grade(path)
    assert report["score"] == report["max_score"] > 100
