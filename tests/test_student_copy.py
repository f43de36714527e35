"""The student's copy: the zip a student receives installs with pip as ``normlab-student`` and
checks their work from their own exercises folder, without the course an instructor keeps."""

import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from grader import course

ROOT = Path(__file__).resolve().parent.parent
HIDDEN_PARTS = ("suites", "solutions")


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """The student zip, unpacked and installed with pip into a folder of its own."""
    base = tmp_path_factory.mktemp("student")
    bundle = base / "student.zip"
    subprocess.run([sys.executable, "-m", "grader", "release", "--student-zip", bundle], cwd=ROOT, check=True)
    with zipfile.ZipFile(bundle) as z:
        z.extractall(base)
    target = base / "site"
    pip = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation"]
    subprocess.run([*pip, "--target", target, base / "normlab-student"], check=True)
    return target


def student_run(target: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``normlab ARGS`` with the installed student copy first on the path (the project's own
    editable install stays behind it: the test checks which one answered)."""
    env = {**os.environ, "PYTHONPATH": str(target)}
    code = "import grader, sys; print(grader.__file__, file=sys.stderr); from grader.cli import run; run()"
    return subprocess.run(
        [sys.executable, "-c", code, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )


def test_the_installed_copy_holds_no_hidden_suite_solution_or_question_key(installed):
    files = [p.relative_to(installed).as_posix() for p in installed.rglob("*") if p.is_file()]
    assert any(f.startswith("grader/_course/exercises/") for f in files)  # the exercises travel inside
    assert [f for f in files if set(f.split("/")) & set(HIDDEN_PARTS) or f.endswith("questions.toml")] == []


def test_a_student_checks_their_own_folder_with_the_installed_copy(installed, tmp_path):
    work = tmp_path / "exercises"
    shutil.copytree(course.exercises_dir(), work)
    untouched = student_run(installed, work, "check")
    assert str(installed / "grader") in untouched.stderr  # the student copy answered, not the project's
    total = re.search(r"Total: 0/(\d+)", untouched.stdout)
    assert untouched.returncode == 1 and total, untouched.stdout
    assert str(work) in untouched.stdout  # it says which folder it graded
    assert "still blank" in untouched.stdout and "q1:" in untouched.stdout  # the questions travel without keys
    for module in course.MODULES:
        shutil.copy(course.solutions_dir() / f"{module}.py", work / f"{module}.py")
    shutil.copy(course.solutions_dir() / "verification.toml", work / "verification.toml")
    solved = student_run(installed, work, "check")
    assert solved.returncode == 0, solved.stdout + solved.stderr
    assert f"Total: {total[1]}/{total[1]}" in solved.stdout and "still blank" not in solved.stdout
    # The checklist checks the config note as far as it can here, and says what the grader adds.
    listed = student_run(installed, work, "checklist", "--lang", "en")
    assert "The grader also checks it against the config you name" in listed.stdout, listed.stdout + listed.stderr


def test_the_installed_copy_refuses_a_final_grade(installed, tmp_path):
    work = tmp_path / "exercises"
    shutil.copytree(course.exercises_dir(), work)
    refused = student_run(installed, work, "grade", ".")
    assert refused.returncode == 2 and "grader fault" not in refused.stderr  # not a fault: a student copy
    assert "no hidden tests" in refused.stderr and "normlab check" in refused.stderr


def test_the_installed_copy_names_no_hidden_test_and_holds_no_answer_key(installed):
    """Instructor trial 29: the zip's descriptions.toml listed every hidden test with what it
    checks, and a docstring of the checker held q9(a)'s key as an example (the leak scan took
    everything in the zip for public, so it could not see either). The checker's files hold
    the public tests' descriptions only, and no answer key found nowhere else a student gets."""
    import tomllib

    descriptions = tomllib.loads((installed / "grader" / "descriptions.toml").read_text(encoding="utf-8"))
    full = tomllib.loads((course.PACKAGE / "descriptions.toml").read_text(encoding="utf-8"))
    assert sorted(descriptions) == sorted(k for k in full if "/public/" in k)
    bank = tomllib.loads((course.PACKAGE / "questions.toml").read_text(encoding="utf-8"))
    keys = {f"{p['answer']:g}" for q in bank["question"] for p in q.get("part", ()) if "answer" in p}
    keys = {k for k in keys if len(k) >= 4}  # "64" is everywhere; "1e-06" is every config's eps
    exercises = "\n".join(
        p.read_text(errors="replace") for p in (installed / "grader" / "_course").rglob("*") if p.is_file()
    )
    checker = {
        p.relative_to(installed).as_posix(): p.read_text(errors="replace")
        for p in (installed / "grader").rglob("*")
        if p.is_file() and "_course" not in p.parts and p.suffix in (".py", ".toml", ".json", ".j2", ".md")
    }
    found = [(name, key) for name, text in checker.items() for key in keys if key in text and key not in exercises]
    assert found == []
    # Red team 31: the class benchmark shipped a working rmsnorm, and a docstring a hidden test's name.
    from grader import stubs

    solution = {
        line
        for path in course.solutions_dir().glob("*.py")
        for line in stubs.solution_lines(path.read_text())
        if len(line) >= 25 and line not in exercises
    }
    hidden_names = {n for n in re.findall(r"^def (test_\w+)", _suite_text(), re.M) if n not in exercises}
    leaks = [(name, line) for name, text in checker.items() for line in solution | hidden_names if line in text]
    assert leaks == []


def _suite_text() -> str:
    return "\n".join(p.read_text() for p in course.suites_dir().glob("test_*.py"))
