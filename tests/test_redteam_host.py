"""Red team, class 7 and the host: concurrent gradings, the sandbox's view of the host, and
what the in-kernel runner leaves behind.

Class 7, concurrent gradings share a uid. Principle (ARCHITECTURE.md, Decision 3): one slot
allocator per host, so no two concurrent gradings ever share an unprivileged uid (and its
RLIMIT_NPROC). A hostile grading that holds every process its uid may have must not stop an
honest grading started next to it: the honest one (correct code that uses a thread pool) gets
the full marks it gets alone, with a uid of its own (``--json`` shows it as
``isolation.uid``).

Also seen (issue 9): the sandbox's PID 1 shows the host's paths; an installed copy of the grader
in ``/usr/local/lib/python3.X/site-packages`` is not hidden; the in-kernel runner of nbgrader's
native path leaves its temporary directories, with hidden inputs in them, behind.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from redteam_helpers import (
    ATTACKS,
    NORMLAB,
    ROOT,
    SOLUTIONS,
    TESTS,
    env,
    normlab,
    run,
    with_module,
)

pytestmark = pytest.mark.slow


def _busiest_descendant(root: int) -> tuple[int, int] | None:
    """(uid, task count) of the process with the most tasks among ``root``'s descendants: the
    hostile worker, whatever uid the grader gave it."""
    parent, info = {}, {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            status = Path(f"/proc/{pid}/status").read_text()
            tasks = len(os.listdir(f"/proc/{pid}/task"))
        except OSError:
            continue
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        parent[int(pid)] = int(fields["PPid"])
        info[int(pid)] = (int(fields["Uid"].split()[1]), tasks)
    best = None
    for pid, (uid, tasks) in info.items():
        ancestor, hops = parent.get(pid), 0
        while ancestor and ancestor != root and hops < 16:
            ancestor, hops = parent.get(ancestor), hops + 1
        if ancestor == root and (best is None or tasks > best[1]):
            best = (uid, tasks)
    return best


def test_a_hostile_grading_does_not_stop_a_concurrent_honest_one(tmp_path: Path) -> None:
    hostile = with_module(tmp_path / "hostile", "rmsnorm", (ATTACKS / "rmsnorm_hold_every_process.py").read_text())
    honest = with_module(tmp_path / "honest", "rmsnorm", (ATTACKS / "rmsnorm_honest_uses_threads.py").read_text())
    alone = normlab("grade", honest, "--json")
    assert alone.returncode == 0 and alone.json()["score"] == alone.json()["max_score"], alone.describe()
    proc = subprocess.Popen(
        [*NORMLAB, "grade", str(hostile), "--json", "-k", "rmsnorm"],
        cwd=ROOT,
        env=env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        # Wait until the hostile worker holds its uid's processes (not vacuous).
        deadline, held = time.monotonic() + 60, None
        while time.monotonic() < deadline:
            held = _busiest_descendant(proc.pid)
            if held and held[1] >= 48:
                break
            time.sleep(0.2)
        assert held and held[1] >= 48, f"the hostile submission never held its uid's processes: {held}"
        hostile_uid = held[0]
        beside = normlab("grade", honest, "--json")
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    assert beside.returncode == 0, f"the honest grading failed next to a hostile one:\n{beside.describe()}"
    data = beside.json()
    lost = [f"{t['name']}: {t['output'][:120]!r}" for t in data["tests"] if t["status"] != "passed"]
    uid = data["isolation"]["uid"]
    problems = []
    if lost:
        problems.append(f"the honest submission lost {data['max_score'] - data['score']:g} points: {lost[:3]}")
    if uid is None or uid == hostile_uid:
        problems.append(f"both gradings ran as uid {hostile_uid}")
    assert not problems, "; ".join(problems)


# -- the sandbox's view of the host -------------------------------------------------------------------


def _public_feedback(out) -> str:  # type: ignore[no-untyped-def]
    return "\n".join(t["output"] for t in out.json()["tests"] if t["visibility"] == "public")


def test_the_sandbox_does_not_show_the_host_paths_of_the_grading(tmp_path: Path) -> None:
    submission = with_module(tmp_path / "sub", "rmsnorm", (ATTACKS / "rmsnorm_proc_cmdline.py").read_text())
    out = normlab("grade", submission, "--json", "-k", "test_rmsnorm_small_example")
    assert out.returncode == 0, out.describe()
    feedback = _public_feedback(out)
    assert "LEAK:" in feedback, "the attack ran and its text reached the public feedback"
    shown = [p for p in ("normlab-sub-", str(ROOT / "grader" / "worker"), "normlab-scratch-") if p in feedback]
    assert not shown, f"host paths of the grading visible in the sandbox: {shown}\n{feedback[:1200]}"


@pytest.fixture
def usr_local_grader() -> Iterator[Path]:
    """An installed copy of the grader where pip puts it for a python under /usr/local."""
    if os.geteuid() != 0:
        pytest.skip("needs root to write under /usr/local")
    site = Path(f"/usr/local/lib/python{sys.version_info.major}.{sys.version_info.minor}/site-packages")
    created = not site.exists()
    package = site / "grader"
    if package.exists():
        pytest.skip(f"{package} exists already: not touching it")
    (package / "suites").mkdir(parents=True)
    (package / "suites" / "test_redteam_marker.py").write_text('SECRET = "REDTEAM-INSTALLED-SUITE-MARKER"\n')
    try:
        yield package
    finally:
        shutil.rmtree(site if created else package, ignore_errors=True)


def test_no_installed_copy_of_the_grader_is_visible(usr_local_grader: Path, tmp_path: Path) -> None:
    submission = with_module(tmp_path / "sub", "rmsnorm", (ATTACKS / "rmsnorm_find_installed_grader.py").read_text())
    out = normlab("grade", submission, "--json", "-k", "test_rmsnorm_small_example")
    assert out.returncode == 0, out.describe()
    feedback = _public_feedback(out)
    assert "rmsnorm raised" in feedback, feedback[:500]
    assert "REDTEAM-INSTALLED-SUITE-MARKER" not in feedback, f"an installed hidden suite is readable:\n{feedback[:800]}"


# -- the in-kernel runner (nbgrader's native path) --------------------------------------------------------

_NATIVE = r"""
import contextlib, io, sys
sys.path.insert(0, sys.argv[1])
sys.path.insert(0, sys.argv[2])
from redteam_helpers import exercises, internal
import importlib
namespace = {}
for module in exercises():
    namespace.update(vars(importlib.import_module(module)))
with contextlib.redirect_stdout(io.StringIO()):
    points = internal("run_hidden")("inspect_config", namespace)
print(points)
"""


def test_the_native_runner_leaves_no_temporary_files(tmp_path: Path) -> None:
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    out = run([sys.executable, "-c", _NATIVE, str(TESTS), str(SOLUTIONS)], extra_env={"TMPDIR": str(scratch)})
    assert out.returncode == 0 and float(out.stdout.split()[-1]) > 0, out.describe()  # the reference scored
    left = sorted(str(p.relative_to(scratch)) for p in scratch.rglob("*"))
    hidden_inputs = [p for p in left if p.endswith(".json")]
    assert not left, f"left behind in TMPDIR ({len(hidden_inputs)} config files, hidden inputs): {left[:6]}"
