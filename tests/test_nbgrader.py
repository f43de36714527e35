"""Release and grading through real nbgrader: both paths, on the same class of submissions.

One course is released with ``normlab release`` and ``nbgrader generate_assignment``; a class of
students submits (correct, partly correct, untouched, mangled, not JSON, and two tampering
ones). The class is graded twice, in two copies of the course: natively with
``nbgrader autograde`` and securely with ``normlab autograde``; grades are read back from
``nbgrader export``.
"""

import csv
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from leakscan import leaks
from notebooks import cell_index, filled, load, save

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
ENV = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
ASSIGNMENT = "normlab"
HONEST = ("alice", "bob", "carol")


def run(*args, cwd, check=True):
    out = subprocess.run([str(a) for a in args], cwd=cwd, env=ENV, capture_output=True, text=True, timeout=900)
    if check and out.returncode != 0:
        raise AssertionError(f"{args} exited {out.returncode}:\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}")
    return out


def normlab(*args, cwd, check=True):
    return run(sys.executable, "-m", "grader", *args, cwd=cwd, check=check)


def nbgrader(*args, cwd, check=True):
    return run(BIN / "nbgrader", *args, cwd=cwd, check=check)


def exported(course: Path) -> dict[str, float]:
    nbgrader("export", cwd=course)
    with open(course / "grades.csv", newline="") as handle:
        return {row["student_id"]: float(row["raw_score"]) for row in csv.DictReader(handle)}


def _submissions(course: Path) -> None:
    released = load(course / "release" / ASSIGNMENT / "lab.ipynb")
    source = load(course / "source" / ASSIGNMENT / "lab.ipynb")
    submitted = course / "submitted"

    def put(student, nb):
        save(nb, submitted / student / ASSIGNMENT / "lab.ipynb")
        (submitted / student / ASSIGNMENT / "timestamp.txt").write_text("2026-11-20 10:00:00.000000 UTC")

    put("alice", filled(released, source))
    rms = filled(released, source)["cells"][cell_index(released, "rmsnorm-rmsnorm")]["source"]
    put("bob", filled(released, source, {"rmsnorm-rmsnorm": rms.replace("np.sqrt(ms + eps)", "(np.sqrt(ms) + eps)")}))
    put("carol", released)

    # Correct code in a mangled notebook: deleted test cells, a duplicated solution cell, a
    # retyped cell, reordered cells, a renamed grade id and points edited to 100.
    dave = filled(released, source)
    cells = dave["cells"]
    duplicate = json.loads(json.dumps(cells[cell_index(dave, "layernorm-layernorm")]))
    cells[cell_index(dave, "residual-block")]["metadata"]["nbgrader"]["grade_id"] = "my-block"
    cells[cell_index(dave, "stack-public")]["metadata"]["nbgrader"]["points"] = 100
    cells[cell_index(dave, "intro")]["cell_type"] = "raw"
    moved = cells.pop(cell_index(dave, "inspect_config-inspect_config"))
    for grade_id in ("rmsnorm-public", "stack-hidden"):
        cells.pop(cell_index(dave, grade_id))
    cells.insert(2, moved)
    cells.append(duplicate)
    put("dave", dave)

    # Correct code whose own imports cells were deleted: in Jupyter and nbgrader, a public test
    # cell's "import numpy as np" binds np for the cells below it (trial 64).
    heidi = filled(released, source)
    heidi["cells"] = [c for c in heidi["cells"] if not _grade_id(c).endswith("-imports")]
    put("heidi", heidi)

    (submitted / "erin" / ASSIGNMENT).mkdir(parents=True)
    (submitted / "erin" / ASSIGNMENT / "lab.ipynb").write_text('{"cells": [ {"cell_type": "code", "sour')

    # Tampering: wrong rmsnorm plus the checks patched, in the kernel, to always agree.
    frank = filled(released, source, {"rmsnorm-rmsnorm": "def rmsnorm(x, gamma, eps=1e-6):\n    return x * 1.0\n"})
    frank["cells"].insert(
        3,
        {
            "cell_type": "code",
            "metadata": {},
            "outputs": [],
            "execution_count": None,
            "source": "import grader.checks\ngrader.checks.expect_array = lambda *a, **k: None\n",
        },
    )
    put("frank", frank)

    # Tampering: nothing implemented, and an IPython input transformer that blanks test cells.
    grace = json.loads(json.dumps(released))
    grace["cells"].insert(
        2,
        {
            "cell_type": "code",
            "metadata": {},
            "outputs": [],
            "execution_count": None,
            "source": "get_ipython().input_transformers_cleanup.append(\n"
            "    lambda lines: ['pass\\n'] if any('_run_public' in l or 'run_hidden' in l or 'score_answers' in l"
            " for l in lines) else lines)\n",
        },
    )
    put("grace", grace)


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    base = tmp_path_factory.mktemp("nbgrader") / "course"
    normlab("release", "--course-dir", base, "--assignment", ASSIGNMENT, cwd=ROOT)
    nbgrader("generate_assignment", ASSIGNMENT, cwd=base)
    _submissions(base)
    return base


@pytest.fixture(scope="module")
def native(course):
    """The class graded by `nbgrader autograde` (tests run in each student's kernel)."""
    copy = course.parent / "native"
    shutil.copytree(course, copy)
    out = nbgrader("autograde", ASSIGNMENT, "--create", cwd=copy, check=False)  # erin's notebook makes it exit 1
    (copy / "autograde.log").write_text(out.stdout + out.stderr)
    nbgrader("generate_feedback", ASSIGNMENT, cwd=copy, check=False)
    return copy, exported(copy)


@pytest.fixture(scope="module")
def secure(course):
    """The class graded by `normlab autograde` (sandboxed), grades written through nbgrader's API."""
    copy = course.parent / "secure"
    shutil.copytree(course, copy)
    out = normlab("autograde", ASSIGNMENT, "--course-dir", copy, "--no-progress", cwd=ROOT)
    return copy, exported(copy), out.stdout


def auto_points(course: Path) -> float:
    nb = load(course / "release" / ASSIGNMENT / "lab.ipynb")
    return sum(
        c["metadata"]["nbgrader"].get("points", 0)
        for c in nb["cells"]
        if c["metadata"].get("nbgrader", {}).get("grade") and c["cell_type"] == "code"
    )


def test_release_validates_with_nbgrader(course, tmp_path):
    released = course / "release" / ASSIGNMENT / "lab.ipynb"
    untouched = nbgrader("validate", released, cwd=course, check=False)
    assert "The following cell failed" in untouched.stdout + untouched.stderr
    good = save(filled(load(released), load(course / "source" / ASSIGNMENT / "lab.ipynb")), tmp_path / "lab.ipynb")
    shutil.copytree(course / "release" / ASSIGNMENT / "configs", tmp_path / "configs")
    passed = nbgrader("validate", good, cwd=tmp_path, check=False)
    assert "Success! Your notebook passes all the tests." in passed.stdout, passed.stdout[-2000:]


def _grade_id(cell: dict) -> str:
    return str(cell["metadata"].get("nbgrader", {}).get("grade_id", ""))


def test_a_name_only_a_test_cell_imports_is_bound_as_in_jupyter(course, native, secure):
    """Trial 64: with its imports cells deleted, a correct notebook scored 287 under nbgrader
    (the public test cells import numpy, json and Path) and 28/287 under normlab, which ran no
    part of a test cell. A test cell's imports now run where it stands; its tests never do."""
    _, native_grades = native
    _, secure_grades, _ = secure
    assert native_grades["heidi"] == auto_points(course)
    assert secure_grades["heidi"] == native_grades["heidi"]


def test_native_path_grades_the_honest_submissions(course, native):
    _, grades = native
    assert grades["alice"] == auto_points(course)
    assert grades["carol"] == 0
    assert 0 < grades["bob"] < grades["alice"]


def test_both_paths_agree_on_every_honest_submission(native, secure):
    _, native_grades = native
    _, secure_grades, _ = secure
    for student in HONEST:
        assert secure_grades[student] == native_grades[student], student


def _warnings_by_student(log: str) -> dict[str, list[str]]:
    """nbgrader's autograde warnings, under the student whose notebook was being graded."""
    found: dict[str, list[str]] = {}
    student = None
    for line in log.splitlines():
        if "Creating/updating student with ID" in line:
            student = line.split("'")[1]
        elif "WARNING" in line and "AutogradeApp" in line and student is not None:
            found.setdefault(student, []).append(line)
    return found


def test_the_native_path_warns_only_about_cells_a_student_changed(native):
    """nbgrader's own OverwriteCells warns about every hidden-test cell of every honest student
    (jupyter/nbgrader#1961); the release's config restores them quietly, and still reports a
    locked cell a student did change (dave moved and retyped cells)."""
    copy, _ = native
    warned = _warnings_by_student((copy / "autograde.log").read_text())
    assert {student: warned.get(student, []) for student in HONEST} == {student: [] for student in HONEST}
    assert any("has changed" in line for line in warned.get("dave", [])), warned.get("dave")


def test_validate_says_which_public_tests_failed(course, tmp_path):
    """A student's `nbgrader validate` names the failing public tests instead of nbgrader's
    bare "Partial credit"; a solved notebook validates clean of them."""
    released = load(course / "release" / ASSIGNMENT / "lab.ipynb")
    source = load(course / "source" / ASSIGNMENT / "lab.ipynb")
    rms = filled(released, source)["cells"][cell_index(released, "rmsnorm-rmsnorm")]["source"]
    wrong = filled(released, source, {"rmsnorm-rmsnorm": rms.replace("np.sqrt(ms + eps)", "(np.sqrt(ms) + eps)")})
    folder = tmp_path / "work"
    shutil.copytree(course / "release" / ASSIGNMENT, folder)
    save(wrong, folder / "lab.ipynb")
    out = nbgrader("validate", folder / "lab.ipynb", cwd=folder, check=False).stdout
    rmsnorm_cell = out.split("# Public tests for rmsnorm")[1].split("=====")[0]
    assert "public tests failed" in rmsnorm_cell and "FAIL  " in rmsnorm_cell, rmsnorm_cell
    assert "Partial credit" not in out.split("# Public tests for layernorm")[0]
    assert "# Public tests for layernorm" not in out  # layernorm is solved: its cell passes


def test_only_normlab_denies_the_tampering_submissions(course, native, secure):
    _, native_grades = native
    _, secure_grades, _ = secure
    full = auto_points(course)
    assert native_grades["grace"] == full  # nbgrader: blanked test cells pass
    assert secure_grades["grace"] == 0
    assert native_grades["frank"] > secure_grades["frank"]  # patched checks pass in nbgrader's kernel
    assert secure_grades["frank"] < full


def test_normlab_grades_mangled_and_broken_notebooks(course, secure):
    _, grades, stdout = secure
    assert grades["dave"] == auto_points(course)  # correct code; the cell structure does not matter
    assert grades["erin"] == 0
    assert "8 graded" in stdout and "0 not graded" in stdout


def test_the_run_ends_with_the_class_summary(secure):
    course, _, stdout = secure
    assert "class summary: 8 graded now, 0 graded before, 0 not graded; 3 with full marks" in stdout
    assert "tests failed most often (among the 5 students whose automatic score is above zero):" in stdout
    assert "slowest gradings:" in stdout
    image = course / "feedback" / f"normlab-scores-{ASSIGNMENT}.png"
    assert f"score histogram: {image}" in stdout
    assert image.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # The printed maximum is the automatic points; nbgrader's max_score adds the written answers.
    from grader.questions import load as load_bank

    written = sum(q.written.points for q in load_bank().questions if q.written is not None)
    assert f"the written answers, {written:g} points more, are graded by hand and not in them" in stdout


def test_manual_questions_reach_formgrader(secure):
    from nbgrader.api import Gradebook

    course, _, _ = secure
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        alice = gb.find_submission_notebook("lab", ASSIGNMENT, "alice")
        manual = [g for g in alice.grades if g.cell.cell_type == "markdown"]
        assert len(manual) == 10 and all(g.needs_manual_grade and g.auto_score is None for g in manual)
        carol = gb.find_submission_notebook("lab", ASSIGNMENT, "carol")
        assert all(
            g.auto_score == 0 and not g.needs_manual_grade for g in carol.grades if g.cell.cell_type == "markdown"
        )
        assert alice.needs_manual_grade and not carol.needs_manual_grade
    notebook = load(course / "autograded" / "alice" / ASSIGNMENT / "lab.ipynb")
    assert any("norms rescale" in "".join(c["source"]) for c in notebook["cells"])
    # formgrader shows her answers to the auto-graded parts, and each question's verdicts.
    assert any("answers_q1 = {'a': 'b'" in "".join(c["source"]) for c in notebook["cells"])
    q1 = next(c for c in notebook["cells"] if c["metadata"].get("nbgrader", {}).get("grade_id") == "q1-auto")
    assert "PASS" in "".join(q1["outputs"][0]["text"]) and "FAIL" not in "".join(q1["outputs"][0]["text"])


def test_feedback_is_written_and_leaks_nothing(secure, native):
    course, _, _ = secure
    for student in ("alice", "bob", "carol", "dave", "erin", "frank", "grace"):
        page = (course / "autograded" / student / ASSIGNMENT / "normlab-feedback.html").read_text()
        assert "<table>" in page
        # Students who submitted the reference's code may see their own code in tracebacks.
        assert leaks(page, solutions=student in ("carol", "erin", "grace")) == [], student
    # nbgrader's own feedback from the untouched student's notebooks, on both course.
    for root, _ in (native, (course, None)):
        carol = root / "feedback" / "carol" / ASSIGNMENT / "lab.html"
        assert carol.is_file() or root == course
        if carol.is_file():
            assert leaks(carol.read_text()) == []


def test_student_facing_release_leaks_nothing(course, tmp_path):
    released = (course / "release" / ASSIGNMENT / "lab.ipynb").read_text()
    assert leaks(json.dumps([c["source"] for c in json.loads(released)["cells"]])) == []
    assert leaks((course / "source" / ASSIGNMENT / "lab.ipynb").read_text())  # the scan can find leaks
    bundle = tmp_path / "student.zip"
    normlab("release", "--student-zip", bundle, cwd=ROOT)
    import zipfile

    with zipfile.ZipFile(bundle) as z:
        names = z.namelist()
        text = "\n".join(z.read(n).decode("utf-8", "replace") for n in names)
    assert not [n for n in names if "/suites/" in n or "solutions" in n or n.endswith("questions.toml")]
    assert leaks(text) == []


def test_a_rerun_resumes_without_regrading(secure):
    course, grades, _ = secure
    again = normlab("autograde", ASSIGNMENT, "--course-dir", course, "--no-progress", cwd=ROOT).stdout
    assert "0 graded, 8 unchanged" in again
    report = course / "normlab" / ASSIGNMENT / "reports" / "bob.json"
    stamp = report.stat().st_mtime_ns
    (course / "normlab" / ASSIGNMENT / "done" / "bob").unlink()  # interrupted after grading bob
    resumed = normlab("autograde", ASSIGNMENT, "--course-dir", course, "--no-progress", cwd=ROOT).stdout
    summary = "0 graded, 7 unchanged since the last run, 0 not graded, 1 graded by an earlier run, published now"
    assert summary in resumed
    assert "bob" in resumed and "(graded by an earlier run)" in resumed
    assert report.stat().st_mtime_ns == stamp  # the stored report was reused, not regraded
    assert exported(course) == grades


def test_a_dask_cluster_on_loopback_grades_the_same(course, secure):
    from distributed import LocalCluster

    copy = course.parent / "dask"
    shutil.copytree(course, copy)
    # A free dashboard port (None still means 8787): another cluster on the host must not collide.
    with LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=":0"
    ) as cluster:
        out = normlab(
            "autograde",
            ASSIGNMENT,
            "--course-dir",
            copy,
            "--no-progress",
            "--scheduler",
            cluster.scheduler_address,
            cwd=ROOT,
        )
    assert "8 graded" in out.stdout
    _, secure_grades, _ = secure
    assert exported(copy) == secure_grades


def test_written_answers_round_trip_question_by_question(secure, tmp_path):
    """One page per question (every answer, the rubric as checkboxes), ticked, imported: the
    points land in the gradebook and in nbgrader's class CSV."""
    course, before, _ = secure
    copy = tmp_path / "course"
    shutil.copytree(course, copy)
    page = normlab("written", "export", ASSIGNMENT, "q1", "--course-dir", copy, cwd=ROOT).stdout
    assert "## student: alice" in page and "norms rescale" in page and page.count("- [ ] item 1 ") == len(before)
    carol = page.split("## student: carol")[1].split("## student:")[0]
    assert "(no answer)" in carol
    alice = page.split("## student: alice")[1].split("## student:")[0]
    ticked = alice.replace("- [ ] item 1 ", "- [x] item 1 ").replace("- [ ] item 3 ", "- [x] item 3 ")
    (tmp_path / "q1.md").write_text(page.replace(alice, ticked, 1))  # alice comes first
    out = normlab("written", "import", tmp_path / "q1.md", "--course-dir", copy, cwd=ROOT).stdout
    assert "alice                    1.5" in out
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{copy / 'gradebook.db'}") as gb:
        grade = gb.find_grade("q1-answer", "lab", ASSIGNMENT, "alice")
        assert grade.manual_score == 1.5 and not grade.needs_manual_grade
    after = exported(copy)
    assert after["alice"] == before["alice"] + 1.5 and after["bob"] == before["bob"]
    # Exported again, the page says alice's grade; --ungraded leaves her out.
    again = normlab("written", "export", ASSIGNMENT, "q1", "--course-dir", copy, cwd=ROOT).stdout
    assert "Graded earlier: 1.5 points" in again.split("## student: alice")[1].split("## student:")[0]
    assert "Graded earlier" not in again.split("## student: bob")[1].split("## student:")[0]  # bob answered
    rest = normlab("written", "export", ASSIGNMENT, "q1", "--ungraded", "--course-dir", copy, cwd=ROOT).stdout
    assert "## student: alice" not in rest and "## student: bob" in rest
    with Gradebook(f"sqlite:///{copy / 'gradebook.db'}") as gb:  # as a regrade of a changed answer leaves it
        gb.find_grade("q1-answer", "lab", ASSIGNMENT, "alice").needs_manual_grade = True
        gb.db.commit()
    rest = normlab("written", "export", ASSIGNMENT, "q1", "--ungraded", "--course-dir", copy, cwd=ROOT).stdout
    assert "the answer changed since: grade it again" in rest.split("## student: alice")[1]
    # A page that is not ours, or a ticked item the rubric does not have, is refused.
    (tmp_path / "bad.md").write_text(page.replace(alice, alice.replace("- [ ] item 1 ", "- [x] item 9 ")))
    refused = run(
        sys.executable,
        "-m",
        "grader",
        "written",
        "import",
        tmp_path / "bad.md",
        "--course-dir",
        copy,
        cwd=ROOT,
        check=False,
    )
    assert refused.returncode == 2 and "rubric" in refused.stderr


# -- late submissions, re-scoring and regrading one student ----------------------------------

DUE = "2026-11-20 12:00:00 UTC"  # alice hands in at 10:00 (on time), bob the next day (late)


def exported_rows(course: Path) -> dict[str, dict[str, str]]:
    nbgrader("export", cwd=course)
    with open(course / "grades.csv", newline="") as handle:
        return {row["student_id"]: row for row in csv.DictReader(handle)}


def _set_policy(course: Path, lines: str) -> None:
    with open(course / "nbgrader_config.py", "a") as handle:
        handle.write("\n" + lines + "\n")


def _late_class(course: Path, base: Path) -> Path:
    """A copy of ``course`` with alice on time, bob a day late and nbgrader's zero-for-late policy."""
    shutil.copytree(course, base)
    for student in os.listdir(base / "submitted"):
        if student not in ("alice", "bob"):
            shutil.rmtree(base / "submitted" / student)
    (base / "submitted" / "bob" / ASSIGNMENT / "timestamp.txt").write_text("2026-11-21 10:00:00.000000 UTC")
    nbgrader("db", "assignment", "add", ASSIGNMENT, "--duedate", DUE, cwd=base)
    _set_policy(base, 'c.LateSubmissionPlugin.penalty_method = "zero"')
    return base


@pytest.fixture(scope="module")
def late(course):
    """Alice on time, bob a day late, nbgrader's zero-for-late policy: graded both ways."""
    base = _late_class(course, course.parent / "late")
    native = course.parent / "late-native"
    shutil.copytree(base, native)
    nbgrader("autograde", ASSIGNMENT, "--create", cwd=native)
    out = normlab("autograde", ASSIGNMENT, "--course-dir", base, "--no-progress", cwd=ROOT)
    return base, native, out.stdout


def test_late_policy_is_nbgraders_own_with_the_same_numbers(late):
    base, native, stdout = late
    ours, theirs = exported_rows(base), exported_rows(native)
    for student in ("alice", "bob"):
        for column in ("raw_score", "late_submission_penalty", "score"):
            assert float(ours[student][column]) == float(theirs[student][column]), (student, column)
    assert float(ours["bob"]["raw_score"]) > 0 and float(ours["bob"]["score"]) == 0
    assert float(ours["alice"]["late_submission_penalty"]) == 0
    assert "late penalty" in stdout
    page = (base / "autograded" / "bob" / ASSIGNMENT / "normlab-feedback.html").read_text()
    assert "Handed in late" in page
    assert "Handed in late" not in (base / "autograded" / "alice" / ASSIGNMENT / "normlab-feedback.html").read_text()


def test_a_new_due_date_or_policy_rescores_without_grading_again(late):
    base, _, _ = late
    reports = base / "normlab" / ASSIGNMENT / "reports"
    stamps = {p.name: p.stat().st_mtime_ns for p in reports.iterdir()}
    raw = float(exported_rows(base)["bob"]["raw_score"])

    nbgrader("db", "assignment", "add", ASSIGNMENT, "--duedate", "2026-11-22 12:00:00 UTC", cwd=base)
    out = normlab("autograde", ASSIGNMENT, "--course-dir", base, "--no-progress", cwd=ROOT).stdout
    assert "0 graded" in out and "re-scored" in out, out
    assert float(exported_rows(base)["bob"]["score"]) == raw
    assert "Handed in late" not in (base / "autograded" / "bob" / ASSIGNMENT / "normlab-feedback.html").read_text()

    nbgrader("db", "assignment", "add", ASSIGNMENT, "--duedate", DUE, cwd=base)
    normlab("autograde", ASSIGNMENT, "--course-dir", base, "--no-progress", cwd=ROOT)
    assert float(exported_rows(base)["bob"]["score"]) == 0

    _set_policy(base, 'c.LateSubmissionPlugin.penalty_method = "none"')
    out = normlab("autograde", ASSIGNMENT, "--course-dir", base, "--no-progress", cwd=ROOT).stdout
    assert "re-scored" in out and float(exported_rows(base)["bob"]["score"]) == raw
    again = normlab("autograde", ASSIGNMENT, "--course-dir", base, "--no-progress", cwd=ROOT).stdout
    assert "0 graded, 2 unchanged" in again and "re-scored" not in again
    assert {p.name: p.stat().st_mtime_ns for p in reports.iterdir()} == stamps  # the sandbox never ran again


FAILING_LATE_POLICY = """
from nbgrader.plugins import LateSubmissionPlugin


class Failing(LateSubmissionPlugin):
    def late_submission_penalty(self, student_id, score, total_seconds_late):
        raise RuntimeError("the course's late policy failed")
"""


def test_a_student_whose_rows_fail_half_way_leaves_none_and_the_run_goes_on(course, tmp_path, monkeypatch):
    # The course's own late-policy plugin fails for a late student, after that student's grades
    # are written: none of the student's rows may stay, and the next student is written through
    # the same open gradebook.
    from nbgrader.api import Gradebook

    from grader.integrations.nbgrader.gradebook import ClassGradebook, course_config
    from grader.model import Late, Report

    base = tmp_path / "course"
    shutil.copytree(course, base)
    (base / "failing_late_policy.py").write_text(FAILING_LATE_POLICY)
    monkeypatch.syspath_prepend(str(base))
    _set_policy(base, 'c.AssignLatePenalties.plugin_class = "failing_late_policy.Failing"')
    nbgrader("db", "assignment", "add", ASSIGNMENT, "--duedate", DUE, cwd=base)
    report = Report(submission="lab.ipynb", results=(), suites=("public", "hidden"))
    with ClassGradebook(course_config(base)) as book:
        with pytest.raises(RuntimeError, match="late policy failed"):
            book.record(ASSIGNMENT, "late", report, set(), "2026-11-21 10:00:00 UTC")
        assert book.record(ASSIGNMENT, "ontime", report, set(), "2026-11-20 10:00:00 UTC") == Late()
    with Gradebook(f"sqlite:///{base / 'gradebook.db'}") as gb:
        assert "late" not in {s.id for s in gb.students}
        grades = [g for nb in gb.find_submission(ASSIGNMENT, "ontime").notebooks for g in nb.grades]
        assert grades and all(g.auto_score == 0.0 for g in grades)  # nothing answered: every cell scored 0


def test_one_student_is_regraded_on_request(late):
    base, _, _ = late
    reports = base / "normlab" / ASSIGNMENT / "reports"
    before = {name: (reports / f"{name}.json").stat().st_mtime_ns for name in ("alice", "bob")}
    out = normlab("autograde", ASSIGNMENT, "--course-dir", base, "--student", "bob", "--no-progress", cwd=ROOT)
    assert "1 graded, 0 unchanged" in out.stdout and "alice" not in out.stdout, out.stdout
    assert (reports / "bob.json").stat().st_mtime_ns != before["bob"]
    assert (reports / "alice.json").stat().st_mtime_ns == before["alice"]
    both = normlab("autograde", ASSIGNMENT, "--course-dir", base, "--student", "bob", "--student", "alice", cwd=ROOT)
    assert "2 graded" in both.stdout
    typo = run(
        sys.executable,
        "-m",
        "grader",
        "autograde",
        ASSIGNMENT,
        "--course-dir",
        base,
        "--student",
        "bobb",
        cwd=ROOT,
        check=False,
    )
    assert typo.returncode == 2 and "bobb" in typo.stderr


def test_an_extension_rescores_that_student(late):
    import datetime

    from nbgrader.api import Gradebook

    base, _, _ = late
    _set_policy(base, 'c.LateSubmissionPlugin.penalty_method = "zero"')
    normlab("autograde", ASSIGNMENT, "--course-dir", base, "--no-progress", cwd=ROOT)
    rows = exported_rows(base)
    assert float(rows["bob"]["score"]) == 0 < float(rows["bob"]["raw_score"])
    with Gradebook(f"sqlite:///{base / 'gradebook.db'}") as gb:
        gb.update_or_create_submission(ASSIGNMENT, "bob", extension=datetime.timedelta(days=2))
    out = normlab("autograde", ASSIGNMENT, "--course-dir", base, "--no-progress", cwd=ROOT).stdout
    assert "1 re-scored" in out and "1 unchanged" in out, out  # bob only
    rows = exported_rows(base)
    assert float(rows["bob"]["score"]) == float(rows["bob"]["raw_score"]) > 0


# -- releasing into an existing course -------------------------------------------------------

EDITED = (
    'c = get_config()  # noqa\nc.CourseDirectory.course_id = "phys101"\nc.ExecutePreprocessor.timeout = 300\n# mine\n'
)


def test_release_joins_an_existing_course_and_keeps_its_config(tmp_path):
    import nbformat

    base = tmp_path / "course"
    (base / "source" / "ps1").mkdir(parents=True)
    ps1 = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# Problem set 1")])
    nbformat.write(ps1, str(base / "source" / "ps1" / "ps1.ipynb"))
    config = base / "nbgrader_config.py"
    config.write_text(EDITED)
    out = normlab("release", "--course-dir", base, "--assignment", ASSIGNMENT, cwd=ROOT).stdout
    text = config.read_text()
    assert text.startswith(EDITED)  # every line of the instructor's kept, in place
    assert "c.OverwriteCells.add_missing_cells = True" in text and text.count("course_id") == 1
    assert "ExecutePreprocessor.timeout = 120" not in text and "Kept your ExecutePreprocessor.timeout = 300" in out
    normlab("release", "--course-dir", base, "--assignment", ASSIGNMENT, cwd=ROOT)
    assert config.read_text() == text  # a second release changes nothing
    for assignment in ("ps1", ASSIGNMENT):
        nbgrader("generate_assignment", assignment, cwd=base)
    listed = nbgrader("db", "assignment", "list", cwd=base).stdout
    assert "ps1" in listed and ASSIGNMENT in listed
    assert (base / "release" / "ps1" / "ps1.ipynb").is_file() and (
        base / "release" / ASSIGNMENT / "lab.ipynb"
    ).is_file()

    def refused(*args):
        out = run(sys.executable, "-m", "grader", "release", "--course-dir", base, *args, cwd=ROOT, check=False)
        assert out.returncode == 2, out
        return out.stderr

    before = (base / "source" / "ps1" / "ps1.ipynb").read_bytes()
    assert "ps1.ipynb, which normlab did not write" in refused("--assignment", "ps1")
    assert (base / "source" / "ps1" / "ps1.ipynb").read_bytes() == before and not (
        base / "source" / "ps1" / "lab.ipynb"
    ).exists()
    config.write_text(EDITED + "c.Oops(\n")
    assert "cannot be read as an nbgrader config" in refused("--assignment", ASSIGNMENT)
    assert config.read_text() == EDITED + "c.Oops(\n"
    config.write_text(EDITED + f"c.CourseDirectory.root = {str(tmp_path / 'elsewhere')!r}\n")
    assert "another course directory" in refused("--assignment", ASSIGNMENT)


def test_feedback_and_report_say_which_points_are_left_to_grade_by_hand(course, late):
    from grader.questions import load

    manual = sum(q.written.points for q in load().questions if q.written)
    sentence = f"{manual:g} more points, for the written answers, are still to be graded by hand"
    base, _, _ = late
    for student in ("alice", "bob"):
        assert sentence in (base / "autograded" / student / ASSIGNMENT / "normlab-feedback.html").read_text()
    # Trial 61: a notebook with every written answer blank was told they were still to come.
    notebook = normlab("grade", course / "release" / ASSIGNMENT / "lab.ipynb", cwd=ROOT).stdout
    assert notebook.splitlines()[-1] == f"The written answers left blank, worth {manual:g} points, score nothing."
    assert sentence not in notebook
    assert "graded by hand" not in normlab("grade", ROOT / "solutions", "-k", "rmsnorm", cwd=ROOT).stdout


# -- feedback through nbgrader's own exchange ------------------------------------------------


def test_feedback_goes_round_trip_through_nbgraders_exchange(course, tmp_path):
    import stat

    base = course.parent / "exchange-course"
    shutil.copytree(course, base)
    shutil.rmtree(base / "submitted")
    exchange, home = tmp_path / "exchange", tmp_path / "alice"
    exchange.mkdir(mode=0o777)
    home.mkdir()
    _set_policy(base, f"c.Exchange.root = {str(exchange)!r}")
    (home / "nbgrader_config.py").write_text(
        f'c = get_config()  # noqa\nc.CourseDirectory.course_id = "normlab"\nc.Exchange.root = {str(exchange)!r}\n'
        f"c.Exchange.cache = {str(tmp_path / 'cache')!r}\n"
    )
    nbgrader("release_assignment", ASSIGNMENT, cwd=base)
    nbgrader("fetch_assignment", ASSIGNMENT, cwd=home)
    fetched = home / ASSIGNMENT / "lab.ipynb"
    save(filled(load(fetched), load(base / "source" / ASSIGNMENT / "lab.ipynb")), fetched)
    nbgrader("submit", ASSIGNMENT, "--student", "alice", cwd=home)
    nbgrader("collect", ASSIGNMENT, cwd=base)
    assert (base / "submitted" / "alice" / ASSIGNMENT / "submission_secret.txt").is_file()

    normlab("autograde", ASSIGNMENT, "--course-dir", base, "--no-progress", cwd=ROOT)
    nbgrader("generate_feedback", ASSIGNMENT, cwd=base)
    nbgrader("generate_feedback", ASSIGNMENT, "--force", cwd=base)  # --force keeps normlab's page too
    feedback = base / "feedback" / "alice" / ASSIGNMENT
    assert (feedback / "lab.html").is_file() and (feedback / "normlab-feedback.html").is_file()
    nbgrader("release_feedback", ASSIGNMENT, cwd=base)
    released = list((exchange / "normlab" / "feedback").glob("*.html"))
    assert released and all(p.stat().st_mode & stat.S_IROTH for p in released)  # readable by the student

    nbgrader("fetch_feedback", ASSIGNMENT, "--student", "alice", cwd=home)
    pages = list((home / ASSIGNMENT / "feedback").rglob("lab.html"))
    assert len(pages) == 1, list((home / ASSIGNMENT).rglob("*"))
    text = pages[0].read_text()
    assert "Score from automatic tests" in text and "normlab" in text
    assert leaks(text, solutions=False) == []


# -- the student's own cells in the autograded notebook ---------------------------------------


def test_added_cells_are_kept_and_an_extra_markdown_answer_is_flagged(course):
    from nbgrader.api import Gradebook

    from grader.questions import load as load_bank

    base = course.parent / "extra-cells"
    shutil.copytree(course, base)
    shutil.rmtree(base / "submitted")
    first, second = (q.id for q in load_bank().questions[:2])
    nb = filled(load(base / "release" / ASSIGNMENT / "lab.ipynb"), load(base / "source" / ASSIGNMENT / "lab.ipynb"))
    for cell in nb["cells"]:  # every answer cell left as released
        if cell["cell_type"] == "markdown" and cell["metadata"].get("nbgrader", {}).get("solution"):
            cell["source"] = ""
    answer = "Pre-norm keeps the residual stream an identity path, so gradients reach early layers."
    scratch = "probe = rmsnorm(np.ones((2, 4)), np.ones(4))  # my own check"
    nb["cells"].insert(
        cell_index(nb, f"{first}-question") + 1, {"cell_type": "markdown", "metadata": {}, "source": answer}
    )
    nb["cells"].insert(
        cell_index(nb, "rmsnorm-rmsnorm") + 1,
        {
            "cell_type": "code",
            "metadata": {"nbgrader": {"grade": True, "grade_id": "mine", "points": 99}},
            "source": scratch,
            "outputs": [],
            "execution_count": None,
        },
    )
    rms = nb["cells"][cell_index(nb, "rmsnorm-rmsnorm")]
    rms["source"] = "%%time\n" + "".join(rms["source"])  # shown as handed in, magic and all
    save(nb, base / "submitted" / "heidi" / ASSIGNMENT / "lab.ipynb")
    normlab("autograde", ASSIGNMENT, "--course-dir", base, "--no-progress", cwd=ROOT)

    autograded = load(base / "autograded" / "heidi" / ASSIGNMENT / "lab.ipynb")
    sources = ["".join(c["source"]) for c in autograded["cells"]]
    assert sources[cell_index(autograded, "rmsnorm-rmsnorm")] == rms["source"]
    assigned = [s for s in sources if f"answers_{first} = " in s]
    assert len(assigned) == 1, assigned  # the filled answers cell takes the released one's place, once
    assert sum(answer in text for text in sources) == 1  # moved into the answer cell, not duplicated
    assert answer in sources[cell_index(autograded, f"{first}-answer")]
    kept = autograded["cells"][cell_index(autograded, "rmsnorm-rmsnorm") + 1]
    assert "".join(kept["source"]) == scratch and "nbgrader" not in kept["metadata"]  # theirs, not a grade cell
    with Gradebook(f"sqlite:///{base / 'gradebook.db'}") as gb:
        grades = {g.name: g for g in gb.find_submission_notebook("lab", ASSIGNMENT, "heidi").grades}
        assert grades[f"{first}-answer"].needs_manual_grade and grades[f"{first}-answer"].auto_score is None
        assert grades[f"{second}-answer"].auto_score == 0 and not grades[f"{second}-answer"].needs_manual_grade
        assert "mine" not in grades
    nbgrader("generate_feedback", ASSIGNMENT, cwd=base)
    page = (base / "feedback" / "heidi" / ASSIGNMENT / "lab.html").read_text()
    assert "identity path" in page and "my own check" in page


# -- the course's grading policy ------------------------------------------------------------------

POLICY = '\n[policy]\ndrop = ["porting", "q9"]\n\n[policy.points]\nlayernorm = 20\nq3 = 4\n\n[policy.written]\nq1 = 5\n'


@pytest.fixture(scope="module")
def policed(tmp_path_factory):
    """A course released under a grading policy; alice (solved) and bob (one rmsnorm mistake)
    graded natively by nbgrader and by normlab."""
    base = tmp_path_factory.mktemp("policy") / "course"
    normlab("release", "--course-dir", base, "--assignment", ASSIGNMENT, cwd=ROOT)
    released = (base / "normlab.toml").read_text()
    assert "\n[policy]\n" in released  # the release lists the defaults there, commented out
    (base / "normlab.toml").write_text(released.split("\n[policy]\n")[0] + POLICY)
    normlab("release", "--course-dir", base, "--assignment", ASSIGNMENT, cwd=ROOT)  # now under the policy
    nbgrader("generate_assignment", ASSIGNMENT, cwd=base)
    _submissions(base)
    for student in os.listdir(base / "submitted"):
        if student not in ("alice", "bob"):
            shutil.rmtree(base / "submitted" / student)
    native = base.parent / "native"
    shutil.copytree(base, native)
    nbgrader("autograde", ASSIGNMENT, "--create", cwd=native)
    out = normlab("autograde", ASSIGNMENT, "--course-dir", base, "--no-progress", cwd=ROOT)
    return base, native, out.stdout


def test_both_paths_count_points_as_the_policy_says(policed):
    base, native, _ = policed
    ours, theirs = exported_rows(base), exported_rows(native)
    from grader.integrations.nbgrader.release import grade_cell_points
    from grader.policy import Policy

    wanted = grade_cell_points(
        Policy(points={"layernorm": 20, "q3": 4}, written={"q1": 5}, drop=frozenset({"porting", "q9"}))
    )
    assert float(ours["alice"]["max_score"]) == pytest.approx(sum(wanted.values()))
    for student in ("alice", "bob"):
        assert float(ours[student]["raw_score"]) == pytest.approx(float(theirs[student]["raw_score"]), abs=1e-4), (
            student
        )
    auto = sum(v for k, v in wanted.items() if not k.endswith("-answer"))
    assert float(ours["alice"]["raw_score"]) == pytest.approx(auto, abs=1e-4)
    page = (base / "autograded" / "alice" / ASSIGNMENT / "normlab-feedback.html").read_text()
    assert "Not counted in this course" in page and "porting" in page


def test_a_policy_the_release_does_not_follow_is_refused_until_released_again(policed):
    base, _, _ = policed
    (base / "normlab.toml").write_text((base / "normlab.toml").read_text().replace("layernorm = 20", "layernorm = 30"))
    refused = run(
        sys.executable,
        "-m",
        "grader",
        "autograde",
        ASSIGNMENT,
        "--course-dir",
        base,
        "--no-progress",
        cwd=ROOT,
        check=False,
    )
    assert refused.returncode == 2 and "layernorm-hidden" in refused.stderr and "Release again" in refused.stderr
    assert "grader fault" not in refused.stderr  # the course's setting, not a fault of ours
    # The step release prints is the one to take (trial 29: without --force, nbgrader skipped it).
    hint = normlab("release", "--course-dir", base, "--assignment", ASSIGNMENT, cwd=ROOT).stdout.splitlines()[-1]
    assert hint.endswith(f"nbgrader generate_assignment --force {ASSIGNMENT}"), hint
    nbgrader(*hint.split("nbgrader ", 1)[1].split(), cwd=base)
    before = float(exported_rows(base)["alice"]["raw_score"])
    out = normlab("autograde", ASSIGNMENT, "--course-dir", base, "--no-progress", cwd=ROOT).stdout
    assert "0 graded" in out and "2 re-scored" in out, out
    assert float(exported_rows(base)["alice"]["raw_score"]) == pytest.approx(before + 10, abs=1e-4)
    # Dropping an exercise after students submitted: nbgrader cannot remove cells then, so the
    # release keeps them worth 0, and the course re-scores.
    residual = sum(v for k, v in release_points().items() if k.startswith("residual-"))
    (base / "normlab.toml").write_text((base / "normlab.toml").read_text().replace('"q9"]', '"q9", "residual"]'))
    normlab("release", "--course-dir", base, "--assignment", ASSIGNMENT, cwd=ROOT)
    nbgrader("generate_assignment", ASSIGNMENT, "--force", cwd=base)
    out = normlab("autograde", ASSIGNMENT, "--course-dir", base, "--no-progress", cwd=ROOT).stdout
    assert "0 graded" in out and "2 re-scored" in out, out
    rows = exported_rows(base)
    assert float(rows["alice"]["raw_score"]) == pytest.approx(before + 10 - residual, abs=1e-4)


def release_points() -> dict[str, float]:
    from grader.integrations.nbgrader.release import grade_cell_points
    from grader.policy import Policy

    return grade_cell_points(Policy())


def test_a_cell_whose_id_was_lost_shows_the_function_the_student_defined(course):
    """A solution cell whose nbgrader id a student changed is found by the function it defines
    (the definitions are parsed only then), and the autograded notebook is written exactly as
    nbformat's own writer writes it."""
    import copy

    import nbformat

    from grader.integrations.nbgrader import gradebook
    from grader.model import Report

    released = nbformat.read(str(course / "release" / ASSIGNMENT / "lab.ipynb"), as_version=4)
    student = filled(
        load(course / "release" / ASSIGNMENT / "lab.ipynb"), load(course / "source" / ASSIGNMENT / "lab.ipynb")
    )
    block = student["cells"][cell_index(student, "residual-block")]
    block["metadata"]["nbgrader"]["grade_id"] = "my-block"
    block["source"] = "# my own version\n" + "".join(block["source"])
    nb = gradebook.autograded_notebook(gradebook.Handed(released, student), Report("lab.ipynb", (), ("public",)))
    shown = nb.cells[cell_index(nb, "residual-block")].source
    assert shown.startswith("def block(") and shown in block["source"]  # the function, found by its name
    expected = nbformat.v4.nbjson.writes(nb)
    assert gradebook.notebook_json(copy.deepcopy(nb)) == expected


def test_publishing_parses_a_bounded_amount_of_a_students_code(course, monkeypatch):
    """Publishing is one process for the whole class: it parsed every code cell of a student's
    notebook to find the answers cells, whatever their size. One cell of 2 MiB of one-name lines
    cost it 1.9 GB; 300 cells of 100 KB, each assigning an ``answers_`` name, a minute. Each step
    now parses at most ``PARSED_CODE`` characters, and only cells that name an answer."""
    import ast

    import nbformat

    from grader.integrations.nbgrader import gradebook
    from grader.model import Report

    parsed: list[int] = []
    real_parse = ast.parse

    def counting(source, *args, **kwargs):  # type: ignore[no-untyped-def]
        parsed.append(len(source))
        return real_parse(source, *args, **kwargs)

    released = nbformat.read(str(course / "release" / ASSIGNMENT / "lab.ipynb"), as_version=4)
    student = filled(
        load(course / "release" / ASSIGNMENT / "lab.ipynb"), load(course / "source" / ASSIGNMENT / "lab.ipynb")
    )
    honest = gradebook.autograded_notebook(gradebook.Handed(released, student), Report("lab.ipynb", (), ("public",)))

    def code(source: str) -> dict:
        return {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": source}

    flood = [code("a\n" * (1 << 20))] + [code(f"answers_x{i} = 1\n" + "a\n" * 49_990) for i in range(300)]
    student["cells"] += flood
    monkeypatch.setattr(ast, "parse", counting)
    gradebook._assigned_answers.cache_clear()
    gradebook._answers_name.cache_clear()
    nb = gradebook.autograded_notebook(gradebook.Handed(released, student), Report("lab.ipynb", (), ("public",)))
    gradebook._definitions(student)
    assert max(parsed) <= gradebook.CELL_CAP and sum(parsed) <= 4 * gradebook.PARSED_CODE, (len(parsed), sum(parsed))
    assert [c.source for c in nb.cells[: len(honest.cells)]] == [c.source for c in honest.cells]


def test_the_cells_a_student_added_are_kept_up_to_a_bound(course):
    """nbformat writes a notebook a line of a cell at a time: 6 MB of added one-line cells took
    550 MB of the class's publishing process and made a 33 MB autograded notebook. What a
    student added is kept up to ``EXTRA_CHARS`` in all, and a last cell says how many were left
    out, in the course's language."""
    import nbformat

    from grader.integrations.nbgrader import gradebook
    from grader.model import Report

    released = nbformat.read(str(course / "release" / ASSIGNMENT / "lab.ipynb"), as_version=4)
    student = filled(
        load(course / "release" / ASSIGNMENT / "lab.ipynb"), load(course / "source" / ASSIGNMENT / "lab.ipynb")
    )
    scratch = {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": "x = 1\n"}
    flood = dict(scratch, source="a\n" * 49_999)
    student["cells"] += [scratch] + [flood] * 60
    nb = gradebook.autograded_notebook(
        gradebook.Handed(released, student), Report("lab.ipynb", (), ("public",)), "pt-BR"
    )
    added = [c.source for c in nb.cells if c.source.startswith("a\n")]
    assert 0 < len(added) < 60 and sum(map(len, added)) <= gradebook.EXTRA_CHARS
    assert "x = 1\n" in [c.source for c in nb.cells]
    assert nb.cells[-1].source.startswith(f"normlab: outras {60 - len(added)} células")


def test_a_written_answer_is_copied_up_to_a_bound(course):
    """A 6 MB written answer, copied whole into the autograded notebook, took 550 MB of the
    class's publishing process to write. Its cell shows the first ``CELL_CAP`` characters and
    says how many more there are; the answer itself is still compared whole."""
    import nbformat

    from grader.integrations.nbgrader import gradebook
    from grader.model import Report
    from grader.notebook import CELL_CAP

    released = nbformat.read(str(course / "release" / ASSIGNMENT / "lab.ipynb"), as_version=4)
    student = filled(
        load(course / "release" / ASSIGNMENT / "lab.ipynb"), load(course / "source" / ASSIGNMENT / "lab.ipynb")
    )
    answer = student["cells"][cell_index(student, "q1-answer")]
    answer["source"] = "a\n" * 3_000_000
    assert gradebook.written_answers(released, student)["q1-answer"] == answer["source"]
    nb = gradebook.autograded_notebook(gradebook.Handed(released, student), Report("lab.ipynb", (), ("public",)))
    shown = nb.cells[cell_index(nb, "q1-answer")].source
    assert shown.startswith("a\n" * (CELL_CAP // 2)) and len(shown) < CELL_CAP + 200
    assert shown.endswith(
        f"[normlab: {6_000_000 - CELL_CAP} more characters of this answer are not copied here; "
        "they are in the submitted notebook.]"
    )


def test_a_timestamps_zone_never_names_a_file(tmp_path, monkeypatch):
    """Trial 52: the zone in a student's timestamp.txt went to ``dateutil.tz.gettz``, which loads
    any absolute path as a zone file, in the process that publishes the whole class (a 94 MiB
    one took it 1.6 GB; /proc/kmsg was read). Only IANA names and names without a path are
    looked up; any other is an unknown zone, as gettz says of one it does not know."""
    import shutil

    import dateutil.tz

    from grader.integrations.nbgrader.gradebook import parse_utc

    tokyo = Path("/usr/share/zoneinfo/Asia/Tokyo")
    zone_file = tmp_path / "tz.bin"
    if tokyo.is_file():
        shutil.copy(tokyo, zone_file)
    else:
        zone_file.write_bytes(b"TZif")  # no zone data here: what reaches gettz still shows
    asked: list[str] = []
    real_gettz = dateutil.tz.gettz
    monkeypatch.setattr(dateutil.tz, "gettz", lambda name=None: asked.append(name) or real_gettz(name))
    for spelled in (str(zone_file), f":{zone_file}", f"Asia/../../../..{zone_file}", "/proc/kmsg"):
        assert parse_utc(f"2026-11-20 10:00:00.000000 {spelled}").hour == 10, spelled  # as UTC
    assert asked == []
    assert parse_utc("2026-11-20 10:00:00.000000 UTC").hour == 10
    if tokyo.is_file():
        assert parse_utc("2026-11-20 10:00:00.000000 Asia/Tokyo").hour == 1
    assert asked == ["UTC"] + (["Asia/Tokyo"] if tokyo.is_file() else [])


def test_a_hand_graded_answer_the_student_changed_is_asked_for_again(secure, tmp_path):
    """nbgrader flags a manually graded cell for review when it grades the submission again;
    normlab does so for a written answer whose text changed: the hand grade stays, flagged."""
    from nbgrader.api import Gradebook

    course, _, _ = secure
    copy = tmp_path / "course"
    shutil.copytree(course, copy)
    with Gradebook(f"sqlite:///{copy / 'gradebook.db'}") as gb:
        for student in ("alice", "dave"):
            grade = gb.find_grade("q1-answer", "lab", ASSIGNMENT, student)
            grade.manual_score, grade.needs_manual_grade = 1.0, False
        gb.db.commit()
    path = copy / "submitted" / "alice" / ASSIGNMENT / "lab.ipynb"
    nb = load(path)
    nb["cells"][cell_index(nb, "q1-answer")]["source"] = "A different answer, written after the grade."
    save(nb, path)
    normlab("autograde", ASSIGNMENT, "--course-dir", copy, "--no-progress", "--force", cwd=ROOT)
    with Gradebook(f"sqlite:///{copy / 'gradebook.db'}") as gb:
        alice = gb.find_grade("q1-answer", "lab", ASSIGNMENT, "alice")
        dave = gb.find_grade("q1-answer", "lab", ASSIGNMENT, "dave")
        assert (alice.manual_score, alice.needs_manual_grade) == (1.0, True)
        assert (dave.manual_score, dave.needs_manual_grade) == (1.0, False)  # unchanged: not asked again


def test_a_gradebook_without_the_released_notebook_is_refused_before_grading(course, tmp_path):
    """Instructor trial 29: a fresh gradebook holding only `nbgrader db assignment add` (the due
    date step, without generate_assignment): every grade written into it was dropped, each
    student counted as published (exit 0, 0/0 in `nbgrader export`), and the empty submissions
    left behind made `generate_assignment --force` fail. Refused before any grading, as
    `nbgrader autograde` refuses it; a mistyped assignment is a usage error, not a fault."""
    base = tmp_path / "course"
    shutil.copytree(course, base)
    (base / "gradebook.db").unlink()
    nbgrader("db", "assignment", "add", ASSIGNMENT, "--duedate", DUE, cwd=base)
    argv = (sys.executable, "-m", "grader", "autograde", ASSIGNMENT, "--course-dir", base, "--no-progress")
    out = run(*argv, cwd=ROOT, check=False)
    assert out.returncode == 2, out.stdout + out.stderr
    assert "no notebook 'lab'" in out.stderr and f"nbgrader generate_assignment {ASSIGNMENT}" in out.stderr
    assert not (base / "autograded").exists()
    typo = run(sys.executable, "-m", "grader", "autograde", "normlb", "--course-dir", base, cwd=ROOT, check=False)
    assert typo.returncode == 2 and "release/normlb/" in typo.stderr
    # Nothing was written to the gradebook: releasing is open again, and then alice is graded.
    nbgrader("generate_assignment", ASSIGNMENT, "--force", cwd=base)
    normlab("autograde", ASSIGNMENT, "--course-dir", base, "--no-progress", "--student", "alice", cwd=ROOT)
    assert exported(base)["alice"] == auto_points(base)


def test_a_timestamp_that_holds_no_date_is_refused_and_changes_nothing(late, tmp_path):
    """Instructor trial 29: bob, graded late, then a `timestamp.txt` holding `garbage`: the line
    said "late penalty -280" and "no late policy applied" at once, and the gradebook kept the old
    time. Graded without a time, a student could undo a penalty by spoiling the file: refused, as
    nbgrader autograde refuses it, with bob's grade and penalty left as they were."""
    base = tmp_path / "late"
    shutil.copytree(late[0], base)
    before = exported_rows(base)["bob"]
    (base / "submitted" / "bob" / ASSIGNMENT / "timestamp.txt").write_text("garbage")
    argv = (sys.executable, "-m", "grader", "autograde", ASSIGNMENT, "--course-dir", base, "--no-progress")
    out = run(*argv, cwd=ROOT, check=False)
    assert out.returncode == 3
    assert "bob" in out.stderr and "NOT GRADED" in out.stderr and "timestamp.txt holds no date" in out.stderr
    assert "bob " not in out.stdout  # no line claims a grade for bob
    assert exported_rows(base)["bob"] == before


def test_hand_points_of_a_late_student_follow_the_late_policy(course, tmp_path):
    """Instructor trial 29: under nbgrader's "zero" policy, bob (late) kept the points of a
    written answer imported after autograding (score 2, not 0) until some later re-score; the
    import now runs the late policy on the new score, as the re-score would."""
    base = _late_class(course, tmp_path / "late")  # its own: other tests change the late class's terms
    normlab("autograde", ASSIGNMENT, "--course-dir", base, "--no-progress", cwd=ROOT)
    before = exported_rows(base)
    page = normlab("written", "export", ASSIGNMENT, "q1", "--course-dir", base, cwd=ROOT).stdout
    ticked = page.replace("- [ ] item 1 ", "- [x] item 1 ")
    (tmp_path / "q1.md").write_text(ticked)
    normlab("written", "import", tmp_path / "q1.md", "--course-dir", base, cwd=ROOT)
    rows = exported_rows(base)
    assert float(rows["bob"]["raw_score"]) > float(before["bob"]["raw_score"])  # the hand point counts
    assert float(rows["bob"]["score"]) == 0.0 and float(rows["bob"]["late_submission_penalty"]) > 0
    assert float(rows["alice"]["score"]) == float(rows["alice"]["raw_score"])  # on time: no penalty


TENTH_LATE_POLICY = """
from nbgrader.plugins import LateSubmissionPlugin


class Tenth(LateSubmissionPlugin):
    def late_submission_penalty(self, student_id, score, total_seconds_late):
        return score / 10
"""


def test_a_late_penalty_on_hand_points_too_is_said_as_the_gradebook_counts_it(course, tmp_path):
    """Under a policy that takes a share off, a late student's written answer graded by hand
    counts in the score the penalty is taken from. A later run printed, and the page said, the
    automatic score less that penalty (257.2 where the gradebook held 259.2)."""
    base = _late_class(course, tmp_path / "late")
    (base / "tenth.py").write_text(TENTH_LATE_POLICY)
    _set_policy(base, 'c.AssignLatePenalties.plugin_class = "tenth.Tenth"')
    env = {**ENV, "PYTHONPATH": str(base)}  # the course's own plugin module

    def grader(*args: object) -> str:
        argv = [sys.executable, "-m", "grader", *map(str, args)]
        out = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=900, check=True)
        return out.stdout

    grader("autograde", ASSIGNMENT, "--course-dir", base, "--no-progress")
    page = grader("written", "export", ASSIGNMENT, "q1", "--course-dir", base)
    (tmp_path / "q1.md").write_text(page.replace("- [ ] item 1 ", "- [x] item 1 "))
    grader("written", "import", tmp_path / "q1.md", "--course-dir", base)
    out = grader("autograde", ASSIGNMENT, "--course-dir", base, "--no-progress", "--force")
    row = exported_rows(base)["bob"]
    raw, penalty, net = (round(float(row[key]), 2) for key in ("raw_score", "late_submission_penalty", "score"))
    line = next(line for line in out.splitlines() if line.startswith("bob "))
    auto = float(line.split()[1].split("/")[0])
    hand = round(raw - auto, 2)
    assert hand > 0 and penalty == pytest.approx(raw / 10)
    assert f"(late penalty -{penalty:g} of {raw:g} with {hand:g} by hand: {net:g})" in line, line
    feedback = (base / "autograded" / "bob" / ASSIGNMENT / "normlab-feedback.html").read_text()
    assert f"{hand:g} of them given by hand" in feedback and f"your score is {net:g} for now" in feedback


def test_hand_points_given_in_formgrader_after_the_run_are_under_the_late_penalty(course, tmp_path):
    """Trial 61: a late student's written answer graded in formgrader after the run escaped
    the "zero" late policy: a plain re-run left the student "unchanged", and the gradebook kept
    the hand points. A late student whose hand points changed is re-scored by the next run."""
    from nbgrader.api import Gradebook

    base = _late_class(course, tmp_path / "late")
    normlab("autograde", ASSIGNMENT, "--course-dir", base, "--no-progress", cwd=ROOT)
    assert float(exported_rows(base)["bob"]["score"]) == 0
    with Gradebook(f"sqlite:///{base / 'gradebook.db'}") as gb:  # as formgrader saves a hand grade
        grade = gb.find_grade("q1-answer", "lab", ASSIGNMENT, "bob")
        grade.manual_score = 1.0
        gb.db.commit()
    assert float(exported_rows(base)["bob"]["score"]) == 1.0  # nbgrader itself lets it through
    out = normlab("autograde", ASSIGNMENT, "--course-dir", base, "--no-progress", cwd=ROOT).stdout
    bob = next(line for line in out.splitlines() if line.startswith("bob "))
    assert "re-scored" in bob and "with 1 by hand" in bob, bob
    assert float(exported_rows(base)["bob"]["score"]) == 0
    again = normlab("autograde", ASSIGNMENT, "--course-dir", base, "--no-progress", cwd=ROOT).stdout
    assert "0 graded, 2 unchanged" in again and "re-scored" not in again  # once, not every run


def test_a_timestamp_or_secret_that_is_no_plain_file_is_refused(course, tmp_path):
    """Red team 31: a timestamp.txt that was a link, a hard link or padded past 1 KiB was taken
    as missing (a late student kept every point, nothing said); a secret that was no plain file
    was dropped and `nbgrader release_feedback` then stopped for the rest of the class; a folder
    named timestamp.txt was said as "Is a directory: 4". Each is refused and named. An empty
    timestamp.txt is no time, as nbgrader reads it: graded."""
    base = tmp_path / "course"
    shutil.copytree(course, base)
    alice = base / "submitted" / "alice" / ASSIGNMENT
    late = "2026-11-21 10:00:00.000000 UTC"

    def student(name: str) -> Path:
        folder = base / "submitted" / name / ASSIGNMENT
        shutil.copytree(alice, folder)
        (folder / "timestamp.txt").unlink()
        return folder

    (student("t-link") / "when").write_text(late)
    (base / "submitted" / "t-link" / ASSIGNMENT / "timestamp.txt").symlink_to("when")
    hard = student("t-hard")
    (hard / "when").write_text(late)
    os.link(hard / "when", hard / "timestamp.txt")
    (student("t-padded") / "timestamp.txt").write_text(late + " " * 2000)
    (student("t-folder") / "timestamp.txt").mkdir()
    secret = student("t-secret")
    (secret / "timestamp.txt").write_text(late)
    (secret / "elsewhere").write_text("0123456789abcdef")
    (secret / "submission_secret.txt").symlink_to("elsewhere")
    (student("t-empty") / "timestamp.txt").write_text("  \n")
    (student("t-nbsp") / "timestamp.txt").write_text("\u00a0\n", encoding="utf-8")  # str.strip's whitespace too
    argv = (sys.executable, "-m", "grader", "autograde", ASSIGNMENT, "--course-dir", base, "--no-progress")
    out = run(*argv, cwd=ROOT, check=False)
    assert out.returncode == 3
    refused = {line.split()[0]: line for line in out.stderr.splitlines() if "NOT GRADED" in line}
    assert set(refused) == {"t-link", "t-hard", "t-padded", "t-folder", "t-secret"}, out.stderr
    assert "timestamp.txt" in refused["t-folder"] and "Is a directory" not in refused["t-folder"]
    assert "submission_secret.txt" in refused["t-secret"] and "hard links" in refused["t-hard"]
    for blank in ("t-empty", "t-nbsp"):  # graded, no penalty
        assert re.search(rf"^{blank}\s+\d+/\d+$", out.stdout, re.M), out.stdout


def _graded_notebook(points: float) -> dict:
    """A notebook nbgrader grades: one autograded test cell worth ``points`` (none: no grade cell)."""
    meta = {"grade": True, "grade_id": "extra-test", "points": points, "solution": False, "locked": True}
    cell = {"cell_type": "code", "execution_count": None, "outputs": [], "source": "assert True"}
    cell["metadata"] = {"nbgrader": {**meta, "schema_version": 3}} if points else {}
    return {"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}


def test_a_second_notebook_in_the_assignment_is_never_dropped_in_silence(course, tmp_path):
    """Red team 31: normlab took the first notebook of release/<a>/ by name: a second graded
    notebook after lab.ipynb lost its points in silence (286 where nbgrader gave 291), and one
    before it (README.ipynb) was compared with the policy. The lab is lab.ipynb; another notebook
    with grade cells is refused (exit 2) before anyone is graded; one without is left alone."""
    readme = tmp_path / "readme"
    shutil.copytree(course, readme)
    save(_graded_notebook(0), readme / "source" / ASSIGNMENT / "README.ipynb")
    nbgrader("generate_assignment", ASSIGNMENT, "--force", cwd=readme)
    assert (readme / "release" / ASSIGNMENT / "README.ipynb").exists()
    normlab("autograde", ASSIGNMENT, "--course-dir", readme, "--no-progress", "--student", "alice", cwd=ROOT)
    assert exported(readme)["alice"] == auto_points(readme)
    extra = tmp_path / "extra"
    shutil.copytree(course, extra)
    save(_graded_notebook(5), extra / "source" / ASSIGNMENT / "zz.ipynb")
    nbgrader("generate_assignment", ASSIGNMENT, "--force", cwd=extra)
    argv = (sys.executable, "-m", "grader", "autograde", ASSIGNMENT, "--course-dir", extra, "--no-progress")
    out = run(*argv, cwd=ROOT, check=False)
    assert out.returncode == 2 and "does not grade (zz)" in out.stderr, out.stdout + out.stderr
    assert not (extra / "autograded").exists()


def test_a_page_exported_before_a_student_handed_in_again_is_refused(secure, tmp_path):
    """Red team 31: alice's answer changed (handed in again, graded) after q1's page was
    exported; importing the old page gave the new answer the old points, even a blank one, and
    cleared formgrader's "needs grading". Refused, nothing imported; a page exported again works."""
    course = tmp_path / "course"
    shutil.copytree(secure[0], course)
    page = normlab("written", "export", ASSIGNMENT, "q1", "--course-dir", course, cwd=ROOT).stdout
    (tmp_path / "q1.md").write_text(_tick_alice(page))
    path = course / "submitted" / "alice" / ASSIGNMENT / "lab.ipynb"
    nb = load(path)
    nb["cells"][cell_index(nb, "q1-answer")]["source"] = "A new answer, written after the page was exported."
    save(nb, path)
    normlab("autograde", ASSIGNMENT, "--course-dir", course, "--no-progress", cwd=ROOT)
    argv = (sys.executable, "-m", "grader", "written", "import", tmp_path / "q1.md", "--course-dir", course)
    refused = run(*argv, cwd=ROOT, check=False)
    assert refused.returncode == 2 and "alice" in refused.stderr and "changed since" in refused.stderr
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        assert gb.find_grade("q1-answer", "lab", ASSIGNMENT, "alice").manual_score is None
    again = normlab("written", "export", ASSIGNMENT, "q1", "--course-dir", course, cwd=ROOT).stdout
    assert "A new answer, written after" in again
    (tmp_path / "q1.md").write_text(_tick_alice(again))
    normlab("written", "import", tmp_path / "q1.md", "--course-dir", course, cwd=ROOT)


def _tick_alice(page: str) -> str:
    """The page with item 1 ticked in alice's section only (she comes first)."""
    alice = page.split("## student: alice")[1].split("## student:")[0]
    return page.replace(alice, alice.replace("- [ ] item 1 ", "- [x] item 1 "), 1)


def test_students_missing_from_the_gradebook_are_published_again(secure, tmp_path):
    """Red team 31: after the gradebook was made anew (or a student removed from it), every
    student was "graded before", exit 0, and `nbgrader export` held none of them. A done student
    missing from the gradebook is published again from the stored report, without grading."""
    course, before, _ = secure
    copy = tmp_path / "course"
    shutil.copytree(course, copy)
    (copy / "gradebook.db").unlink()
    nbgrader("generate_assignment", ASSIGNMENT, "--force", cwd=copy)
    out = normlab("autograde", ASSIGNMENT, "--course-dir", copy, "--no-progress", cwd=ROOT).stdout
    assert "0 graded" in out and f"{len(before)} published again" in out and "re-scored" not in out, out
    assert exported(copy) == before
    nbgrader("db", "student", "remove", "bob", "--force", cwd=copy)
    out = normlab("autograde", ASSIGNMENT, "--course-dir", copy, "--no-progress", cwd=ROOT).stdout
    assert "0 graded" in out and "1 published again" in out and "re-scored" not in out, out
    assert exported(copy) == before


def test_a_written_page_of_a_mistyped_assignment_is_a_usage_error(secure, tmp_path):
    """Red team 31: `written export normlb q1` printed an empty page (nobody answered), exit 0."""
    for course_dir in (secure[0], tmp_path):
        argv = (sys.executable, "-m", "grader", "written", "export", "normlb", "q1", "--course-dir", course_dir)
        out = run(*argv, cwd=ROOT, check=False)
        assert out.returncode == 2 and "release/normlb/" in out.stderr and "## student" not in out.stdout


def test_a_late_policy_that_cannot_load_is_refused_before_grading(course, tmp_path):
    """Red team 31: a plugin class that does not import failed every student, one by one, as a
    grader fault (exit 3); it is the course's setting: refused first, exit 2, nothing graded."""
    base = tmp_path / "course"
    shutil.copytree(course, base)
    _set_policy(base, 'c.AssignLatePenalties.plugin_class = "latepolicy.Nope"')
    argv = (sys.executable, "-m", "grader", "autograde", ASSIGNMENT, "--course-dir", base, "--no-progress")
    out = run(*argv, cwd=ROOT, check=False)
    assert out.returncode == 2 and "late policy cannot be loaded" in out.stderr, out.stdout + out.stderr
    assert not (base / "autograded").exists()


def test_a_hand_grade_whose_answer_was_blanked_is_asked_for_again(secure, tmp_path):
    """Red team 32: alice's q1 answer got 2 hand points, then she handed in again with it blank:
    the points stayed, unflagged (formgrader and `--ungraded` left her out). As nbgrader does,
    the hand grade is asked for again."""
    course = tmp_path / "course"
    shutil.copytree(secure[0], course)
    page = normlab("written", "export", ASSIGNMENT, "q1", "--course-dir", course, cwd=ROOT).stdout
    (tmp_path / "q1.md").write_text(_tick_alice(page))
    normlab("written", "import", tmp_path / "q1.md", "--course-dir", course, cwd=ROOT)
    path = course / "submitted" / "alice" / ASSIGNMENT / "lab.ipynb"
    nb = load(path)
    nb["cells"][cell_index(nb, "q1-answer")]["source"] = "YOUR ANSWER HERE"
    save(nb, path)
    normlab("autograde", ASSIGNMENT, "--course-dir", course, "--no-progress", cwd=ROOT)
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        assert gb.find_grade("q1-answer", "lab", ASSIGNMENT, "alice").needs_manual_grade
    rest = normlab("written", "export", ASSIGNMENT, "q1", "--ungraded", "--course-dir", course, cwd=ROOT).stdout
    assert "## student: alice" in rest


def test_a_second_notebook_with_task_cells_only_is_refused_too(course, tmp_path):
    """Red team 32: a second notebook whose points are in a task cell (graded by hand) passed
    the check that looked for grade cells only; its 5 points were zeroed in silence."""
    extra = tmp_path / "extra"
    shutil.copytree(course, extra)
    task = {"task": True, "grade_id": "extra-task", "points": 5, "solution": False, "grade": False, "locked": True}
    cell = {"cell_type": "markdown", "source": "Describe it.", "metadata": {"nbgrader": {**task, "schema_version": 3}}}
    notebook = {"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    save(notebook, extra / "source" / ASSIGNMENT / "zz.ipynb")
    nbgrader("generate_assignment", ASSIGNMENT, "--force", cwd=extra)
    argv = (sys.executable, "-m", "grader", "autograde", ASSIGNMENT, "--course-dir", extra, "--no-progress")
    out = run(*argv, cwd=ROOT, check=False)
    assert out.returncode == 2 and "does not grade (zz)" in out.stderr, out.stdout + out.stderr


def test_written_pages_follow_the_released_notebook_s_name(course, tmp_path):
    """Red team 32: a lab released as Lab.ipynb was graded, but `written export` looked for
    lab.ipynb only and printed a page with no student (nobody answered), exit 0."""
    base = tmp_path / "course"
    shutil.copytree(course, base)
    (base / "source" / ASSIGNMENT / "lab.ipynb").rename(base / "source" / ASSIGNMENT / "Lab.ipynb")
    shutil.rmtree(base / "release")
    (base / "gradebook.db").unlink()
    nbgrader("generate_assignment", ASSIGNMENT, cwd=base)
    for folder in (base / "submitted").iterdir():
        lab = folder / ASSIGNMENT / "lab.ipynb"
        if lab.exists():
            lab.rename(lab.with_name("Lab.ipynb"))
    normlab("autograde", ASSIGNMENT, "--course-dir", base, "--no-progress", "--student", "alice", cwd=ROOT)
    page = normlab("written", "export", ASSIGNMENT, "q1", "--course-dir", base, cwd=ROOT).stdout
    assert "## student: alice" in page


def test_an_answers_file_handed_in_beside_the_notebook_is_said_not_read(secure, tmp_path):
    """Reader trial 35: `normlab grade` reads a verification.toml beside a notebook whose answer
    cells are blank; on nbgrader the answer cells are the gradebook's, and the file was ignored
    in silence (a later run even kept the student "unchanged")."""
    course, before, _ = secure
    copy = tmp_path / "course"
    shutil.copytree(course, copy)
    shutil.copy(ROOT / "solutions" / "verification.toml", copy / "submitted" / "alice" / ASSIGNMENT)
    out = normlab("autograde", ASSIGNMENT, "--course-dir", copy, "--no-progress", cwd=ROOT).stdout
    assert "1 graded" in out, out  # a file added is a change
    page = (copy / "autograded" / "alice" / ASSIGNMENT / "normlab-feedback.html").read_text()
    assert "verification.toml was handed in beside your notebook and not read" in page
    assert exported(copy) == before  # the grade is the answer cells', as before


def test_a_rounding_crumb_of_the_gradebooks_sum_is_no_hand_point():
    """Red team 36: nbgrader's SQL sum of cell scores 0.1 and 0.2 is 0.30000000000000004; the
    late-penalty line would have said "with 5.55112e-17 by hand"."""
    from grader.integrations.nbgrader.gradebook import hand_points

    assert hand_points(0.1 + 0.2, 0.3) == 0.0 and str(hand_points(0.3, 0.1 + 0.2)) == "0.0"
    assert hand_points(259.2, 257.2) == 2.0


def test_what_a_killed_publication_left_in_autograded_is_gone_after_the_next(secure, tmp_path):
    """Instructor trial 34: SIGKILL while publishing left `.lab.ipynb.<random>.tmp` in
    autograded/<student>/; no run removed it, and `nbgrader generate_feedback` copied it to the
    student's feedback."""
    course, before, _ = secure
    copy = tmp_path / "course"
    shutil.copytree(course, copy)
    leftover = copy / "autograded" / "alice" / ASSIGNMENT / ".lab.ipynb.els3hqvt.tmp"
    leftover.write_text("a half-written notebook")
    normlab("autograde", ASSIGNMENT, "--course-dir", copy, "--no-progress", "--student", "alice", cwd=ROOT)
    assert not leftover.exists() and exported(copy) == before


def test_a_student_named_with_accents_and_spaces_is_graded_and_gets_feedback(secure, tmp_path):
    """nbgrader takes a folder `submitted/João Sant'Anna/` (its student ids are any text), where
    normlab refused it (ASCII only) and left that student ungraded. The name now goes through
    the gradebook, `nbgrader export` and `nbgrader generate_feedback` as it is."""
    course, before, _ = secure
    copy = tmp_path / "course"
    shutil.copytree(course, copy)
    name = "João Sant'Anna"
    shutil.copytree(copy / "submitted" / "alice", copy / "submitted" / name)
    out = normlab("autograde", ASSIGNMENT, "--course-dir", copy, "--no-progress", "--student", name, cwd=ROOT)
    assert f"{name}           287/287" in out.stdout and "1 graded" in out.stdout, out.stdout + out.stderr
    assert exported(copy)[name] == before["alice"]
    nbgrader("generate_feedback", ASSIGNMENT, "--student", name, cwd=copy)
    page = (copy / "feedback" / name / ASSIGNMENT / "lab.html").read_text(encoding="utf-8")
    assert "Jo&#227;o Sant" in page or "João Sant" in page


def _colab_copy(nb: dict) -> dict:
    """``nb`` as Colab saves it: every cell's metadata replaced by Colab's own (nbgrader's gone)."""
    copy = json.loads(json.dumps(nb))
    for number, cell in enumerate(copy["cells"]):
        cell["metadata"] = {"id": f"{number:08x}"}
    copy["nbformat_minor"] = 0
    return copy


def test_written_answers_of_a_notebook_colab_stripped_of_its_metadata_are_found(course, tmp_path):
    """Trial 38: a notebook saved from Colab (nbgrader's cell metadata gone) scored its
    auto-graded answers, but every written answer read as blank: `check` said "written
    (blank)", and the page the person grading reads said "(no answer)" (up to 21 points).
    Each answer is the text cell after its question, found by the question's heading."""
    from grader import questions, verification
    from grader.integrations.nbgrader import gradebook

    released = load(course / "release" / ASSIGNMENT / "lab.ipynb")
    answer = "Residual connections add each sublayer's update to the stream; my own words."
    nb = filled(released, load(course / "source" / ASSIGNMENT / "lab.ipynb"))
    for cell in nb["cells"]:
        if cell["metadata"].get("nbgrader", {}).get("solution") and cell["cell_type"] == "markdown":
            cell["source"] = answer
    written = [q.id for q in questions.load().questions if q.written is not None]
    stripped = _colab_copy(nb)
    found = verification.from_notebook(json.dumps(stripped).encode()).values
    assert {qid: found.get(qid, {}).get(verification.WRITTEN) for qid in written} == dict.fromkeys(written, answer)
    import nbformat

    by_cell = gradebook.written_answers(nbformat.reads(json.dumps(released), as_version=4), stripped)
    assert by_cell == {f"{qid}-answer": answer for qid in written}
    # Left as released, an answer is still blank; a markdown cell elsewhere is nobody's answer.
    untouched = _colab_copy(released)
    untouched["cells"].insert(3, {"cell_type": "markdown", "metadata": {}, "source": "my notes"})
    blank = verification.from_notebook(json.dumps(untouched).encode()).values
    assert all(verification.is_blank(blank.get(qid, {}).get(verification.WRITTEN)) for qid in written)
    save(stripped, tmp_path / "lab.ipynb")
    report = json.loads(normlab("grade", tmp_path / "lab.ipynb", "--json", cwd=ROOT).stdout)
    assert [m["question"] for m in report["manual"] if not m["answered"]] == []


def test_a_portuguese_notebook_that_lost_its_metadata_keeps_its_written_answers_and_its_size():
    """Trial 58, a pt-BR class on the nbgrader path. A student who typed each answer into a new
    cell where the answer cell was (no metadata) lost 18 of 21 hand points: the cell follows the
    question's auto-graded cell, which was not taken for the question's. A notebook stripped of
    every cell's metadata (Colab, VS Code) lost all of them, its question headings known in
    English only, and its autograded notebook held 11 copies of the student's cells."""
    import copy

    from grader import verification
    from grader.integrations.nbgrader import gradebook, release
    from grader.model import Report

    released = release.build_notebook(lang="pt-BR")
    answered = copy.deepcopy(released)
    want = {}
    for cell in answered.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id", "")
        if grade_id.endswith("-answer"):
            cell.source = want[grade_id] = f"Resposta de {grade_id}."
    typed_anew, stripped = copy.deepcopy(answered), copy.deepcopy(answered)
    for cell in typed_anew.cells:
        if cell.metadata.get("nbgrader", {}).get("grade_id", "").endswith("-answer"):
            cell.metadata = {}
    for cell in stripped.cells:
        cell.metadata = {}
    for student in (typed_anew, stripped):
        assert gradebook.written_answers(released, student) == want
        autograded = gradebook.autograded_notebook(
            gradebook.Handed(released, student), Report("lab.ipynb", (), ("public",)), "pt-BR"
        )
        assert len(autograded.cells) <= len(released.cells) + 2, len(autograded.cells)
    found = verification.from_notebook(json.dumps(stripped).encode()).values
    assert {f"{qid}-answer": parts.get(verification.WRITTEN) for qid, parts in found.items()} == want


def test_a_written_answer_in_a_cell_turned_into_code_is_kept_as_nbgrader_keeps_it():
    """Trial 61: a written answer's cell turned into a code cell (Jupyter's "y" key) lost its
    answer on normlab's nbgrader path: formgrader showed the released placeholder and the
    question scored 0, where nbgrader's own autograde turns the cell back into markdown and
    asks for a hand grade. Read as markdown now, on every path, and never run as code."""
    import copy

    import nbformat

    from grader import notebook, verification
    from grader.integrations.nbgrader import gradebook, release
    from grader.model import Report

    released = release.build_notebook()
    student = copy.deepcopy(released)
    answer = student.cells[cell_index(student, "q4-answer")]
    answer.cell_type, answer.source = "code", "PAT-Q4: pre-norm keeps an identity path for the gradient."
    answer.outputs, answer.execution_count = [], None
    handed = gradebook.Handed(released, student)
    assert "PAT-Q4" in handed.written["q4-answer"] and "q4-answer" in handed.answered()
    nb = gradebook.autograded_notebook(handed, Report("lab.ipynb", (), ("public",)))
    assert "PAT-Q4" in nb.cells[cell_index(nb, "q4-answer")].source
    raw = json.dumps(student).encode()
    assert "PAT-Q4" in verification.from_notebook(raw).values["q4"][verification.WRITTEN]
    assert all("PAT-Q4" not in cell.code for cell in notebook.read(raw).cells)  # not run
    # An answer typed into a cell of its own below the answer cell left as released is the whole
    # answer: the released placeholder ("YOUR ANSWER HERE") was copied in front of it.
    below = copy.deepcopy(released)
    below.cells.insert(cell_index(below, "q4-answer") + 1, nbformat.v4.new_markdown_cell("QUINN-Q4: an answer."))
    assert gradebook.Handed(released, below).written["q4-answer"] == "QUINN-Q4: an answer."


def test_a_second_try_at_a_function_stays_in_the_autograded_notebook():
    """A cell without metadata that only defines graded functions was dropped from the autograded
    notebook even when the student's own cell (with its grade id) was shown in the released
    cell: a second try at ``rmsnorm`` below it, the definition the kernel ran, vanished from what
    the person grading sees. It is dropped only when it is the definition shown in the released
    cell (metadata lost); an earlier try in a stripped notebook is kept too."""
    import copy

    import nbformat

    from grader.integrations.nbgrader import gradebook, release
    from grader.model import Report

    released = release.build_notebook()
    first_try = "def rmsnorm(x, gamma, eps=1e-6):\n    return x * gamma  # first try\n"
    second_try = "import numpy as np\n\ndef rmsnorm(x, gamma, eps=1e-6):\n    return x / np.sqrt(eps)  # second try\n"
    intact = copy.deepcopy(released)
    at = cell_index(intact, "rmsnorm-rmsnorm")
    intact.cells[at].source = first_try
    intact.cells.insert(at + 1, nbformat.v4.new_code_cell(second_try))
    stripped = copy.deepcopy(intact)
    for cell in stripped.cells:
        cell.metadata = {}
    report = Report("lab.ipynb", (), ("public",))
    for student, shown, kept in (
        (intact, first_try, second_try),
        (stripped, second_try.split("\n\n", 1)[1], first_try),
    ):
        nb = gradebook.autograded_notebook(gradebook.Handed(released, student), report)
        sources = [c.source for c in nb.cells]
        assert sources[cell_index(nb, "rmsnorm-rmsnorm")].strip() == shown.strip()
        assert sources.count(kept) == 1, [s[:40] for s in sources if "try" in s]
        assert sum("second try" in text for text in sources) == 1  # shown once, never twice
    # Trial 61: in the stripped notebook the first try came first of all, above the lab's title:
    # it follows the last released cell before it whose text is the release's own and no other
    # cell's (the exercise's introduction: every exercise imports numpy alike).
    assert sources.index(first_try) == cell_index(nb, "rmsnorm-intro") + 1


def test_the_feedback_cell_speaks_the_course_language():
    """Trial 58: the autograded notebook's first cell, the one the student's feedback shows
    first, was commented in English in a pt-BR course."""
    import nbformat

    from grader.integrations.nbgrader import gradebook

    for lang, said in (("pt-BR", "# correção automática do normlab"), ("en", "# normlab's automatic grading")):
        nb = gradebook.with_feedback(nbformat.v4.new_notebook(), "<body><p>x</p></body>", lang)
        assert nb.cells[0].source.startswith(said) and nb.cells[0].outputs[0].data["text/html"] == "<p>x</p>"


def test_a_timestamps_utc_offset_is_read_as_hours_and_minutes():
    """Trial 58: a Brazilian hand-in time, `2026-12-01 11:59:00 -0300`, was read as 12:04 UTC
    (nbgrader's parser takes -0300 as 300 seconds) and `-03:00` as 11:59 UTC (no zone), where
    it is 14:59 UTC: three hours early, enough to escape a late penalty."""
    from grader.integrations.nbgrader.gradebook import parse_utc

    for spelled in ("-0300", "-03:00"):
        assert parse_utc(f"2026-12-01 11:59:00.000000 {spelled}").hour == 14, spelled
    assert parse_utc("2026-12-01 11:59:00 +0530").strftime("%H:%M") == "06:29"
    assert parse_utc("2026-12-01T11:59:00-03:00").hour == 14  # ISO 8601, as it always was


def test_a_student_whose_folder_cannot_be_written_keeps_the_gradebook_as_it_was(secure, tmp_path):
    """Trial 64: a student reported NOT GRADED, because their autograded folder could not be
    written, still had the new score in the gradebook, beside the old feedback page. The
    gradebook now commits only once every file of the folder is written."""
    course, grades, _ = secure
    copy = tmp_path / "course"
    shutil.copytree(course, copy)
    released = load(copy / "release" / ASSIGNMENT / "lab.ipynb")
    source = load(copy / "source" / ASSIGNMENT / "lab.ipynb")
    save(filled(released, source), copy / "submitted" / "bob" / ASSIGNMENT / "lab.ipynb")  # bob fixed his bug
    page = copy / "autograded" / "bob" / ASSIGNMENT / "normlab-feedback.html"
    before = page.read_text()
    page.unlink()
    page.mkdir()  # cannot be replaced by a file: the folder cannot be published
    out = normlab("autograde", ASSIGNMENT, "--course-dir", copy, "--no-progress", cwd=ROOT, check=False)
    assert out.returncode != 0 and "bob" in out.stderr and "NOT GRADED" in out.stderr, out.stderr
    page.rmdir()
    page.write_text(before)
    assert exported(copy)["bob"] == grades["bob"] < auto_points(copy)  # the old score, as the feedback says
    notebook = (copy / "autograded" / "bob" / ASSIGNMENT / "lab.ipynb").read_text()
    assert "(np.sqrt(ms) + eps)" in notebook  # the old notebook too: nothing of the new grading
    # No file can be written in it at all (the trial's chattr +i; a folder of another user).
    folder = copy / "autograded" / "bob" / ASSIGNMENT
    folder.rename(tmp_path / "aside")
    folder.write_text("not a folder")
    out = normlab("autograde", ASSIGNMENT, "--course-dir", copy, "--no-progress", cwd=ROOT, check=False)
    assert "bob" in out.stderr and "NOT GRADED" in out.stderr, out.stderr
    assert exported(copy)["bob"] == grades["bob"]


def test_a_gradebook_another_program_holds_is_said_in_one_line_before_grading(secure, tmp_path):
    """Trial 64: with formgrader (or any nbgrader command) holding the gradebook, normlab
    autograde printed a 75-line SQLAlchemy traceback, "grader fault"; mid-run, each student's
    NOT GRADED line dumped SQL. It now says so in one line and grades no one (exit 2)."""
    import sqlite3

    course, grades, _ = secure
    copy = tmp_path / "course"
    shutil.copytree(course, copy)
    shutil.rmtree(copy / "normlab")  # nothing stored: the run would grade everyone
    holder = sqlite3.connect(copy / "gradebook.db", isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        out = normlab("autograde", ASSIGNMENT, "--course-dir", copy, "--no-progress", cwd=ROOT, check=False)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    said = out.stdout + out.stderr
    assert out.returncode == 2 and "gradebook (gradebook.db) is locked by another program" in said, said
    assert "Traceback" not in said and "SQL" not in said and "graded" not in out.stdout
    assert exported(copy) == grades


def test_a_notebook_beside_the_graded_one_is_named(secure, tmp_path):
    """Trial 64: the work in lab-Copy1.ipynb beside a blank lab.ipynb scored 0 with no word;
    nbgrader grades lab.ipynb too, and so does normlab, but the feedback now names the other."""
    course, _, _ = secure
    copy = tmp_path / "course"
    shutil.copytree(course, copy)
    released = load(copy / "release" / ASSIGNMENT / "lab.ipynb")
    source = load(copy / "source" / ASSIGNMENT / "lab.ipynb")
    folder = copy / "submitted" / "ivan" / ASSIGNMENT
    save(released, folder / "lab.ipynb")
    save(filled(released, source), folder / "lab-Copy1.ipynb")
    (folder / "timestamp.txt").write_text("2026-11-20 10:00:00.000000 UTC")
    normlab("autograde", ASSIGNMENT, "--course-dir", copy, "--student", "ivan", "--no-progress", cwd=ROOT)
    page = (copy / "autograded" / "ivan" / ASSIGNMENT / "normlab-feedback.html").read_text()
    assert "lab-Copy1.ipynb" in page and "were not" in page, page[:3000]


def test_a_grade_nbgrader_autograde_wrote_since_is_replaced_by_the_next_run(secure, tmp_path):
    """Trial 64: after `nbgrader autograde --student bob --force`, normlab's next run said "0
    graded, all unchanged" and the gradebook kept nbgrader's grade. nbgrader rewrites the
    student's autograded folder, without normlab's feedback page: that student is published
    again from the stored report."""
    course, grades, _ = secure
    copy = tmp_path / "course"
    shutil.copytree(course, copy)
    frank = copy / "submitted" / "frank" / ASSIGNMENT  # nbgrader's kernel grades frank higher (patched checks)
    nbgrader("autograde", ASSIGNMENT, "--student", "frank", "--force", cwd=copy, check=False)
    assert exported(copy)["frank"] != grades["frank"]
    out = normlab("autograde", ASSIGNMENT, "--course-dir", copy, "--no-progress", cwd=ROOT)
    assert "frank" in out.stdout and "published again" in out.stdout, out.stdout
    assert exported(copy) == grades and frank.is_dir()
