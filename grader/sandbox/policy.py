"""Choose the isolation for a grading from what this machine offers, and say what is missing."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from grader.faults import GraderFault
from grader.sandbox.launch import Launch, process_launch
from grader.sandbox.limits import Limits
from grader.submission import Prepared

ALL_LAYERS = ("process", "rlimits", "wall-clock")


@dataclass
class Plan:
    """How the workers of one grading are started."""

    launcher: Callable[[], Launch]
    layers: tuple[str, ...]
    missing: tuple[str, ...]
    scratch: Path

    def cleanup(self) -> None:
        shutil.rmtree(self.scratch, ignore_errors=True)


def plan(prepared: Prepared, limits: Limits, *, slot: int = 0, require: bool = False) -> Plan:
    """The strongest isolation available here for ``prepared``."""
    scratch = Path(tempfile.mkdtemp(prefix="normlab-scratch-"))
    launch = process_launch(prepared.directory, scratch, limits)
    missing: tuple[str, ...] = ()
    if require and missing:
        shutil.rmtree(scratch, ignore_errors=True)
        raise GraderFault(f"isolation layers required but missing: {', '.join(missing)}")
    return Plan(launcher=lambda: launch, layers=launch.layers, missing=missing, scratch=scratch)
