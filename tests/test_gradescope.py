"""The Gradescope bundle, run here against a directory laid out as Gradescope lays it out."""

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from helpers import notebook_answer_cell
from leakscan import leaks

from grader import course
from grader.course import MODULES
from grader.questions import ANSWERS_FILE, load, part_name
from grader.settings import current as current_settings

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def autograder(tmp_path_factory):
    """`normlab gradescope`, unzipped into source/ and set up with its own setup.sh."""
    root = tmp_path_factory.mktemp("gradescope") / "autograder"
    bundle = root.parent / "autograder.zip"
    out = subprocess.run(
        [sys.executable, "-m", "grader", "gradescope", "--output", str(bundle)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert out.returncode == 0, out.stderr
    with zipfile.ZipFile(bundle) as z:
        assert sorted(n for n in z.namelist() if not n.endswith(".whl")) == [
            "manual_questions.md",
            "run_autograder",
            "setup.sh",
        ]
        manual = z.read("manual_questions.md").decode()
        assert all(f"## {q.id} " in manual for q in load().questions if q.written)  # every written part
        z.extractall(root / "source")
    for name in ("setup.sh", "run_autograder"):
        (root / "source" / name).chmod(0o755)
    env = {**os.environ, "AUTOGRADER_ROOT": str(root)}
    setup = subprocess.run(
        ["bash", str(root / "source" / "setup.sh")], env=env, capture_output=True, text=True, timeout=900
    )
    assert setup.returncode == 0, setup.stderr[-3000:]
    return root, env


def _run(root: Path, env: dict, files: dict[str, str]) -> dict:
    submission = root / "submission"
    shutil.rmtree(submission, ignore_errors=True)
    shutil.rmtree(root / "results", ignore_errors=True)
    submission.mkdir()
    for name, text in files.items():
        (submission / name).write_text(text)
    out = subprocess.run(
        [str(root / "source" / "run_autograder")], env=env, capture_output=True, text=True, timeout=600
    )
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads((root / "results" / "results.json").read_text())


def test_reference_submission_gets_full_marks(autograder):
    root, env = autograder
    files = {f"{m}.py": (course.solutions_dir() / f"{m}.py").read_text() for m in MODULES}
    files[ANSWERS_FILE] = (course.solutions_dir() / ANSWERS_FILE).read_text()
    results = _run(root, env, files)
    assert results["score"] == sum(t["max_score"] for t in results["tests"]) > 100
    assert all(t["status"] == "passed" for t in results["tests"])
    # The questions' auto-graded parts are there; their written parts are graded in Gradescope.
    names = {t["number"] for t in results["tests"]}
    assert names >= {part_name(q.id, p.id) for q in load().questions for p in q.parts}
    assert not [n for n in names if "written" in n]
    if current_settings().require_sandbox:  # CI: the wheel-installed grader is fully sandboxed too
        assert results["extra_data"]["missing_layers"] == []


def test_stub_submission_scores_zero_with_messages(autograder):
    root, env = autograder
    files = {f"{m}.py": (course.exercises_dir() / f"{m}.py").read_text() for m in MODULES}
    files[ANSWERS_FILE] = (course.exercises_dir() / ANSWERS_FILE).read_text()
    results = _run(root, env, files)
    assert results["score"] == 0
    exercises = [t for t in results["tests"] if t["tags"][0] in MODULES]
    assert all("not implemented yet" in t["output"] for t in exercises)
    assert all("not answered yet" in t["output"] for t in results["tests"] if t not in exercises)
    assert leaks(json.dumps(results)) == []


def test_single_notebook_submission(autograder):
    root, env = autograder
    source = "\n\n".join((course.solutions_dir() / f"{m}.py").read_text() for m in MODULES)
    answers = notebook_answer_cell()
    notebook = {
        "cells": [{"cell_type": "code", "metadata": {}, "source": s, "outputs": []} for s in (source, answers)],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    results = _run(root, env, {"my_lab.ipynb": json.dumps(notebook)})
    assert results["score"] == sum(t["max_score"] for t in results["tests"])


def test_a_locale_spelled_the_posix_way_gives_portuguese_feedback(autograder):
    root, env = autograder
    files = {f"{m}.py": (course.exercises_dir() / f"{m}.py").read_text() for m in MODULES}
    results = _run(root, {**env, "NORMLAB_LANG": "pt_BR.UTF-8"}, files)
    outputs = " ".join(t["output"] for t in results["tests"])
    assert "ainda não foi implementada" in outputs and "not implemented yet" not in outputs
