"""The grader's own code stays ruff- and mypy-clean (STYLE.md: library hygiene)."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _run(*args):
    return subprocess.run([sys.executable, "-m", *args], capture_output=True, text=True, cwd=ROOT, timeout=600)


def test_ruff_clean():
    out = _run("ruff", "check", "grader", "tests")
    assert out.returncode == 0, out.stdout + out.stderr


def test_mypy_clean():
    out = _run("mypy")
    assert out.returncode == 0, out.stdout + out.stderr
