"""A Gradescope autograder bundle, and what runs inside it.

``normlab gradescope -o autograder.zip`` writes the zip Gradescope expects: ``setup.sh``
(installs bubblewrap and a venv with normlab from the wheel inside the zip, its dependencies
pinned by ``requirements.txt`` to the exact versions of the instructor's environment) and
``run_autograder`` (grades ``submission/`` and writes ``results/results.json``). The course
file (``normlab.toml``), when given, travels in the zip: its language, packages, limits and
``[gradescope]`` test visibility apply there. Gradescope lays a run out under ``/autograder``;
``AUTOGRADER_ROOT`` moves it, for testing here.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from grader import course, policy
from grader.handin import find_submission
from grader.integrations.gradescope_manual import manual_questions
from grader.report import reporters
from grader.report.store import write_atomic
from grader.runner import FINAL, Options, grade
from grader.settings import COURSE_FILE

SETUP_SH = r"""#!/usr/bin/env bash
# Gradescope runs this once, as root, when the autograder image is built.
set -euo pipefail
ROOT="${AUTOGRADER_ROOT:-/autograder}"
if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
  apt-get update -qq && apt-get install -y -qq --no-install-recommends bubblewrap python3-venv >/dev/null
fi
if [ -f "$ROOT/source/normlab.toml" ]; then export NORMLAB_COURSE_FILE="$ROOT/source/normlab.toml"; fi
python3 -m venv "$ROOT/normlab-venv"
"$ROOT/normlab-venv/bin/python" -m pip install --quiet --upgrade pip
# Exactly the versions the instructor graded with (requirements.txt), then normlab itself.
"$ROOT/normlab-venv/bin/python" -m pip install --quiet -r "$ROOT/source/requirements.txt"
"$ROOT/normlab-venv/bin/python" -m pip install --quiet --no-deps "$ROOT"/source/normlab-*.whl
# The interpreter environment student code runs in (numpy and the course's packages, at the
# versions above), apart from the grader.
"$ROOT/normlab-venv/bin/normlab" environment
"""

RUN_AUTOGRADER = r"""#!/usr/bin/env bash
# Gradescope runs this for every submission. normlab writes results/results.json itself.
set -euo pipefail
ROOT="${AUTOGRADER_ROOT:-/autograder}"
if [ -f "$ROOT/source/normlab.toml" ]; then export NORMLAB_COURSE_FILE="$ROOT/source/normlab.toml"; fi
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


def pinned_requirements(packages: tuple[str, ...] = ()) -> list[str]:
    """``name==version`` for every package normlab needs at run time (its dependencies, theirs,
    and so on) and the course's ``packages``, as installed here: the bundle installs exactly
    what the instructor graded with."""
    from importlib import metadata

    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    pins: dict[str, str] = {}
    todo = [Requirement(r) for r in metadata.requires("normlab") or []] + [Requirement(p) for p in packages]
    while todo:
        requirement = todo.pop()
        if requirement.marker is not None and not requirement.marker.evaluate({"extra": ""}):
            continue  # an optional extra, or another platform's dependency
        name = canonicalize_name(requirement.name)
        if name in pins:
            continue
        try:
            dist = metadata.distribution(requirement.name)
        except metadata.PackageNotFoundError:
            raise FileNotFoundError(
                f"{requirement.name} is not installed here, so its version cannot be pinned"
            ) from None
        pins[name] = f"{name}=={dist.version}"
        todo += [Requirement(r) for r in dist.requires or []]
    return sorted(pins.values())


def write_bundle(target: Path, course_file: Path | None = None) -> Path:
    """Write ``autograder.zip``: setup.sh, run_autograder, the normlab wheel, the pinned
    ``requirements.txt`` and, if given, the course file (a course directory's ``normlab.toml``,
    validated first)."""
    from grader.settings import load

    settings = load(environ={}, course_dir=course_file.parent if course_file else None)
    requirements = "\n".join(pinned_requirements(settings.packages)) + "\n"
    with tempfile.TemporaryDirectory() as tmp:
        wheel = _build_wheel(Path(tmp))
        target.parent.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(target, "w", compression=zipfile.ZIP_DEFLATED) as bundle:
            for name, text in (("setup.sh", SETUP_SH), ("run_autograder", RUN_AUTOGRADER)):
                info = zipfile.ZipInfo(name)
                info.external_attr = 0o755 << 16  # executable, as Gradescope requires
                bundle.writestr(info, text)
            bundle.write(wheel, wheel.name)
            bundle.writestr("requirements.txt", requirements)
            if course_file is not None:
                bundle.write(course_file, COURSE_FILE)
    return target


def written_questions(target: Path, lang: str = "en", course_policy: policy.Policy | None = None) -> Path:
    """Write, beside the bundle, the written parts as Gradescope manual questions: an outline
    to enter by hand (Gradescope has no import format for questions or rubric items), each with
    its title, points, prompts and rubric items (results.json carries the automatic tests
    only, Decision 8). For the instructor: never in the zip."""
    path = target.with_name(f"{target.stem}-written-questions.md")
    write_atomic(path, manual_questions(lang, course_policy or policy.Policy()))
    return path


def run(root: Path) -> int:
    """Grade ``root/submission`` and write ``root/results/results.json``; return an exit code."""
    results = root / "results"
    results.mkdir(parents=True, exist_ok=True)
    work, note = find_submission(root / "submission")
    # The upload's one answers file is read if none lies beside the work (a folder of modules
    # with verification.toml one level up, a notebook with it in another folder).
    # results.json: the questions' auto-graded parts only (Decision 8)
    options = Options(suites=FINAL, single=True, upload=root / "submission")
    settings = options.settings
    report = grade(work, options)
    if note is not None:
        report = dataclasses.replace(report, notes=(note, *report.notes))
    report = policy.apply(report, settings.policy)
    write_atomic(
        results / "results.json", reporters.to_gradescope(report, settings.lang, settings.gradescope_visibility)
    )
    return 0


if __name__ == "__main__":
    sys.exit(run(Path(sys.argv[1] if len(sys.argv) > 1 else "/autograder")))
