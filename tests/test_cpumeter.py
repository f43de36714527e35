"""The class benchmark's CPU meter counts a sandboxed worker's CPU, which getrusage misses."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from grader.cpumeter import CpuMeter

BUSY = "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.5: pass\n"


def test_cpu_inside_a_pid_namespace_is_counted():
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        pytest.skip("bubblewrap is not installed")
    meter = CpuMeter()
    if meter.group is None:
        pytest.skip(f"no control group could be made here: {meter.method}")
    view = ["--ro-bind", "/usr", "/usr", "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64"]
    argv = [bwrap, "--unshare-pid", *view, "--proc", "/proc", "--dev", "/dev", "--", "/usr/bin/python3", "-c", BUSY]
    try:
        subprocess.run(argv, check=True, preexec_fn=meter.join, timeout=60)
        counted = meter.seconds()
    finally:
        meter.close()
    assert counted >= 0.45, counted  # getrusage reports about 0 s for the same command
