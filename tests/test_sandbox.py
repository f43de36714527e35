"""The isolation layers: each one checked from inside a real worker, and honest degradation."""

import json
import os
import platform
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from grader import course
from grader.runner import Options, grade
from grader.sandbox import seccomp
from grader.sandbox.doctor import diagnose
from grader.sandbox.policy import ALL_LAYERS
from grader.settings import current as current_settings

ROOT = Path(__file__).resolve().parent.parent
SANDBOX_REQUIRED = current_settings().require_sandbox


def normlab(*args, **env):
    return subprocess.run(
        [sys.executable, "-m", "grader", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, **env},
        timeout=600,
    )


def test_doctor_checks_every_layer_from_inside_a_worker():
    statuses = {s.name: s for s in diagnose(current_settings())}
    assert list(statuses) == list(ALL_LAYERS)
    assert all(statuses[name].active for name in ("process", "rlimits", "wall-clock"))
    if SANDBOX_REQUIRED:  # CI installs bubblewrap and runs as root: everything must be on
        assert all(s.active for s in statuses.values()), {s.name: s.detail for s in statuses.values()}
        assert "hidden suites visible: False" in statuses["namespaces"].detail


def test_doctor_without_bubblewrap_reports_honestly():
    out = normlab("doctor", "--json", NORMLAB_BWRAP="/nonexistent/bwrap")
    assert out.returncode == 1
    layers = {entry["layer"]: entry for entry in json.loads(out.stdout)}
    assert layers["namespaces"]["active"] is False
    assert "apt-get install bubblewrap" in layers["namespaces"]["detail"]
    assert layers["process"]["active"] and layers["wall-clock"]["active"]


def test_a_bubblewrap_that_cannot_make_namespaces_is_not_told_to_be_installed(tmp_path):
    """A container that forbids user namespaces (Docker's default, perhaps Gradescope's): bwrap
    is there and fails, so "install it" would send the instructor the wrong way."""
    fake = tmp_path / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: Creating new namespace failed: Operation not permitted' >&2\nexit 1\n")
    fake.chmod(0o755)
    out = normlab("doctor", "--json", NORMLAB_BWRAP=str(fake))
    detail = {entry["layer"]: entry for entry in json.loads(out.stdout)}["namespaces"]["detail"]
    assert out.returncode == 1 and "apt-get install" not in detail and "require_sandbox = false" in detail
    assert "install bubblewrap" not in out.stdout  # nor through another layer's remedy


def test_missing_layer_is_a_hard_error_when_required():
    out = normlab("grade", "solutions", "--require-sandbox", NORMLAB_BWRAP="/nonexistent/bwrap")
    assert out.returncode == 3 and "namespaces" in out.stderr and out.stdout == ""
    out = normlab("grade", "solutions", NORMLAB_BWRAP="/nonexistent/bwrap", NORMLAB_REQUIRE_SANDBOX="1")
    assert out.returncode == 3


def test_degraded_grading_still_works_and_every_report_says_so():
    env = {"NORMLAB_BWRAP": "/nonexistent/bwrap", "NORMLAB_REQUIRE_SANDBOX": "0"}
    data = json.loads(normlab("grade", "solutions", "--json", **env).stdout)
    assert data["score"] == data["max_score"]
    assert "namespaces" in data["isolation"]["missing"]
    text = normlab("grade", "solutions", "--public-only", **env).stdout
    assert "WARNING: degraded isolation" in text and "namespaces" in text


@pytest.mark.skipif(os.geteuid() != 0, reason="slot uids are assigned only when the grader runs as root")
def test_each_slot_runs_as_its_own_uid():
    report = grade(course.solutions_dir(), Options(suites=("public",), slot=3))
    assert report.worker_uid == current_settings().uid_base + 3 and "unprivileged-uid" in report.isolation


def test_seccomp_filter_denies_process_creation_and_sockets_but_not_threads():
    # A forked child loads the real filter and reports what still works.
    code = """
import os, socket, subprocess, sys, threading
import numpy as np
from grader.sandbox.seccomp import build_filter
from grader.sandbox.inside import harness
harness.load_seccomp(np.frombuffer(build_filter(), dtype=np.uint8))
seen = {}
for name, call in [("fork", os.fork), ("socket", socket.socket), ("exec", lambda: subprocess.run(["true"])),
                   ("kill", lambda: os.kill(os.getppid(), 0)), ("setsid", os.setsid)]:
    try:
        call()
        seen[name] = "allowed"
    except OSError as exc:
        seen[name] = exc.errno
box = []
thread = threading.Thread(target=lambda: box.append(float((np.ones((64, 64)) @ np.ones((64, 64)))[0, 0])))
thread.start(); thread.join()
seen["thread"] = box
print(seen)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert out.returncode == 0, out.stderr
    seen = eval(out.stdout)  # our own child's repr of a dict of ints and lists
    assert {seen[k] for k in ("fork", "socket", "exec", "kill", "setsid")} == {1}  # EPERM
    assert seen["thread"] == [64.0]


def test_seccomp_program_shape():
    program = seccomp.build_filter("x86_64")
    assert len(program) % 8 == 0 and len(program) // 8 < 100
    assert "execve" in seccomp.denied_calls("x86_64") and "clone" not in seccomp.denied_calls("x86_64")
    with pytest.raises(seccomp.UnsupportedArchitecture):
        seccomp.build_filter("sparc")
    assert platform.machine() not in ("x86_64", "aarch64") or seccomp.build_filter()


def test_bench_reports_a_ratio_from_one_run():
    out = normlab("bench", "--rounds", "1", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert len(data["full_seconds"]) == len(data["baseline_seconds"]) == 1
    assert data["ratio"] > 0 and data["baseline_layers"] == ["process", "rlimits", "wall-clock"]
    assert np.isclose(data["ratio"], data["full_seconds"][0] / data["baseline_seconds"][0])


def test_the_workers_modules_are_compiled_before_a_worker_starts(tmp_path, monkeypatch):
    """A cold worker runs with -B: what the grader does not import itself (the harness, the
    cells' runner) it would compile at every start unless the grader compiled it first."""
    import importlib.util
    import shutil

    from grader.sandbox import launch

    inside = tmp_path / "inside"
    shutil.copytree(launch.INSIDE_DIR, inside, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(launch, "INSIDE_DIR", inside)
    launch._compile_inside.cache_clear()
    harness = inside / "harness.py"
    harness.write_text(harness.read_text() + "\nEDITED = 1\n")
    launch.python_argv(str(inside), sys.executable)
    sources = sorted(inside.glob("*.py"))
    assert {"harness.py", "cells.py", "calling.py", "magics.py"} <= {p.name for p in sources}
    for source in sources:
        compiled = Path(importlib.util.cache_from_source(str(source)))
        assert compiled.is_file() and compiled.stat().st_mtime_ns >= source.stat().st_mtime_ns, source.name
    launch._compile_inside.cache_clear()


def test_an_early_probe_is_waited_for_not_run_twice(monkeypatch):
    """A one-off grading starts bubblewrap's trial run in a thread while it imports and
    prepares; the plan then takes that probe's answer, not a second trial."""
    import time

    from grader.sandbox import policy

    trials: list[str] = []

    def slow_trial(path: str) -> str:
        time.sleep(0.3)
        trials.append(path)
        return ""

    monkeypatch.setattr(policy, "_try_bwrap", slow_trial)
    policy._probed.cache_clear()
    try:
        policy.probe_soon("/usr/bin/bwrap")
        found = policy.machine("/usr/bin/bwrap")  # asked while the probe still sleeps
        assert trials == ["/usr/bin/bwrap"] and found.bwrap == "/usr/bin/bwrap"
    finally:
        policy._probed.cache_clear()
