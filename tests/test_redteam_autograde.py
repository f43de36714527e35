"""Red team, classes 5 and 6: ``normlab autograde`` on a real nbgrader course.

Class 5, one student stops class grading for everyone. Principle (issue 9): any exception
while keying, grading, storing or publishing one submission is that submission's outcome,
reported with a reason; every other student is graded and published; files are size-checked
before they are read. Each case adds one malformed student (named ``aa-...``, so that it comes
first) to a course whose honest student ``zz-honest`` was graded before and must now be
published again; the run must complete (its summary line printed), publish ``zz-honest`` with
full marks, and give the malformed student a line of their own (a score, or NOT GRADED with a
reason). One more test puts every malformed student in the same class.

Class 6, symlinks in ``submitted/``. Principle: never follow a link out of a student's folder,
at any depth, for files and folders. Each case adds a student ``mallory-N`` whose files are
links (or a hard link) to the instructor's source notebook, to another student's work or to a
file outside the course (all of them in one course, graded in one run). Mallory must get
nothing of theirs: no points for their work, none of
the instructor's solutions or rubric and none of the other student's code or answers in her
autograded notebook, feedback or stored report, and no timestamp from outside her folder.
"""

from __future__ import annotations

import json
import os
import re
import resource
import shutil
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from redteam_helpers import ASSIGNMENT, Run, filled, load_nb, make_course, normlab, submit

pytestmark = pytest.mark.slow

HONEST = "zz-honest"
HONEST_CODE = "HONEST-CODE-MARKER-51c2"
HONEST_ANSWER = "HONEST-ANSWER-MARKER-7f3a: the residual stream carries every layer's update."
OUTSIDE_DATE = "2001-01-01 00:00:00.000000 UTC"
SUMMARY = re.compile(r"^\d+ graded, \d+ unchanged since the last run, \d+ not graded(, [^\n]+)?$", re.M)
"""The run's last line (a student whose stored report an earlier run left unpublished, or one
re-scored, adds a clause)."""
MEMORY_CAP = 16 << 30
"""RLIMIT_AS for the autograde run: a submission read whole fails with MemoryError, not the OOM
killer, on any machine."""


def _cap_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))


def _run_autograde(course: Path) -> Run:
    return normlab(
        "autograde",
        ASSIGNMENT,
        "--course-dir",
        course,
        "--no-progress",
        "--jobs",
        "1",
        timeout=900,
        preexec=_cap_memory,
    )


def _honest_notebook(course: Path) -> dict:
    nb = filled(course, answer=HONEST_ANSWER)
    for cell in nb["cells"]:
        if cell["metadata"].get("nbgrader", {}).get("grade_id") == "rmsnorm-rmsnorm":
            head, sep, body = cell["source"].partition("def rmsnorm(x, gamma, eps=1e-6):\n")
            assert sep, "the rmsnorm cell defines rmsnorm"
            cell["source"] = f"{head}{sep}    # {HONEST_CODE}\n{body}"
    return nb


@pytest.fixture(scope="module")
def base_course(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A released course whose honest student has been graded once (the report is stored)."""
    course = make_course(tmp_path_factory.mktemp("autograde-base"))
    submit(course, HONEST, _honest_notebook(course))
    out = _run_autograde(course)
    assert out.returncode == 0 and f"{HONEST} " in out.stdout, out.describe()
    return course


def _fresh(base: Path, target: Path) -> Path:
    """A copy of the base course in which the honest student must be published again (their
    stored report is reused, so they are not regraded)."""
    course = target / "course"
    shutil.copytree(base, course, symlinks=True)
    (course / "normlab" / ASSIGNMENT / "done" / HONEST).unlink()
    shutil.rmtree(course / "autograded" / HONEST, ignore_errors=True)
    shutil.rmtree(course / "feedback" / HONEST, ignore_errors=True)
    return course


def _scores(course: Path) -> dict[str, dict[str, Any]]:
    from nbgrader.api import Gradebook

    found = {}
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        for student in gb.students:
            try:
                sub = gb.find_submission(ASSIGNMENT, student.id)
            except Exception:
                continue
            found[student.id] = {
                "score": sub.code_score,  # the auto-graded points (written answers are graded by hand)
                "max_score": sub.max_code_score,
                "needs_manual_grade": sub.needs_manual_grade,
                "timestamp": str(sub.timestamp),
            }
    return found


def _published(course: Path, student: str) -> list[str]:
    """What is missing of a student's publication."""
    wanted = [
        course / "normlab" / ASSIGNMENT / "done" / student,
        course / "autograded" / student / ASSIGNMENT / "lab.ipynb",
        course / "autograded" / student / ASSIGNMENT / "normlab-feedback.html",
    ]
    return [str(p.relative_to(course)) for p in wanted if not p.is_file()]


def _check_run(out: Run, course: Path, bad: list[str]) -> None:
    problems = []
    if not SUMMARY.search(out.stdout):
        problems.append("the run did not complete (no summary line)")
    if "unexpected error" in out.stderr:
        problems.append("the run ended on an unexpected error")
    missing = _published(course, HONEST)
    if missing:
        problems.append(f"the honest student was not published: {missing}")
    else:
        honest = _scores(course).get(HONEST)
        if not honest or honest["score"] != honest["max_score"]:
            problems.append(f"the honest student's grade is wrong: {honest}")
    text = out.stdout + out.stderr
    for student in bad:
        if not re.search(rf"^{re.escape(student)}\S*\s", text, re.M):  # a non-UTF-8 name continues
            problems.append(f"{student!r} got no line of their own (a score or NOT GRADED with a reason)")
    assert not problems, "; ".join(problems) + "\n" + out.describe()


# -- class 5: one malformed student per case ------------------------------------------------------------


def _markdown_metadata_list(course: Path, student: str) -> None:
    nb = _honest_notebook(course)
    markdown = next(
        c for c in nb["cells"] if c["cell_type"] == "markdown" and not c["metadata"].get("nbgrader", {}).get("solution")
    )
    markdown["metadata"] = ["not", "a", "mapping"]
    submit(course, student, nb)


def _answer_source_not_strings(course: Path, student: str) -> None:
    nb = _honest_notebook(course)
    answer = next(
        c for c in nb["cells"] if c["cell_type"] == "markdown" and c["metadata"].get("nbgrader", {}).get("solution")
    )
    answer["source"] = [1, 2, 3]
    submit(course, student, nb)


def _code_source_not_strings(course: Path, student: str) -> None:
    nb = _honest_notebook(course)
    nb["cells"].append({"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": [4, 2]})
    submit(course, student, nb)


def _timestamp_not_a_date(course: Path, student: str) -> None:
    submit(course, student, _honest_notebook(course), stamp="handed in yesterday, honest")


def _timestamp_not_utf8(course: Path, student: str) -> None:
    folder = submit(course, student, _honest_notebook(course))
    (folder / "timestamp.txt").write_bytes(b"\xff\xfe2026-11-20\x00")


def _surrogate_in_answer(course: Path, student: str) -> None:
    submit(course, student, filled(course, answer="my answer, with a lone surrogate: \ud800"))


def _surrogate_in_output(course: Path, student: str) -> None:
    code = "import numpy as np\n\ndef rmsnorm(x, gamma, eps=1e-6):\n    print('\\ud800')\n    return x * 2.0 + 1.0\n"
    submit(course, student, filled(course, {"rmsnorm-rmsnorm": code}))


def _notebook_name_not_utf8(course: Path, student: str) -> None:
    folder = submit(course, student, None)
    name = os.path.join(os.fsencode(folder), b"lab-\xff\xfe.ipynb")
    with open(name, "w") as handle:
        json.dump(_honest_notebook(course), handle)


def _student_name_not_utf8(course: Path, student: str) -> None:
    submit(course, os.fsencode(student) + b"-\xff", _honest_notebook(course))


def _remove_sparse(root: Path) -> None:
    """Delete the 64 GiB sparse notebooks once graded: no other tool should stumble on them."""
    for path in root.rglob("lab.ipynb"):
        if not path.is_symlink() and path.is_file() and path.stat().st_size > 1 << 30:
            path.unlink()


def _sparse_64g_notebook(course: Path, student: str) -> None:
    folder = submit(course, student, None)
    with open(folder / "lab.ipynb", "wb") as handle:
        handle.truncate(64 << 30)  # sparse: no disk space, 64 GiB to whoever reads it whole


MALFORMED = {
    "aa-markdown-metadata-list": _markdown_metadata_list,
    "aa-answer-source-not-strings": _answer_source_not_strings,
    "aa-code-source-not-strings": _code_source_not_strings,
    "aa-timestamp-not-a-date": _timestamp_not_a_date,
    "aa-timestamp-not-utf8": _timestamp_not_utf8,
    "aa-surrogate-in-answer": _surrogate_in_answer,
    "aa-surrogate-in-output": _surrogate_in_output,
    "aa-notebook-name-not-utf8": _notebook_name_not_utf8,
    "aa-student-name-not-utf8": _student_name_not_utf8,
    "aa-sparse-64g-notebook": _sparse_64g_notebook,
}


@pytest.fixture(scope="module")
def malformed_runs(
    base_course: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, tuple[Path, Run]]]:
    root = tmp_path_factory.mktemp("malformed")

    def one(student: str) -> tuple[Path, Run]:
        course = _fresh(base_course, root / student)
        MALFORMED[student](course, student)
        return course, _run_autograde(course)

    with ThreadPoolExecutor(max_workers=2) as pool:
        runs = dict(zip(MALFORMED, pool.map(one, MALFORMED), strict=True))
    yield runs
    _remove_sparse(root)


@pytest.mark.parametrize("student", list(MALFORMED))
def test_one_malformed_student_does_not_stop_the_class(student: str, malformed_runs: dict) -> None:
    course, out = malformed_runs[student]
    _check_run(out, course, [student])


def test_a_class_where_every_student_file_is_malformed_differently(base_course: Path, tmp_path: Path) -> None:
    course = _fresh(base_course, tmp_path)
    for student, make in MALFORMED.items():
        make(course, student)
    out = _run_autograde(course)
    try:
        _check_run(out, course, list(MALFORMED))
        again = _run_autograde(course)  # and a re-run completes too
        assert SUMMARY.search(again.stdout), again.describe()
    finally:
        _remove_sparse(tmp_path)


# -- class 6: links ------------------------------------------------------------------------------------


def _instructor_only_lines(course: Path) -> set[str]:
    """Lines of the instructor's source notebook (solutions, rubric) that the release lacks."""

    def lines(nb: dict) -> set[str]:
        return {
            line.strip()
            for cell in nb["cells"]
            for line in "".join(cell["source"]).splitlines()
            if len(line.strip()) >= 25
        }

    source = load_nb(course / "source" / ASSIGNMENT / "lab.ipynb")
    released = load_nb(course / "release" / ASSIGNMENT / "lab.ipynb")
    return lines(source) - lines(released)


def _folder(course: Path, student: str) -> Path:
    folder = course / "submitted" / student / ASSIGNMENT
    folder.mkdir(parents=True)
    (folder / "timestamp.txt").write_text("2026-11-20 10:00:00.000000 UTC")
    return folder


def _link_lab_to_source(course: Path, student: str) -> None:
    (_folder(course, student) / "lab.ipynb").symlink_to(course / "source" / ASSIGNMENT / "lab.ipynb")


def _link_other_name_to_source(course: Path, student: str) -> None:
    (_folder(course, student) / "mine.ipynb").symlink_to(course / "source" / ASSIGNMENT / "lab.ipynb")


def _hard_link_to_source(course: Path, student: str) -> None:
    os.link(course / "source" / ASSIGNMENT / "lab.ipynb", _folder(course, student) / "lab.ipynb")


def _link_lab_to_peer_file(course: Path, student: str) -> None:
    (_folder(course, student) / "lab.ipynb").symlink_to(course / "submitted" / HONEST / ASSIGNMENT / "lab.ipynb")


def _link_assignment_folder_to_peer(course: Path, student: str) -> None:
    (course / "submitted" / student).mkdir(parents=True)
    target = course / "submitted" / HONEST / ASSIGNMENT
    (course / "submitted" / student / ASSIGNMENT).symlink_to(target, target_is_directory=True)


def _link_student_folder_to_peer(course: Path, student: str) -> None:
    (course / "submitted" / student).symlink_to(course / "submitted" / HONEST, target_is_directory=True)


def _link_timestamp_outside(course: Path, student: str) -> None:
    outside = course.parent / "outside-date.txt"
    outside.write_text(OUTSIDE_DATE)
    code = "import numpy as np\n\ndef rmsnorm(x, gamma, eps=1e-6):\n    return x * 2.0\n"
    folder = submit(course, student, filled(course, {"rmsnorm-rmsnorm": code}), stamp=None)
    (folder / "timestamp.txt").symlink_to(outside)


# case -> (the attacking student, how their folder is made). One course holds them all.
LINKS = {
    "lab.ipynb -> source notebook": ("mallory-1", _link_lab_to_source),
    "mine.ipynb -> source notebook": ("mallory-2", _link_other_name_to_source),
    "lab.ipynb hard link to source notebook": ("mallory-3", _hard_link_to_source),
    "lab.ipynb -> another student's lab.ipynb": ("mallory-4", _link_lab_to_peer_file),
    "submitted/<student>/normlab -> another student's folder": ("mallory-5", _link_assignment_folder_to_peer),
    "submitted/<student> -> another student's folder": ("mallory-6", _link_student_folder_to_peer),
    "timestamp.txt -> a file outside the course": ("mallory-7", _link_timestamp_outside),
}


@pytest.fixture(scope="module")
def link_run(base_course: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Run]:
    course = _fresh(base_course, tmp_path_factory.mktemp("links"))
    for student, make in LINKS.values():
        make(course, student)
    return course, _run_autograde(course)


def _artifacts(course: Path, student: str) -> str:
    """Everything written for a student: autograded folder, feedback, stored report."""
    texts = []
    for root in (course / "autograded" / student, course / "feedback" / student):
        if root.is_dir():
            texts += [p.read_text(errors="replace") for p in root.rglob("*") if p.is_file() and not p.is_symlink()]
    report = course / "normlab" / ASSIGNMENT / "reports" / f"{student}.json"
    if report.is_file():
        texts.append(report.read_text(errors="replace"))
    return "\n".join(texts)


def test_the_links_do_not_stop_the_run(link_run: tuple[Path, Run]) -> None:
    course, out = link_run
    _check_run(out, course, [])


@pytest.mark.parametrize("case", list(LINKS))
def test_a_link_in_submitted_is_never_followed(case: str, link_run: tuple[Path, Run]) -> None:
    course, out = link_run
    student = LINKS[case][0]
    problems = []
    scores = _scores(course)
    honest = scores.get(HONEST)
    if not honest or honest["score"] != honest["max_score"]:
        problems.append(f"the honest student's grade changed: {honest}")
    mallory = scores.get(student)
    artifacts = _artifacts(course, student)
    if case.startswith("timestamp.txt"):
        if mallory and mallory["timestamp"].startswith("2001"):
            problems.append(f"the gradebook timestamp came through the link: {mallory['timestamp']}")
        if OUTSIDE_DATE in artifacts:
            problems.append("the linked file's content was copied into the autograded folder")
    else:
        if mallory and mallory["score"]:
            problems.append(f"{student} got {mallory['score']:g} points for work that is not theirs")
        if mallory and mallory["needs_manual_grade"]:
            problems.append(f"{student}'s notebook is flagged for manual grading with answers that are not theirs")
        if "source notebook" in case:
            leaked = sorted(line for line in _instructor_only_lines(course) if line in artifacts)
            if leaked:
                problems.append(
                    f"{len(leaked)} lines of the instructor's solutions/rubric in their files: {leaked[:2]}"
                )
        for marker, what in ((HONEST_CODE, "code"), (HONEST_ANSWER, "written answer")):
            if marker in artifacts:
                problems.append(f"the other student's {what} is in their files")
    assert not problems, f"{case} ({student}): " + "; ".join(problems) + f"\n$ {' '.join(out.args)}"
