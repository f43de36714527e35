"""Resource limits for one worker, and the rlimits that enforce some of them."""

from __future__ import annotations

import ctypes
import os
import resource
import signal
from dataclasses import dataclass

PR_SET_PDEATHSIG = 1

PINNED_THREADS = {
    "OPENBLAS_NUM_THREADS": "1",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "NUMEXPR_NUM_THREADS": "1",
    "VECLIB_MAXIMUM_THREADS": "1",
}
"""One BLAS thread, in the worker and in the grader: results are bit-stable across machines
and a grading uses one core."""


def pin_threads() -> None:
    """Pin this process's BLAS libraries to one thread; effective only before numpy loads them,
    so ``grader/__init__.py`` calls it first thing."""
    for variable, value in PINNED_THREADS.items():
        os.environ.setdefault(variable, value)


CELL_FLOOR_SECONDS = 10.0


@dataclass(frozen=True)
class Limits:
    """Bounds on what one student's worker may use. Defaults suit this lesson's small arrays."""

    call_seconds: float = 10.0
    """Wall-clock limit per call, enforced from outside with SIGKILL."""
    cpu_seconds: int = 120
    """RLIMIT_CPU soft limit for one worker's lifetime (SIGXCPU); the hard limit is 5 s more."""
    memory_bytes: int = 2 << 30
    """RLIMIT_AS: address space. numpy needs a few hundred MiB of headroom to import."""
    file_bytes: int = 16 << 20
    """RLIMIT_FSIZE: the largest file the worker may write."""
    processes: int = 64
    """RLIMIT_NPROC, applied when the worker runs as its own unprivileged uid (threads count)."""
    result_bytes: int = 8 << 20
    """Largest response frame accepted from the worker (the lab's answers are a few kB; the
    cap bounds what one answer can cost the grader in memory)."""
    output_bytes: int = 64 << 10
    """Bytes of raw stdout/stderr kept from the worker process (the rest is counted)."""
    tmpfs_bytes: int = 32 << 20
    """Size of the worker's private scratch tmpfs (bubblewrap only)."""
    timeout_strikes: int = 2
    """After this many timeouts of one function, its remaining calls are not run."""
    submission_seconds: float = 600.0
    """Wall-clock budget for all calls of one submission; later calls are not run."""
    notebook_seconds: float = 300.0
    """Wall-clock limit for a notebook's cells, all together, when its worker first starts (not
    counted in ``submission_seconds``): each cell has its own limit, but a thousand slow cells
    must not hold a grading for hours."""

    @property
    def cell_seconds(self) -> float:
        """Wall-clock limit for one notebook cell: the call limit, but never under the old flat
        10 s. A cell runs a student's imports and demonstrations, which Jupyter never times; a
        limit calibrated on the reference's calls must not remove a slow cell's definitions."""
        return max(self.call_seconds, CELL_FLOOR_SECONDS)

    def apply_rlimits(self, unprivileged: bool) -> None:
        """Set the rlimits in the calling process (used in the child before exec)."""
        resource.setrlimit(resource.RLIMIT_CPU, (self.cpu_seconds, self.cpu_seconds + 5))
        resource.setrlimit(resource.RLIMIT_AS, (self.memory_bytes, self.memory_bytes))
        resource.setrlimit(resource.RLIMIT_FSIZE, (self.file_bytes, self.file_bytes))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if unprivileged:
            resource.setrlimit(resource.RLIMIT_NPROC, (self.processes, self.processes))


def die_with_parent(parent: int) -> None:
    """Ask the kernel to SIGKILL this process when its parent dies (Linux ``PR_SET_PDEATHSIG``),
    and exit now if the parent is already gone: a killed grading leaves nothing of ours running.

    Called first thing in every pool process and in every worker between fork and exec (the
    setting survives exec; bubblewrap passes it on with ``--die-with-parent``)."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:
        os._exit(1)
