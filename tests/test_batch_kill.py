"""Killing `normlab autograde` with SIGKILL in the middle of a class: nothing of ours survives
it (pool processes, the multiprocessing resource tracker, bubblewrap and the workers inside),
and the re-run grades the rest with nothing lost and nothing graded twice.

Real parts only: a course released with `normlab release` and `nbgrader generate_assignment`,
the real command in a process of its own, the real sandbox, grades read back from nbgrader.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from notebooks import cell_index, filled, load, save
from test_nbgrader import ASSIGNMENT, ENV, ROOT, auto_points, exported, nbgrader, normlab

pytestmark = pytest.mark.slow

# Every call into rmsnorm sleeps past the course's one-second call limit: a grading of a few
# seconds, so the batch is certainly under way when it is killed.
SLOW_RMSNORM = "def rmsnorm(x, gamma, eps=1e-6):\n    import time\n    time.sleep(30)\n"
STUDENTS = [f"s{i:02d}" for i in range(8)]


def _kind(student: str) -> str:
    return ("solved", "slow", "untouched", "slow")[STUDENTS.index(student) % 4]


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    base = tmp_path_factory.mktemp("killed") / "course"
    normlab("release", "--course-dir", base, "--assignment", ASSIGNMENT, cwd=ROOT)
    nbgrader("generate_assignment", ASSIGNMENT, cwd=base)
    toml = base / "normlab.toml"
    text, replaced = re.subn(r"(?m)^call_seconds = [0-9.]+$", "call_seconds = 1.0", toml.read_text())
    assert replaced == 1
    toml.write_text(text)
    released = load(base / "release" / ASSIGNMENT / "lab.ipynb")
    solved = filled(released, load(base / "source" / ASSIGNMENT / "lab.ipynb"))
    slow = filled(released, load(base / "source" / ASSIGNMENT / "lab.ipynb"), {"rmsnorm-rmsnorm": SLOW_RMSNORM})
    assert cell_index(slow, "rmsnorm-rmsnorm") >= 0
    for student in STUDENTS:
        nb = {"solved": solved, "slow": slow, "untouched": released}[_kind(student)]
        save(nb, base / "submitted" / student / ASSIGNMENT / "lab.ipynb")
    return base


def _stat(pid: int) -> tuple[int, int] | None:
    """A process's parent and start time (the pair tells a live process from a reused pid)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    if fields[0] == "Z":  # a zombie is dead; only its parent has not collected it yet
        return None
    return int(fields[1]), int(fields[19])


def _cmdline(pid: int) -> bytes:
    """A process's command line, or nothing if it ended since it was listed."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def _descendants(root: int) -> dict[int, int]:
    """Every live descendant of ``root``: pid -> start time."""
    parents: dict[int, list[tuple[int, int]]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and (stat := _stat(int(entry.name))) is not None:
            parents.setdefault(stat[0], []).append((int(entry.name), stat[1]))
    found: dict[int, int] = {}
    todo = [root]
    while todo:
        for pid, start in parents.get(todo.pop(), []):
            found[pid] = start
            todo.append(pid)
    return found


def _marked(mark: str) -> list[int]:
    """Processes whose environment carries ``mark`` (all of ours that inherit it)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and mark.encode() in (entry / "environ").read_bytes():
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def _survivors(before: dict[int, int], mark: str) -> list[str]:
    alive = [pid for pid, start in before.items() if (stat := _stat(pid)) is not None and stat[1] == start]
    alive += [pid for pid in _marked(mark) if pid not in before]
    out = []
    for pid in sorted(set(alive)):
        try:
            out.append(f"{pid}: {Path(f'/proc/{pid}/cmdline').read_bytes()[:200]!r}")
        except OSError:
            continue  # it ended while we looked
    return out


def _markers(done: Path) -> set[str]:
    """The students marked done: a kill can leave a marker's temporary file (``.s00.*.tmp``,
    written then renamed), which marks nobody."""
    return {p.name for p in done.iterdir() if not p.name.startswith(".")} if done.is_dir() else set()


def _kill_mid_batch(course: Path) -> tuple[dict[int, int], str]:
    """Start the command, SIGKILL it once some students are done and its pool is busy."""
    mark = f"NORMLAB_KILL_TEST={uuid.uuid4().hex}"
    name, value = mark.split("=")
    command = [sys.executable, "-m", "grader", "autograde", ASSIGNMENT, "--course-dir", str(course)]
    proc = subprocess.Popen(
        [*command, "--no-progress", "--jobs", "2"],
        cwd=ROOT,
        env={**ENV, name: value},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    done = course / "normlab" / ASSIGNMENT / "done"
    deadline = time.monotonic() + 600
    try:
        while time.monotonic() < deadline and proc.poll() is None:
            tree = _descendants(proc.pid)
            sandboxed = [p for p in tree if b"bwrap" in _cmdline(p)[:40]]
            if done.is_dir() and _markers(done) and sandboxed:
                os.kill(proc.pid, signal.SIGKILL)
                proc.wait()
                return tree, mark
            time.sleep(0.05)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    raise AssertionError("the batch finished (or stalled) before it could be killed in the middle")


def test_a_killed_batch_leaves_no_process_and_the_rerun_grades_the_rest_once(course):
    tree, mark = _kill_mid_batch(course)
    kinds = {Path(f"/proc/{p}/cmdline").read_bytes()[:200] for p in tree if Path(f"/proc/{p}").exists()}
    work = course / "normlab" / ASSIGNMENT
    survivors: list[str] = []
    for _ in range(50):  # the kernel delivers the parent-death signals at once; reaping takes a moment
        survivors = _survivors(tree, mark)
        if not survivors:
            break
        time.sleep(0.1)
    assert tree and not survivors, (survivors, kinds)

    done_before = _markers(work / "done")
    reports_before = {p.stem: p.stat().st_mtime_ns for p in (work / "reports").glob("*.json")}
    assert 0 < len(done_before) < len(STUDENTS)

    out = normlab("autograde", ASSIGNMENT, "--course-dir", course, "--no-progress", cwd=ROOT).stdout
    # A student graded and stored before the kill but not yet published is published, not graded.
    resumed = len(set(reports_before) - done_before)
    rest = len(STUDENTS) - len(done_before) - resumed
    assert f"{rest} graded, {len(done_before)} unchanged since the last run, 0 not graded" in out, out
    assert (f", {resumed} graded by an earlier run, published now" in out) == (resumed > 0), out
    for student, stamp in reports_before.items():  # a stored report is reused, never regraded
        assert (work / "reports" / f"{student}.json").stat().st_mtime_ns == stamp, student
    assert _markers(work / "done") == set(STUDENTS)

    grades = exported(course)
    full = auto_points(course)
    assert set(grades) == set(STUDENTS)
    for student in STUDENTS:
        kind = _kind(student)
        if kind == "solved":
            assert grades[student] == full, student
        elif kind == "untouched":
            assert grades[student] == 0, student
        else:
            assert 0 < grades[student] < full, student  # everything but rmsnorm (and what calls it)
    again = normlab("autograde", ASSIGNMENT, "--course-dir", course, "--no-progress", cwd=ROOT).stdout
    assert f"0 graded, {len(STUDENTS)} unchanged" in again
