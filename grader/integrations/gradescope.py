"""A Gradescope autograder bundle, and what runs inside it.

``normlab gradescope -o autograder.zip`` writes the zip Gradescope expects: ``setup.sh``
(installs bubblewrap and a venv with normlab from the wheel inside the zip) and
``run_autograder`` (grades ``submission/`` and writes ``results/results.json``). Gradescope
lays a run out under ``/autograder``; ``AUTOGRADER_ROOT`` moves it, for testing here.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from grader import course
from grader.course import MODULES
from grader.integrations.nbgrader import question_cells
from grader.report import reporters
from grader.report.store import write_atomic
from grader.runner import FINAL, Options, grade

MANUAL_QUESTIONS = "manual_questions.md"
"""In the bundle: the written parts and their rubrics, for the instructor (never a student)."""

SETUP_SH = r"""#!/usr/bin/env bash
# Gradescope runs this once, as root, when the autograder image is built.
set -euo pipefail
ROOT="${AUTOGRADER_ROOT:-/autograder}"
if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
  apt-get update -qq && apt-get install -y -qq --no-install-recommends bubblewrap python3-venv >/dev/null
fi
python3 -m venv "$ROOT/normlab-venv"
"$ROOT/normlab-venv/bin/python" -m pip install --quiet --upgrade pip
"$ROOT/normlab-venv/bin/python" -m pip install --quiet "$ROOT"/source/normlab-*.whl
# The interpreter environment student code runs in (numpy, matplotlib), apart from the grader.
"$ROOT/normlab-venv/bin/normlab" environment
"""

RUN_AUTOGRADER = r"""#!/usr/bin/env bash
# Gradescope runs this for every submission. normlab writes results/results.json itself.
set -euo pipefail
ROOT="${AUTOGRADER_ROOT:-/autograder}"
exec "$ROOT/normlab-venv/bin/python" -m grader.integrations.gradescope "$ROOT"
"""


def _build_wheel(directory: Path) -> Path:
    """A wheel of this project (grader, hidden suites and the course inside)."""
    project = course.PACKAGE.parent
    if not (project / "pyproject.toml").is_file():
        raise FileNotFoundError("building a Gradescope bundle needs the normlab source checkout")
    args = [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(directory), str(project)]
    if importlib.util.find_spec("hatchling") is not None:
        args.insert(4, "--no-build-isolation")
    subprocess.run(args, check=True, capture_output=True, text=True)
    return next(directory.glob("normlab-*.whl"))


def write_bundle(target: Path) -> Path:
    """Write ``autograder.zip``: setup.sh, run_autograder, the normlab wheel and the written
    parts' rubric (``manual_questions.md``)."""
    with tempfile.TemporaryDirectory() as tmp:
        wheel = _build_wheel(Path(tmp))
        target.parent.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(target, "w", compression=zipfile.ZIP_DEFLATED) as bundle:
            for name, text in (("setup.sh", SETUP_SH), ("run_autograder", RUN_AUTOGRADER)):
                info = zipfile.ZipInfo(name)
                info.external_attr = 0o755 << 16  # executable, as Gradescope requires
                bundle.writestr(info, text)
            bundle.write(wheel, wheel.name)
            # The written parts are graded in Gradescope itself (Decision 8): the questions and
            # their rubric items, to set up as the assignment's manually graded questions.
            bundle.writestr(MANUAL_QUESTIONS, question_cells.rubric_markdown())
    return target


def find_submission(submission: Path) -> Path:
    """What to grade in Gradescope's ``submission/``: the module files (as a directory), else
    the one notebook, else the one ``.py`` file."""
    if any((submission / f"{m}.py").is_file() for m in MODULES):
        return submission
    for pattern in ("*.ipynb", "*.py"):
        found = sorted(submission.rglob(pattern))
        if len(found) == 1:
            return found[0]
    return submission


def run(root: Path) -> int:
    """Grade ``root/submission`` and write ``root/results/results.json``; return an exit code."""
    results = root / "results"
    results.mkdir(parents=True, exist_ok=True)
    options = Options(suites=FINAL)  # results.json: the questions' auto-graded parts only (Decision 8)
    report = grade(find_submission(root / "submission"), options)
    write_atomic(results / "results.json", reporters.to_gradescope(report, options.settings.lang))
    return 0


if __name__ == "__main__":
    sys.exit(run(Path(sys.argv[1] if len(sys.argv) > 1 else "/autograder")))
