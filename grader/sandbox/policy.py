"""Choose the isolation for a grading from what this machine offers, and say what is missing.

Layers, weakest first. The first three are always on; the others depend on the machine:

=================== ==========================================================================
``process``         student code runs in a separate process; only data crosses, size-capped
``rlimits``         CPU time, address space, file size, no core files (and processes per uid)
``wall-clock``      every call has a time limit enforced from outside with SIGKILL
``namespaces``      bubblewrap: new PID/network/IPC/UTS/mount namespaces, a read-only view of
                    only the interpreter and the submission, a size-capped private /tmp
``unprivileged-uid`` the worker runs as its slot's own uid with no capabilities
``seccomp``         no fork, exec, socket, kill, ptrace, mount or namespace changes
``own-environment`` student code runs with an interpreter environment of its own (numpy and
                    the course's packages), in which no copy of the grader exists
=================== ==========================================================================

Where a layer is missing, grading still works with the others and every report says so;
``settings.require_sandbox`` (``--require-sandbox``, ``NORMLAB_REQUIRE_SANDBOX=1`` or the course
file) turns a missing layer into a grader fault.
"""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from grader.faults import GraderFault
from grader.sandbox import environment, seccomp, slots, zygote
from grader.sandbox.launch import (
    SANDBOX_SUBMISSION,
    SYSTEM_VIEW,
    Interpreter,
    Launch,
    bwrap_launch,
    environment_interpreter,
    grader_interpreter,
    process_launch,
    python_is_shared,
)
from grader.settings import Settings

BASE_LAYERS = ("process", "rlimits", "wall-clock")
OPTIONAL_LAYERS = ("namespaces", "unprivileged-uid", "seccomp", "own-environment")
ALL_LAYERS = BASE_LAYERS + OPTIONAL_LAYERS


@dataclass(frozen=True)
class Machine:
    """What this machine offers, probed once per process."""

    bwrap: str | None
    """Path of a bubblewrap that works here, or None."""
    bwrap_problem: str
    seccomp_filter: bytes | None
    seccomp_problem: str
    root: bool
    setpriv: bool


def _try_bwrap(path: str) -> str:
    """Empty string if bubblewrap can create a sandbox here, else what went wrong."""
    argv = [
        path,
        "--unshare-pid",
        "--unshare-net",
        "--unshare-ipc",
        "--die-with-parent",
        *SYSTEM_VIEW,
        "--proc",
        "/proc",
        "--dev",
        "/dev",
    ]
    if os.geteuid() != 0:
        argv += ["--unshare-user"]
    try:
        out = subprocess.run([*argv, "--", "/usr/bin/true"], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{path} could not run: {exc}"
    return "" if out.returncode == 0 else f"{path} failed: {out.stderr.strip()[:300]}"


_PROBING = threading.Lock()
"""Held while the machine is probed: a probe started early (:func:`probe_soon`) is waited for,
not run a second time."""


def machine(bwrap: str | None = None) -> Machine:
    """What this machine offers; ``bwrap`` names the bubblewrap binary (default: on PATH)."""
    with _PROBING:
        return _probed(bwrap)


def probe_soon(bwrap: str | None = None) -> None:
    """Probe the machine in a thread now, for a grading that will ask :func:`machine` shortly:
    bubblewrap's trial run (a sandbox around ``true``, 25-40 ms) then overlaps the imports and
    the submission's preparation instead of delaying a one-off grading's worker."""

    def probe() -> None:
        try:
            machine(bwrap)
        except Exception:  # asked again when needed, and a failure reported there
            pass

    threading.Thread(target=probe, name="normlab-probe", daemon=True).start()


@cache
def _probed(bwrap: str | None) -> Machine:
    path = bwrap or shutil.which("bwrap")
    if path is None or not Path(path).exists():
        bwrap, bwrap_problem = None, NOT_INSTALLED
    else:
        problem = _try_bwrap(path)
        bwrap, bwrap_problem = (path, "") if not problem else (None, problem)
    try:
        program: bytes | None = seccomp.build_filter()
        seccomp_problem = ""
        if "Seccomp:" not in Path("/proc/self/status").read_text():
            program, seccomp_problem = None, "this kernel does not report seccomp support"
    except seccomp.UnsupportedArchitecture:
        program, seccomp_problem = None, f"no syscall table for the {platform.machine()} architecture"
    return Machine(
        bwrap=bwrap,
        bwrap_problem=bwrap_problem,
        seccomp_filter=program,
        seccomp_problem=seccomp_problem,
        root=os.geteuid() == 0,
        setpriv=Path("/usr/bin/setpriv").exists(),
    )


@cache
def interpreter(packages: tuple[str, ...]) -> Interpreter:
    """The interpreter student code runs with: the environment built for ``packages``, or
    the grader's own when it is not built (a missing layer)."""
    found = environment.find(packages)
    if found is None:
        return grader_interpreter()
    return environment_interpreter(found.path, found.base)


@dataclass
class Plan:
    """How the workers of one grading are started, and which layers that gives."""

    launcher: Callable[[], Launch]
    layers: tuple[str, ...]
    missing: dict[str, str]
    """Missing layer -> why, and how to get it."""
    scratch: Path | None
    """The worker's home and temp directory on the host (process launch only: inside
    bubblewrap the worker has a private tmpfs instead)."""
    uid: int
    """The uid the worker runs as: its slot's own, or the grader's when that layer is missing
    (what reports show: known here, never taken from the worker's word)."""

    def cleanup(self) -> None:
        if self.scratch is not None:
            shutil.rmtree(self.scratch, ignore_errors=True)


def _warm_launcher(
    prepared_dir: Path,
    settings: Settings,
    python: Interpreter,
    bwrap: str,
    uid: int,
    program: bytes | None,
) -> Callable[[], Launch]:
    """Workers forked by the zygote of the slot whose uid is ``uid``; it sees the submission in the slot's box."""
    warm = zygote.warm_slot(uid, settings.slot_dir or slots.default_directory())
    warm.fill(prepared_dir)
    start = bwrap_launch(warm.box, settings.limits, python, uid=uid, seccomp=None, bwrap=bwrap, entry="zygote")
    cold = bwrap_launch(warm.box, settings.limits, python, uid=uid, seccomp=program, bwrap=bwrap)

    def launcher() -> Launch:
        try:
            spawner = warm.zygote_for(start, settings.limits)
        except zygote.Unavailable:  # the uid is busy with processes not ours: no warm start
            return cold
        return Launch(argv=[], env={}, preexec=_nothing, directory=SANDBOX_SUBMISSION, seccomp=program, zygote=spawner)

    return launcher


def _nothing() -> None:
    """No preparation: a forked worker is started by its zygote, not by us."""


NOT_INSTALLED = "bubblewrap (bwrap) is not installed"


def _bwrap_remedy(m: Machine) -> str:
    if m.bwrap_problem == NOT_INSTALLED:
        return "install it: apt-get install bubblewrap"
    # Installed, but this machine (a container, most often) does not let it make namespaces.
    return (
        "bubblewrap is installed but cannot isolate here: run the grader where unprivileged user "
        "namespaces are allowed (a container needs them allowed by its runtime), or accept fewer "
        "layers with require_sandbox = false in the course file"
    )


def missing_layers(m: Machine, python: Interpreter, *, baseline: bool = False) -> dict[str, str]:
    """The optional layers this machine cannot provide, each with the reason and the remedy."""
    if baseline:
        return {layer: "disabled for a process-only baseline" for layer in OPTIONAL_LAYERS}
    missing = {}
    if m.bwrap is None:
        missing["namespaces"] = f"{m.bwrap_problem}; {_bwrap_remedy(m)}"
    if not m.root:
        missing["unprivileged-uid"] = "the grader is not running as root, so it cannot give workers their own uid"
    elif m.bwrap is not None and not m.setpriv:
        missing["unprivileged-uid"] = "/usr/bin/setpriv (util-linux) is missing"
    elif m.bwrap is None and not python_is_shared(python):
        usable = "install bubblewrap" if m.bwrap_problem == NOT_INSTALLED else "let bubblewrap run (see namespaces)"
        missing["unprivileged-uid"] = (
            f"the interpreter is not readable by other users; {usable}, "
            "or use a venv built from a world-readable Python"
        )
    if m.seccomp_filter is None:
        missing["seccomp"] = m.seccomp_problem
    if python.environment is None:
        missing["own-environment"] = (
            "the environment student code runs in is not built, so it runs with the grader's own "
            "interpreter; build it: normlab environment"
        )
    return missing


def plan(prepared_dir: Path, settings: Settings, *, slot: int, baseline: bool = False, warm: bool = False) -> Plan:
    """The strongest isolation available here for the submission copied to ``prepared_dir``,
    for worker slot ``slot`` (its uid is ``settings.uid_base + slot``).

    ``baseline=True`` gives the process-only launch (for measuring the sandbox's overhead);
    ``warm=True`` forks the workers from the slot's zygote, which this process keeps while it
    holds the slot (``slots.lease``), when the machine allows it.
    """
    m = machine(settings.bwrap)
    python = grader_interpreter() if baseline else interpreter(settings.packages)
    missing = missing_layers(m, python, baseline=baseline)
    if settings.require_sandbox and missing:
        raise GraderFault(
            "isolation layers required but missing: " + "; ".join(f"{k}: {v}" for k, v in missing.items())
        )
    uid = settings.uid_base + slot if "unprivileged-uid" not in missing else None
    program = m.seccomp_filter if "seccomp" not in missing else None
    layers = BASE_LAYERS + tuple(layer for layer in OPTIONAL_LAYERS if layer not in missing)
    if "namespaces" not in missing and m.bwrap is not None:
        if warm and uid is not None:  # the slot's emptiness can be checked: see zygote.py
            launcher = _warm_launcher(prepared_dir, settings, python, m.bwrap, uid, program)
            return Plan(launcher=launcher, layers=layers, missing=missing, scratch=None, uid=uid)
        launch = bwrap_launch(prepared_dir, settings.limits, python, uid=uid, seccomp=program, bwrap=m.bwrap)
        return Plan(launcher=lambda: launch, layers=layers, missing=missing, scratch=None, uid=uid or os.geteuid())
    scratch = Path(tempfile.mkdtemp(prefix="normlab-scratch-"))
    if uid is not None:
        os.chown(scratch, uid, uid)
    launch = process_launch(prepared_dir, scratch, settings.limits, python, uid=uid, seccomp=program)
    return Plan(launcher=lambda: launch, layers=layers, missing=missing, scratch=scratch, uid=uid or os.geteuid())
