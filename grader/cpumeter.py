"""CPU time of a command and of every process it starts, sandboxed workers included.

``getrusage(RUSAGE_CHILDREN)`` counts only processes that were waited for, all the way up.
A process in a bubblewrap PID namespace is reaped by the namespace's init, whose own times never
reach the grader (run ``/usr/bin/time bwrap --unshare-pid ... python -c 'busy loop'``: 0.00 s
user), so it misses every sandboxed worker's CPU. A control group counts every process in it,
however it ends: the benchmark puts each measured command in a fresh one when it can (as root,
with cgroup v1's ``cpuacct`` or cgroup v2), and otherwise says that its figure leaves the
workers out.
"""

from __future__ import annotations

import os
import resource
import uuid
from pathlib import Path

CGROUP_V1 = Path("/sys/fs/cgroup/cpuacct")
CGROUP_V2 = (Path("/sys/fs/cgroup/unified"), Path("/sys/fs/cgroup"))


def _usage_v2(group: Path) -> float:
    for line in (group / "cpu.stat").read_text().splitlines():
        name, _, value = line.partition(" ")
        if name == "usage_usec":
            return int(value) / 1e6
    raise OSError("cpu.stat has no usage_usec")


class CpuMeter:
    """Measures one command: create it, start the command with :meth:`join` as its
    ``preexec_fn``, read :meth:`seconds` after the command has ended, then :meth:`close`."""

    def __init__(self) -> None:
        self.group: Path | None = None
        self.version = 0
        name = f"normlab-bench-{uuid.uuid4().hex[:12]}"
        candidates = [(CGROUP_V1, 1), *((root, 2) for root in CGROUP_V2)]
        for root, version in candidates:
            try:
                (root / name).mkdir()
            except OSError:
                continue
            self.group, self.version = root / name, version
            try:
                self._usage()
            except OSError:  # made, but it does not count CPU: try the next kind
                self.close()
                continue
            break
        self._rusage = self._children()

    @property
    def method(self) -> str:
        """How CPU is counted, for the report."""
        if self.group is None:
            return "getrusage (sandboxed workers are not counted: no control group could be made)"
        return f"a control group (cgroup v{self.version}): every process, sandboxed workers included"

    @staticmethod
    def _children() -> float:
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        return usage.ru_utime + usage.ru_stime

    def _usage(self) -> float:
        assert self.group is not None
        if self.version == 1:
            return int((self.group / "cpuacct.usage").read_text()) / 1e9
        return _usage_v2(self.group)

    def join(self) -> None:
        """Move the calling process into the group (run in the child before it executes)."""
        if self.group is not None:
            with open(self.group / "cgroup.procs", "w") as handle:
                handle.write(str(os.getpid()))

    def seconds(self) -> float:
        if self.group is not None:
            return self._usage()
        return self._children() - self._rusage

    def close(self) -> None:
        """Remove the group (it can be removed once no process is left in it)."""
        if self.group is not None:
            try:
                self.group.rmdir()
            except OSError:
                pass
            self.group = None
