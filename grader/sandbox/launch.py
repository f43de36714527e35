"""How a worker process is started: the command, its environment and the layers around it.

Two launchers, the second wrapping the first's command:

* :func:`process_launch`: a separate process with rlimits, ``python -I`` and a clean
  environment; as root, ``Popen`` drops it to the slot's uid when the interpreter is readable.
* :func:`bwrap_launch`: the same command inside bubblewrap: new PID, network, IPC, UTS and
  mount namespaces, a read-only view of only the interpreter, the venv, the harness and the
  one submission, and a size-capped private ``/tmp``. As root, bubblewrap is started with its
  privileges (so it can bind paths only root can read) and ``setpriv`` inside the sandbox drops
  to the slot's uid with no capabilities before Python starts.

The seccomp filter is not applied by either: the harness loads it itself, after numpy and
before the student's code.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from grader.sandbox.limits import PINNED_THREADS, Limits, die_with_parent

INSIDE_DIR = Path(__file__).resolve().parent / "inside"
"""The package of code that runs inside the sandbox (``grader/sandbox/inside``)."""
PACKAGE_DIR = INSIDE_DIR.parent.parent

# Where things appear inside the bubblewrap view: the inside package as ``/normlab/inside``.
SANDBOX_INSIDE = "/normlab/inside"
SANDBOX_SUBMISSION = "/submission"
SANDBOX_TMP = "/tmp"


class Process(Protocol):
    """A running worker, however it was started."""

    def wait(self, timeout: float) -> int | None:
        """Its return code if it ends within ``timeout`` s, else None."""

    def kill(self) -> None:
        """Kill it and everything it started, and reap it; safe to call twice."""


class Spawner(Protocol):
    """What forks workers in a sandbox that is already running (``zygote.Zygote``)."""

    def spawn(self, fds: list[int]) -> Process:
        """A worker serving on ``fds``: requests, responses, stdout, stderr."""


@dataclass(frozen=True)
class Launch:
    """Everything needed to start one worker."""

    argv: list[str]
    env: dict[str, str]
    preexec: Callable[[], None]
    directory: str
    """Where the worker sees the submission."""
    uid: int | None = None
    """The uid ``Popen`` should switch to (process launch as root), else None."""
    seccomp: bytes | None = None
    """A BPF program for the harness to load before importing student code."""
    options: bytes = b""
    """Options for the launcher (bubblewrap's) handed over on a pipe, NUL-separated, instead of
    on its command line: the command line is ``/proc/1/cmdline`` inside the sandbox, and the
    options name host paths (the submission's temporary copy, the hidden directories)."""
    zygote: Spawner | None = None
    """The warm sandbox that forks this worker; None: ``argv`` is started for it."""


SANDBOX_ENV = "/normlab/env"


@dataclass(frozen=True)
class Interpreter:
    """The Python that runs the worker, and the host directories it needs to run."""

    python: Path
    """The interpreter on the host."""
    roots: tuple[Path, ...]
    """Host directories it needs besides /usr (its installation), bound at their own paths."""
    environment: Path | None = None
    """The environment student code runs in (see ``environment.py``), shown inside bubblewrap
    as ``/normlab/env``; None: the grader's own interpreter (degraded)."""

    def python_inside(self) -> str:
        """The interpreter's path as the sandboxed worker sees it."""
        return f"{SANDBOX_ENV}/bin/python" if self.environment is not None else str(self.python)


def clean_env(scratch: str) -> dict[str, str]:
    """A minimal environment: nothing of the grader's (tokens, paths) reaches the student.
    Plots go to a non-interactive backend, so ``plt.show()`` draws nothing and waits for no one."""
    variables = {"PATH": "/usr/bin:/bin", "HOME": scratch, "TMPDIR": scratch, "LANG": "C.UTF-8"}
    return variables | {"MPLBACKEND": "Agg", **PINNED_THREADS}


def python_argv(inside_dir: str, python: str, entry: str = "harness") -> list[str]:
    """The worker's command: the ``inside`` package's harness (or the warm sandbox's zygote,
    ``entry``), imported by its package name.

    -I: no user site, no PYTHON* variables, no script or current directory on sys.path, so the
    one directory the boot line adds (the one holding ``inside``) is the only one we chose;
    -B: never write .pyc files next to the student's modules (the grader compiles the
    ``inside`` package itself first, see :func:`_compile_inside`).
    """
    _compile_inside()
    parent, name = os.path.split(inside_dir.rstrip("/"))
    boot = f"import sys; sys.path.insert(0, {parent!r}); from {name}.{entry} import main; main()"
    return [python, "-I", "-B", "-X", "faulthandler", "-c", boot]


@functools.cache
def _compile_inside() -> None:
    """Compile the ``inside`` package beside its sources, once per process. The worker runs
    with -B and the grader imports only part of the package, so a cold worker compiled the
    harness, cells, calling and magics modules (1,200 lines: about 8 ms) at every start. An
    installed wheel is compiled by pip; where the folder is not writable nothing is written
    and the worker compiles as before. (``compileall`` would do the same, but importing it took
    longer than this whole check.)"""
    import importlib.util

    for source in INSIDE_DIR.glob("*.py"):
        try:
            if os.stat(importlib.util.cache_from_source(str(source))).st_mtime_ns >= source.stat().st_mtime_ns:
                continue
        except OSError:
            pass  # not compiled yet
        import py_compile

        try:
            py_compile.compile(str(source), doraise=True)
        except (py_compile.PyCompileError, OSError):
            return  # a read-only install or a broken module: the worker compiles it, or says why


def process_launch(
    submission_dir: Path,
    scratch: Path,
    limits: Limits,
    interpreter: Interpreter,
    *,
    uid: int | None = None,
    seccomp: bytes | None = None,
) -> Launch:
    """A separate process with rlimits, ``python -I`` and a clean environment."""

    grader = os.getpid()

    def preexec() -> None:
        die_with_parent(grader)
        limits.apply_rlimits(unprivileged=uid is not None)

    return Launch(
        argv=python_argv(str(INSIDE_DIR), str(interpreter.python)),
        env=clean_env(str(scratch)),
        preexec=preexec,
        directory=str(submission_dir),
        uid=uid,
        seccomp=seccomp,
    )


def _ancestors(paths: list[Path]) -> list[Path]:
    """Every directory above the bound paths, outermost first, that bubblewrap must create."""
    seen: dict[Path, None] = {}
    for path in paths:
        for parent in reversed(path.parents):
            if parent != Path("/") and not str(parent).startswith("/usr"):
                seen.setdefault(parent)
    return [p for p in seen if p not in paths]


def _outside_usr(paths: set[Path]) -> tuple[Path, ...]:
    # /usr is bound whole already; anything below it needs no bind of its own.
    return tuple(sorted(p for p in paths if not p.is_relative_to("/usr")))


def grader_interpreter() -> Interpreter:
    """The grader's own interpreter and venv: used only when the environment for student code
    is not built (degraded; every installed copy of the grader in it must then be hidden)."""
    roots = {Path(sys.base_prefix).resolve(), Path(sys.prefix).resolve()}
    executable = Path(sys.executable).resolve()
    if not any(executable.is_relative_to(r) for r in roots):
        roots.add(executable.parent)
    return Interpreter(Path(sys.executable), _outside_usr(roots))


def environment_interpreter(path: Path, base: Path) -> Interpreter:
    """The environment built for student code (``path``), whose Python comes from ``base``."""
    return Interpreter(path / "bin" / "python", _outside_usr({base.resolve()}), environment=path)


# The system part of every sandbox's view: /usr read-only, and the usual links into it.
# fmt: off
SYSTEM_VIEW = [
    "--ro-bind", "/usr", "/usr",
    "--symlink", "usr/lib", "/lib",
    "--symlink", "usr/lib64", "/lib64",
    "--symlink", "usr/bin", "/bin",
    "--symlink", "usr/sbin", "/sbin",
]
# fmt: on

SITE_DIRS = tuple(
    f"{prefix}{lib}/python3*/{kind}-packages"
    for prefix in ("", "local/")
    for lib in ("lib", "lib64")
    for kind in ("site", "dist")
)


def hidden_dirs(roots: list[Path]) -> list[Path]:
    """Grader directories visible through a bound root: the running package, and any installed
    copy (a wheel, or the course an editable install copies into site-packages). They hold the
    hidden suites and the reference, so an empty tmpfs covers each of them."""
    found = set()
    package = PACKAGE_DIR.resolve()
    for root in [*roots, Path("/usr")]:
        if package.is_relative_to(root):
            found.add(package)
        for pattern in SITE_DIRS:
            found.update(site / "grader" for site in root.glob(pattern) if (site / "grader").is_dir())
    return sorted(found)


# fmt: off
NAMESPACE_FLAGS = [
    "--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try",
    "--die-with-parent", "--new-session", "--clearenv",
]
DROP_PRIVILEGES = [
    "/usr/bin/setpriv", "--clear-groups", "--no-new-privs", "--inh-caps=-all", "--bounding-set=-all",
]
# fmt: on


def _view_flags(submission_dir: Path, limits: Limits, interpreter: Interpreter) -> list[str]:
    """The file system the worker sees: /usr, the interpreter, the environment for student
    code, the inside package, the submission (all read-only, any copy of the grader hidden)
    and a size-capped private /tmp."""
    roots = list(interpreter.roots)
    argv = [*SYSTEM_VIEW, "--perms", "1777", "--size", str(limits.tmpfs_bytes), "--tmpfs", SANDBOX_TMP]
    for parent in _ancestors(roots):
        argv += ["--perms", "0755", "--dir", str(parent)]
    for root in roots:
        argv += ["--ro-bind", str(root), str(root)]
    for hidden in hidden_dirs(roots):
        argv += ["--tmpfs", str(hidden)]
    argv += ["--perms", "0755", "--dir", str(Path(SANDBOX_INSIDE).parent)]
    argv += ["--ro-bind", str(INSIDE_DIR), SANDBOX_INSIDE, "--ro-bind", str(submission_dir), SANDBOX_SUBMISSION]
    if interpreter.environment is not None:
        argv += ["--ro-bind", str(interpreter.environment), SANDBOX_ENV]
    return [*argv, "--proc", "/proc", "--dev", "/dev", "--chdir", SANDBOX_TMP]


def bwrap_launch(
    submission_dir: Path,
    limits: Limits,
    interpreter: Interpreter,
    *,
    uid: int | None,
    seccomp: bytes | None,
    bwrap: str,
    entry: str = "harness",
) -> Launch:
    """The process launch, inside bubblewrap. ``uid`` is used only when running as root."""
    options = [*NAMESPACE_FLAGS]
    if os.geteuid() != 0:
        # Unprivileged: a user namespace gives bubblewrap its mounts; no nested ones after.
        options += ["--unshare-user", "--disable-userns"]
    for key, value in clean_env(SANDBOX_TMP).items():
        options += ["--setenv", key, value]
    options += [*_view_flags(submission_dir, limits, interpreter), "--"]
    command = [*DROP_PRIVILEGES, f"--reuid={uid}", f"--regid={uid}"] if os.geteuid() == 0 and uid is not None else []
    command += python_argv(SANDBOX_INSIDE, interpreter.python_inside(), entry)

    grader = os.getpid()

    def preexec() -> None:
        die_with_parent(grader)
        limits.apply_rlimits(unprivileged=uid is not None)

    return Launch(
        argv=[bwrap, *command],
        env={"PATH": "/usr/bin:/bin"},
        preexec=preexec,
        directory=SANDBOX_SUBMISSION,
        seccomp=seccomp,
        options=b"".join(option.encode() + b"\0" for option in options),
    )


def python_is_shared(interpreter: Interpreter) -> bool:
    """Whether other users can reach and run the interpreter (needed to drop the uid without
    bubblewrap's bind mounts)."""
    paths = [interpreter.python.resolve(), *interpreter.roots]
    if interpreter.environment is not None:
        paths.append(interpreter.environment)
    for path in paths:
        for part in [path, *path.parents]:
            if part.exists() and not os.stat(part).st_mode & 0o005:
                return False
    return True
