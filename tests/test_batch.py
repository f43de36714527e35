"""The batch grader: a pool process that dies costs only its own submission, which is retried
once; every grading has a worker slot (and uid) of its own, on this machine and on Dask."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import zlib
from dataclasses import replace
from pathlib import Path

import pytest
from helpers import copy_solutions, patched

from grader.batch import grade_many
from grader.model import Graded, Late, NotGraded
from grader.runner import Options
from grader.sandbox.limits import Limits
from grader.settings import current as current_settings

pytestmark = pytest.mark.slow

# Every call into rmsnorm sleeps past its limit: a grading that takes seconds, long enough to
# kill the pool process in the middle of it.
SLOW = ("rmsnorm", "    xf = x.astype(", "    import time\n    time.sleep(5)\n    xf = x.astype(")
OPTIONS = Options(suites=("public",), settings=current_settings().replace(limits=Limits(call_seconds=1.0)))


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            found.append(int(entry.name))
    return found


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def _is_worker(pid: int, parent: int) -> bool:
    """A worker started cold (the harness), or one forked by a warm sandbox's zygote (the
    zygote's command line, under a parent with the same one)."""
    command = _cmdline(pid)
    if b"python" not in command.split(b"\0")[0]:  # bubblewrap's own command line names them too
        return False
    return b"inside.harness" in command or (b"inside.zygote" in command and command == _cmdline(parent))


def _has_worker(pid: int) -> bool:
    todo = [pid]
    while todo:
        parent = todo.pop()
        for child in _children(parent):
            if _is_worker(child, parent):
                return True
            todo.append(child)
    return False


def _busy_pool_processes() -> list[int]:
    """Pool processes of this test process that are grading: those with a worker below them (an
    idle one may keep its slot's warm sandbox, which is not a worker)."""
    pool = [p for p in _children(os.getpid()) if b"spawn_main" in _cmdline(p)]
    return [p for p in pool if _has_worker(p)]


def _kill_busy(times: int, stop: threading.Event) -> None:
    """Kill the busy pool processes ``times`` times (once per new pool process)."""
    killed: set[int] = set()
    while len(killed) < times and not stop.is_set():
        for pid in _busy_pool_processes():
            if pid not in killed:
                os.kill(pid, signal.SIGKILL)
                killed.add(pid)
        time.sleep(0.2)


def _grade_while_killing(tmp_path: Path, kills: int) -> dict[str, object]:
    slow = patched(tmp_path / "slow", *SLOW)
    honest = [copy_solutions(tmp_path / f"honest{i}") for i in range(3)]
    stop = threading.Event()
    killer = threading.Thread(target=_kill_busy, args=(kills, stop))
    outcomes: dict[str, object] = {}
    # The slow one goes last, so the honest ones are done (and their pool processes idle)
    # before it starts; from then on it is the only busy grading.
    for path, outcome in grade_many([*honest, slow], OPTIONS, jobs=2):
        outcomes[path.name] = outcome
        if len(outcomes) == len(honest) and not killer.is_alive():
            killer.start()
    stop.set()
    return outcomes


def test_a_pool_process_killed_once_costs_nothing_its_submission_is_retried(tmp_path):
    outcomes = _grade_while_killing(tmp_path, kills=1)
    assert set(outcomes) == {"honest0", "honest1", "honest2", "slow"}
    for name in ("honest0", "honest1", "honest2"):
        report = outcomes[name].report
        assert report.score == report.max_score
    assert isinstance(outcomes["slow"], Graded)  # the retry finished it


def test_a_submission_whose_pool_process_dies_twice_is_not_graded_and_the_rest_is(tmp_path):
    outcomes = _grade_while_killing(tmp_path, kills=2)
    assert isinstance(outcomes["slow"], NotGraded)
    assert "died twice" in outcomes["slow"].reason
    assert all(isinstance(outcomes[f"honest{i}"], Graded) for i in range(3))


def test_a_grading_past_the_ceiling_is_stopped_and_the_rest_is_graded(tmp_path):
    """One grading that does not end (here: calls far slower than the ceiling, which only a
    fault of ours would reach with the real one) is stopped, its process killed, reported
    as not graded, and not tried again; the other gradings finish."""
    honest = copy_solutions(tmp_path / "honest")
    stuck = patched(copy_solutions(tmp_path / "stuck"), *SLOW)
    slow = Options(suites=("public",), settings=current_settings().replace(limits=Limits(call_seconds=60.0)))
    started = time.monotonic()
    outcomes = {path.name: outcome for path, outcome in grade_many([stuck, honest], slow, jobs=2, ceiling=8.0)}
    assert isinstance(outcomes["honest"], Graded) and outcomes["honest"].report.score > 0
    assert isinstance(outcomes["stuck"], NotGraded)
    assert "ran past 8 s and was stopped" in outcomes["stuck"].reason
    assert time.monotonic() - started < 40  # stopped once, not graded again


def _colliding_names() -> tuple[str, str]:
    """Two Dask worker names that the old slot rule (crc32 % 1000) put in the same slot."""
    seen: dict[int, str] = {}
    for i in range(10_000):
        name = f"grader-{i}"
        slot = zlib.crc32(name.encode()) % 1000
        if slot in seen:
            return seen[slot], name
        seen[slot] = name
    raise AssertionError("no collision found")


def test_named_dask_workers_grading_at_once_never_share_a_uid(tmp_path):
    distributed = pytest.importorskip("distributed")
    import asyncio

    names = _colliding_names()
    sleepy = "    import time\n    time.sleep(0.8)\n    xf = x.astype("
    slow = [patched(tmp_path / f"slow{i}", "rmsnorm", SLOW[1], sleepy) for i in range(2)]

    async def cluster() -> tuple[distributed.Scheduler, list[distributed.Worker]]:
        scheduler = await distributed.Scheduler(host="127.0.0.1", port=0, dashboard_address=":0")
        workers = [await distributed.Worker(scheduler.address, name=n, nthreads=1) for n in names]
        return scheduler, workers

    loop = asyncio.new_event_loop()
    scheduler, workers = loop.run_until_complete(cluster())
    runner = threading.Thread(target=loop.run_forever, daemon=True)
    runner.start()
    try:
        options = Options(suites=("public",), settings=current_settings())
        graded = list(grade_many(slow, options, scheduler=scheduler.address))
        not_graded = [(path.name, outcome.reason) for path, outcome in graded if isinstance(outcome, NotGraded)]
        assert not not_graded, not_graded
        uids = {path.name: outcome.report.worker_uid for path, outcome in graded}
    finally:
        for worker in workers:
            asyncio.run_coroutine_threadsafe(worker.close(), loop).result(30)
        asyncio.run_coroutine_threadsafe(scheduler.close(), loop).result(30)
        loop.call_soon_threadsafe(loop.stop)
    if None in uids.values():
        pytest.skip("workers run without their own uid here (not root): nothing to share")
    assert len(uids) == 2 and len(set(uids.values())) == 2, uids


def test_a_dask_scheduler_without_workers_stops_the_run_with_what_to_do(tmp_path, monkeypatch):
    """A scheduler no worker joined held the class's tasks without a word, for ever: the run
    waits a while for a worker, then stops, says how to start one, and grades nothing."""
    distributed = pytest.importorskip("distributed")
    import asyncio

    from grader import batch
    from grader.faults import GraderFault

    monkeypatch.setattr(batch, "DASK_WORKER_SECONDS", 2.0)
    loop = asyncio.new_event_loop()
    scheduler = loop.run_until_complete(_scheduler(distributed))
    threading.Thread(target=loop.run_forever, daemon=True).start()
    try:
        started = time.monotonic()
        options = Options(suites=("public",), settings=current_settings())
        with pytest.raises(GraderFault, match=r"has no workers \(waited 2 s\).*dask worker tcp://"):
            list(grade_many([copy_solutions(tmp_path / "alice")], options, scheduler=scheduler.address))
        assert time.monotonic() - started < 30
    finally:
        asyncio.run_coroutine_threadsafe(scheduler.close(), loop).result(30)
        loop.call_soon_threadsafe(loop.stop)


async def _scheduler(distributed):
    return await distributed.Scheduler(host="127.0.0.1", port=0, dashboard_address=":0")


def test_an_nbgrader_hand_in_that_cannot_be_read_or_is_ambiguous_is_not_graded_not_zero(tmp_path):
    """A notebook too large to read, or several notebooks none of which has the released name:
    the student handed in work, so it is listed as not graded (with why), never scored 0."""
    from grader.classgrade import Refused, Submitted
    from grader.integrations.nbgrader.autograde import NbgraderCourse
    from grader.notebook import MAX_NOTEBOOK_BYTES

    root = tmp_path / "course"
    (root / "release" / "lab").mkdir(parents=True)
    (root / "release" / "lab" / "lab.ipynb").write_text("{}")
    for student, files in {
        "big": {"lab.ipynb": b"x" * (MAX_NOTEBOOK_BYTES + 1)},
        "two": {"lab-Copy1.ipynb": b"{}", "Untitled.ipynb": b"{}"},
        "renamed": {"mine.ipynb": b"{}"},
    }.items():
        folder = root / "submitted" / student / "lab"
        folder.mkdir(parents=True)
        for name, data in files.items():
            (folder / name).write_bytes(data)
    entries = {e.student: e for e in NbgraderCourse(root, "lab", tmp_path / "staging").submissions()}
    assert isinstance(entries["big"], Refused) and "larger than" in entries["big"].reason
    assert isinstance(entries["two"], Refused) and "Untitled.ipynb" in entries["two"].reason
    assert isinstance(entries["renamed"], Submitted) and entries["renamed"].path is not None


def test_a_late_penalty_is_in_the_outcome_of_a_later_run_too(tmp_path):
    """A student left unchanged by a later run keeps the penalty the publication took: the
    class summary counted them at full marks once the run that published them was over."""
    from grader.classgrade import ClassRun, State, grade_class
    from grader.integrations.folder import FolderClass, FolderPublisher
    from grader.runner import Options

    class LatePublisher(FolderPublisher):
        def publish(self, submitted, report):
            super().publish(submitted, report)
            return Late(5.0)

    handed_in = tmp_path / "handed-in"
    handed_in.mkdir()
    (handed_in / "ana.py").write_text("import numpy as np\n")
    source = FolderClass(handed_in, tmp_path / "out")
    run = ClassRun(source, LatePublisher(source, "en"), Options(suites=("public",)), progress=False)
    first = list(grade_class(run))
    second = list(grade_class(run))
    assert [(o.state, o.penalty) for o in first] == [(State.GRADED, 5.0)]
    assert [(o.state, o.penalty) for o in second] == [(State.UNCHANGED, 5.0)]


def test_a_half_written_file_left_by_a_killed_run_is_removed_by_the_next(tmp_path):
    import os

    from grader.classgrade import STALE_SECONDS, ClassRun, grade_class
    from grader.integrations.folder import FolderClass, FolderPublisher
    from grader.runner import Options

    source = FolderClass(tmp_path / "handed-in", tmp_path / "out")
    (tmp_path / "handed-in").mkdir()
    done = source.work / "done"
    done.mkdir(parents=True)
    old, fresh = done / ".ana.x1.tmp", done / ".ben.x2.tmp"
    old.write_text("half")
    fresh.write_text("another run is writing it")
    os.utime(old, (1, 1))
    list(grade_class(ClassRun(source, FolderPublisher(source, "en"), Options(suites=("public",)), progress=False)))
    assert not old.exists() and fresh.exists() and STALE_SECONDS >= 60


def test_a_new_grader_grades_a_done_class_again(tmp_path, monkeypatch):
    """A suite fixed or normlab upgraded changes grades: a run afterwards grades everyone again
    (an instructor trial: an interrupted --force was never finished, everyone left "unchanged")."""
    from grader import classgrade
    from grader.classgrade import ClassRun, State, grade_class
    from grader.integrations.folder import FolderClass, FolderPublisher
    from grader.runner import Options

    handed_in = tmp_path / "handed-in"
    handed_in.mkdir()
    (handed_in / "ana.py").write_text("import numpy as np\n")
    source = FolderClass(handed_in, tmp_path / "out")
    run = ClassRun(source, FolderPublisher(source, "en"), Options(suites=("public",)), progress=False)
    assert [o.state for o in grade_class(run)] == [State.GRADED]
    assert [o.state for o in grade_class(run)] == [State.UNCHANGED]
    assert classgrade.grading_identity() == classgrade.grading_identity()  # stable within one install
    monkeypatch.setattr(classgrade, "grading_identity", lambda: "another grader")
    assert [o.state for o in grade_class(run)] == [State.GRADED]


def test_a_forced_run_stopped_half_way_is_finished_by_the_next_run(tmp_path):
    """Trial 61: after a --force run stopped with Ctrl-C, the message said to run again without
    --force, and that run graded nobody: the students the forced run never reached kept the
    grades of before (under the old limits, say) while the instructor thought them regraded."""
    from dataclasses import replace

    from grader.classgrade import ClassRun, State, grade_class
    from grader.integrations.folder import FolderClass, FolderPublisher
    from grader.runner import Options

    handed_in = tmp_path / "handed-in"
    handed_in.mkdir()
    for student in ("ana", "bo", "cy"):
        (handed_in / f"{student}.py").write_text("import numpy as np\n")
    source = FolderClass(handed_in, tmp_path / "out")
    run = ClassRun(source, FolderPublisher(source, "en"), Options(suites=("public",)), progress=False, jobs=1)
    assert {o.state for o in grade_class(run)} == {State.GRADED}
    forced = grade_class(replace(run, force=True))
    first = next(forced)  # then stopped, as Ctrl-C stops the loop that publishes
    forced.close()
    again = {o.student: o.state for o in grade_class(run)}
    assert again[first.student] is State.UNCHANGED
    assert all(state is not State.UNCHANGED for student, state in again.items() if student != first.student), again
    assert {o.state for o in grade_class(run)} == {State.UNCHANGED}  # and then it is done


def test_a_deleted_feedback_page_is_published_again_without_grading(tmp_path):
    """A done student whose published page is gone is published again from the stored report
    (as one missing from an nbgrader gradebook is, red team 31), not left "unchanged"."""
    from grader.classgrade import ClassRun, State, grade_class
    from grader.integrations.folder import FolderClass, FolderPublisher
    from grader.runner import Options

    handed_in = tmp_path / "handed-in"
    handed_in.mkdir()
    for name in ("ana", "bea"):
        (handed_in / f"{name}.py").write_text("import numpy as np\n")
    source = FolderClass(handed_in, tmp_path / "out")
    run = ClassRun(source, FolderPublisher(source, "en"), Options(suites=("public",)), progress=False)
    list(grade_class(run))
    (tmp_path / "out" / "feedback" / "ana.html").unlink()
    again = {o.student: o.state for o in grade_class(run)}
    assert again == {"ana": State.REPUBLISHED, "bea": State.UNCHANGED}
    assert (tmp_path / "out" / "feedback" / "ana.html").is_file()


def test_a_class_run_leaves_nothing_in_the_temporary_folder(tmp_path):
    """Pool processes end without running ``atexit`` handlers: whatever a grading puts in the
    temporary folder must be gone when the run is, or each run leaves a folder per process."""
    for name in ("alice", "bob"):
        copy_solutions(tmp_path / "class" / name)
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    command = [sys.executable, "-m", "grader.cli", "grade-class", str(tmp_path / "class"), "-o", str(tmp_path / "out")]
    done = subprocess.run(
        [*command, "--jobs", "2"], env={**os.environ, "TMPDIR": str(scratch)}, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert "2 graded" in done.stdout
    assert sorted(p.name for p in scratch.iterdir()) == []


def test_a_first_class_run_stopped_with_ctrl_c_keeps_the_grades_it_published(tmp_path):
    """Instructor trial 34: a first grade-class run stopped with Ctrl-C wrote a grades.csv of
    its header only, though feedback pages were out; and it exited 1 ("a check found
    problems") with click's "Aborted!"."""
    import csv

    from grader.integrations.folder import FolderClass

    for name in ("ana", "bea"):
        copy_solutions(tmp_path / "class" / name)
    patched(tmp_path / "class" / "zed", *SLOW)  # graded last; each rmsnorm call sleeps 5 s
    source = FolderClass(tmp_path / "class", tmp_path / "out")
    command = [sys.executable, "-m", "grader.cli", "grade-class", str(source.root), "-o", str(source.out)]
    proc = subprocess.Popen(
        [*command, "--jobs", "1", "--no-progress"],
        start_new_session=True,  # Ctrl-C reaches the terminal's whole process group
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and not {"ana", "bea"} <= {p.name for p in (source.work / "done").glob("*")}:
        time.sleep(0.1)
    time.sleep(1.0)  # zed's grading is under way
    os.killpg(proc.pid, signal.SIGINT)
    try:
        out, err = proc.communicate(timeout=120)  # zed's grading alone takes minutes
    finally:
        if proc.poll() is None:  # it waited for zed: the test fails, and leaves nothing behind
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130 and "interrupted: 2 student(s) published" in err, out + err
    with open(source.out / "grades.csv", newline="") as handle:
        rows = {row["student"]: row for row in csv.DictReader(handle)}
    assert set(rows) == {"ana", "bea"} and {row["status"] for row in rows.values()} == {"graded"}


def test_a_second_run_on_the_same_class_is_refused_while_the_first_grades(tmp_path):
    """Instructor trial 34: two runs at once (a double start, a cron job beside a manual run)
    each graded every student, raced each other to publish, and neither said a word. The lock
    goes with the run, however it ends: after a SIGKILL the next run grades."""
    copy_solutions(tmp_path / "class" / "ana")
    patched(tmp_path / "class" / "zed", *SLOW)  # each rmsnorm call sleeps 5 s: the first run is long
    command = [sys.executable, "-m", "grader.cli", "grade-class", str(tmp_path / "class"), "-o", str(tmp_path / "out")]
    first = subprocess.Popen([*command, "--no-progress"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not (tmp_path / "out" / "normlab" / "reports" / "ana.json").exists():
            time.sleep(0.1)
        second = subprocess.run([*command, "--no-progress"], capture_output=True, text=True, timeout=120)
        assert second.returncode == 2 and "another normlab run is grading this class now" in second.stderr
        assert "wrote" not in second.stdout  # the first run's files are left to it
    finally:
        first.kill()
        first.wait()
    shutil.rmtree(tmp_path / "class" / "zed")
    third = subprocess.run([*command, "--no-progress"], capture_output=True, text=True, timeout=300)
    assert third.returncode == 0, third.stdout + third.stderr


def test_what_a_killed_write_of_a_feedback_page_left_is_removed_when_it_is_written_again(tmp_path):
    """Instructor trial 34: SIGKILL while publishing left a half-written page's temporary file
    beside it, which no later run removed (nbgrader's generate_feedback passed one on)."""
    from grader.classgrade import ClassRun, grade_class
    from grader.integrations.folder import FolderClass, FolderPublisher
    from grader.runner import Options

    handed_in = tmp_path / "handed-in"
    handed_in.mkdir()
    (handed_in / "ana.py").write_text("import numpy as np\n")
    source = FolderClass(handed_in, tmp_path / "out")
    run = ClassRun(source, FolderPublisher(source, "en"), Options(suites=("public",)), progress=False)
    list(grade_class(run))
    leftover = tmp_path / "out" / "feedback" / ".ana.html.x1y2z3.tmp"
    leftover.write_text("half a page")
    list(grade_class(replace(run, force=True)))
    assert not leftover.exists() and (tmp_path / "out" / "feedback" / "ana.html").is_file()


def test_a_run_lock_that_cannot_be_taken_is_a_usage_error_and_nothing_is_written(tmp_path):
    """Red team 37: a run.lock that is a folder (or a link, or on a read-only disk) was a grader
    fault with a traceback, and the run then wrote the class's files without the lock."""
    (tmp_path / "class").mkdir()
    (tmp_path / "class" / "ana.py").write_text("import numpy as np\n")
    (tmp_path / "out" / "normlab" / "run.lock").mkdir(parents=True)
    command = [sys.executable, "-m", "grader.cli", "grade-class", str(tmp_path / "class"), "-o", str(tmp_path / "out")]
    done = subprocess.run([*command, "--no-progress"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 2 and "run.lock cannot be opened" in done.stderr, done.stdout + done.stderr
    assert "Traceback" not in done.stderr and not (tmp_path / "out" / "grades.csv").exists()


def test_the_ctrl_c_message_of_a_forced_run_says_to_go_on_without_force():
    """Trial 58: after Ctrl-C on `autograde --force`, the message said to run the same command
    again, which grades every student again; the run goes on without --force."""
    from grader.cli import InterruptedExit, _echo_class

    def interrupted():
        raise KeyboardInterrupt
        yield  # a generator, as the class run's outcomes are

    for force, said in ((True, "run the same command without --force again"), (False, "run the same command again")):
        with pytest.raises(InterruptedExit) as stopped:
            _echo_class(interrupted(), force=force)
        assert said in stopped.value.message, stopped.value.message


def test_a_students_folder_is_not_listed_whole(tmp_path, monkeypatch):
    """Trial 62: a student's folder of 300,000 files took a class run from 2.8 s to 6.3 s, the
    folder listed (and every entry stat'ed) twice. Only the names grading reads are looked up:
    the class folder is listed, a student's folder never is."""
    import os

    from grader import files
    from grader.integrations.folder import FolderClass

    handed_in = tmp_path / "handed-in"
    (handed_in / "ana").mkdir(parents=True)
    (handed_in / "ana" / "rmsnorm.py").write_text("import numpy as np\n")
    for n in range(50):
        (handed_in / "ana" / f"junk{n}.txt").write_text("")
    listed = []
    real = os.listdir

    def listdir(path=None):
        found = real(path)
        listed.append(len(found))
        return found

    monkeypatch.setattr(files.os, "listdir", listdir)
    found = list(FolderClass(handed_in, tmp_path / "out").submissions())
    assert [s.student for s in found] == ["ana"] and found[0].path == handed_in / "ana"
    assert listed == [1], listed  # the class folder's one entry; ana's 51 never
