"""The interpreter environment student code runs in: a virtual environment of its own, with
numpy and the packages the course declares, and nothing of the grader's (decision 6).

The grader's own environment holds the grader, the hidden suites and, in an editable install,
the course; a sandbox that could import from it would need every copy found and hidden. This
environment never had them. It is built once per set of packages (``normlab environment``,
which ``make`` runs), under the user's cache directory, from the package registry; numpy and
matplotlib are pinned to the grader's own versions, so the student's code and the reference
compute with the same numpy. Inside bubblewrap it appears as ``/normlab/env``.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from grader.faults import GraderFault

DEFAULT_PACKAGES = ("numpy", "matplotlib")
"""What student code may import by default: numpy, and matplotlib for the lab's demonstration."""
MARKER = "normlab-environment.json"
PINNED = ("numpy", "matplotlib")
"""Packages pinned to the version the grader itself runs with, when the grader has them."""


@dataclass(frozen=True)
class Environment:
    path: Path
    requirements: tuple[str, ...]

    @property
    def python(self) -> Path:
        return self.path / "bin" / "python"

    @property
    def base(self) -> Path:
        """The installation the environment's interpreter comes from (it must be visible too)."""
        for line in (self.path / "pyvenv.cfg").read_text().splitlines():
            key, _, value = line.partition("=")
            if key.strip() == "home":
                return Path(value.strip()).resolve().parent
        raise GraderFault(f"{self.path} is not a virtual environment (no home in pyvenv.cfg)")


def requirements(packages: tuple[str, ...]) -> tuple[str, ...]:
    """Requirement strings for ``packages``: numpy and matplotlib at the grader's own versions."""
    out = []
    for package in packages:
        name = package.split("[")[0].split("=")[0].split("<")[0].split(">")[0].strip()
        try:
            pinned = name in PINNED and package == name
            out.append(f"{name}=={metadata.version(name)}" if pinned else package)
        except metadata.PackageNotFoundError:
            out.append(package)
    return tuple(sorted(out))


def cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "normlab"


def location(reqs: tuple[str, ...], root: Path | None = None) -> Path:
    """Where the environment for ``reqs`` lives: one per Python version and set of packages."""
    key = hashlib.sha256("\n".join([platform.python_version(), *reqs]).encode()).hexdigest()[:16]
    return (root or cache_root()) / f"sandbox-env-{key}"


def find(packages: tuple[str, ...], root: Path | None = None) -> Environment | None:
    """The built environment for ``packages``, if there is one."""
    reqs = requirements(packages)
    path = location(reqs, root)
    return Environment(path, reqs) if (path / MARKER).is_file() else None


def build(packages: tuple[str, ...], root: Path | None = None) -> Environment:
    """Build (or find) the environment for ``packages``: a venv of this interpreter's Python,
    the packages installed from the registry, made in a temporary directory and moved into
    place whole, so a half-built environment is never used."""
    reqs = requirements(packages)
    found = find(packages, root)
    if found is not None:
        return found
    target = location(reqs, root)
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".building-", dir=target.parent))
    try:
        subprocess.run([sys.executable, "-m", "venv", str(staging)], check=True, capture_output=True)
        pip = [str(staging / "bin" / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
        out = subprocess.run([*pip, *reqs], capture_output=True, text=True)
        if out.returncode != 0:
            raise GraderFault(f"installing {', '.join(reqs)} for student code failed:\n{out.stderr[-2000:]}")
        (staging / MARKER).write_text(json.dumps({"requirements": list(reqs)}, indent=2) + "\n")
        staging.chmod(0o755)
        _place(staging, target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return Environment(target, reqs)


def _place(staging: Path, target: Path) -> None:
    """Move the built environment into place, unless another build of the same packages (a
    second course's ``make``, a test run beside an instructor's) finished first: its copy is
    as good as ours, and is kept."""
    try:
        os.replace(staging, target)
    except OSError:
        if not (target / MARKER).is_file():
            raise GraderFault(
                f"{target} is in the way of the environment for student code, and is not one "
                f"(no {MARKER}): remove it and run `normlab environment` again"
            ) from None
