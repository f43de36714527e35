"""Real Jupyter kernels for the corpus: one virtual environment per kind of machine.

* ``grading``: what the grading environment has, numpy and matplotlib (plus ipykernel to run a
  kernel at all). scipy, pandas, tqdm and google.colab are NOT importable there. The ground
  truth (``run_in_jupyter.py``) runs every notebook in this one.
* ``student``: a student's laptop or Colab: the same plus scipy, pandas, tqdm and ipywidgets,
  and a stand-in ``google.colab`` (``drive.mount`` prints what Colab prints). Only
  ``make_notebooks.py`` uses it, to give the corpus notebooks the outputs their authors saw.

The environments live in ``.venv/corpus-kernels/<name>`` (ignored by git) and are created with
pip on first use. nbclient and jupyter_client come from the project's own ``.venv`` (the
``nbgrader`` extra installs them); the kernels never see the project or its ``.venv``.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import nbformat
from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.manager import KernelManager
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[2]
ENVS = ROOT / ".venv" / "corpus-kernels"
EXERCISES = ROOT / "exercises"
# What a released assignment ships next to lab.ipynb: the config bank, and the reference's
# answers to the public calls with the numpy-only checks the public test cells import.
SHIPPED_FILES = ("answers.json", "normlab_public.py")

PACKAGES = {
    "grading": ["numpy", "matplotlib", "ipykernel"],
    "student": ["numpy", "matplotlib", "ipykernel", "scipy", "pandas", "tqdm", "ipywidgets"],
}
NOT_IMPORTABLE_WHEN_GRADING = ("scipy", "pandas", "tqdm", "google.colab")

_FAKE_COLAB = '''"""Stand-in for Colab's google.colab.drive on a student's machine (corpus generation only)."""


def mount(mountpoint, force_remount=False, timeout_ms=120000, readonly=False):
    print(f"Mounted at {mountpoint}")


def flush_and_unmount(timeout_ms=86400000):
    print("All changes made in this colab session should now be visible in Drive.")
'''


_FAKE_COLAB_FILES = '''"""Stand-in for Colab's google.colab.files (corpus generation only)."""


def download(filename):
    print(f"Downloading {filename}")


def upload():
    return {}
'''


def python_of(name: str) -> Path:
    """The interpreter of environment ``name``, created (with pip) when missing."""
    env = ENVS / name
    python = env / "bin" / "python"
    stamp = env / ".installed"
    wanted = " ".join(PACKAGES[name])
    if not python.exists() or not stamp.exists() or stamp.read_text() != wanted:
        print(f"creating the {name} kernel environment in {env} ...", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(env)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "--quiet", *PACKAGES[name]], check=True)
        stamp.write_text(wanted)
    return python


def versions(name: str) -> dict[str, str]:
    """Installed versions of the environment's main packages (and of IPython)."""
    code = (
        "import importlib.metadata as m, json, sys\n"
        "names = sys.argv[1:]\n"
        "print(json.dumps({n: m.version(n) for n in names}))\n"
    )
    names = [*PACKAGES[name], "ipython"]
    out = subprocess.run([str(python_of(name)), "-c", code, *names], check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def _kernel_env(name: str, extra_path: Path | None) -> dict[str, str]:
    bin_dir = python_of(name).parent
    env = {
        "PATH": f"{bin_dir}{os.pathsep}/usr/local/bin{os.pathsep}/usr/bin{os.pathsep}/bin",
        "HOME": os.environ.get("HOME", "/root"),
        "LANG": "C.UTF-8",
        "PYTHONNOUSERSITE": "1",
        "PYTHONHASHSEED": "0",
        "OPENBLAS_NUM_THREADS": "1",
        "OMP_NUM_THREADS": "1",
        "VIRTUAL_ENV": str(bin_dir.parent),
    }
    if name == "grading":
        env["MPLBACKEND"] = "Agg"  # headless, as the grader will be
    if extra_path is not None:
        env["PYTHONPATH"] = str(extra_path)
    return env


@contextlib.contextmanager
def notebook_client(nb: nbformat.NotebookNode, name: str, timeout: int = 60) -> Iterator[NotebookClient]:
    """A started kernel of environment ``name`` for ``nb``, in a scratch directory holding
    what a released assignment ships next to ``lab.ipynb``: ``configs/``, ``answers.json`` and
    ``normlab_public.py``."""
    python = python_of(name)
    with tempfile.TemporaryDirectory(prefix=f"corpus-{name}-") as scratch:
        work = Path(scratch) / "work"
        (Path(scratch) / "kernels" / "corpus").mkdir(parents=True)
        spec = {
            "argv": [str(python), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
            "display_name": f"corpus ({name})",
            "language": "python",
        }
        (Path(scratch) / "kernels" / "corpus" / "kernel.json").write_text(json.dumps(spec))
        extra = None
        if name == "student":
            extra = Path(scratch) / "site"
            (extra / "google" / "colab").mkdir(parents=True)
            (extra / "google" / "colab" / "__init__.py").write_text("")
            (extra / "google" / "colab" / "drive.py").write_text(_FAKE_COLAB)
            (extra / "google" / "colab" / "files.py").write_text(_FAKE_COLAB_FILES)
        shutil.copytree(EXERCISES / "configs", work / "configs")
        for shipped in SHIPPED_FILES:
            shutil.copy2(EXERCISES / shipped, work / shipped)
        km = KernelManager(
            kernel_name="corpus", kernel_spec_manager=KernelSpecManager(kernel_dirs=[scratch + "/kernels"])
        )
        client = NotebookClient(
            nb,
            km=km,
            allow_errors=True,
            timeout=timeout,
            interrupt_on_timeout=True,
            record_timing=False,
            resources={"metadata": {"path": str(work)}},
        )
        client.reset_execution_trackers()
        with client.setup_kernel(env=_kernel_env(name, extra), cwd=str(work)):
            yield client
