"""How a worker process is started: the command, its environment and the layers around it."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from grader.sandbox.limits import Limits

HARNESS_DIR = Path(__file__).resolve().parent.parent / "worker"

# One BLAS thread: results are bit-stable across machines and a worker uses one core.
PINNED_THREADS = {
    "OPENBLAS_NUM_THREADS": "1",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "NUMEXPR_NUM_THREADS": "1",
    "VECLIB_MAXIMUM_THREADS": "1",
}


@dataclass(frozen=True)
class Launch:
    """Everything needed to start one worker."""

    argv: list[str]
    env: dict[str, str]
    preexec: Callable[[], None]
    layers: tuple[str, ...]
    """Isolation layers this launch provides."""
    missing: tuple[str, ...] = ()
    """Layers that were asked for but are not available here."""
    uid: int | None = None
    directory: str = ""
    """Where the worker sees the submission."""
    seccomp: bytes | None = None
    """A BPF program for the harness to load before importing student code."""
    cleanup: list[Path] = field(default_factory=list)


def clean_env(scratch: str) -> dict[str, str]:
    """A minimal environment: nothing of the grader's (tokens, paths) leaks to the student."""
    return {"PATH": "/usr/bin:/bin", "HOME": scratch, "TMPDIR": scratch, "LANG": "C.UTF-8", **PINNED_THREADS}


def process_launch(submission_dir: Path, scratch: Path, limits: Limits) -> Launch:
    """The baseline: a separate process with rlimits, ``python -I`` and a clean environment."""

    def preexec() -> None:
        limits.apply_rlimits(unprivileged=False)

    argv = [sys.executable, "-I", "-X", "faulthandler", str(HARNESS_DIR / "harness.py")]
    return Launch(
        argv=argv,
        env=clean_env(str(scratch)),
        preexec=preexec,
        layers=("process", "rlimits", "wall-clock"),
        directory=str(submission_dir),
    )


def python_is_shared() -> bool:
    """Whether the interpreter's files are readable by other users (needed to drop the uid)."""
    for path in (Path(sys.executable).resolve(), Path(sys.base_prefix).resolve()):
        for part in [path, *path.parents]:
            if part.exists() and not os.stat(part).st_mode & 0o005:
                return False
    return True
