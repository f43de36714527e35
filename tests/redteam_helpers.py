"""Shared helpers for the red-team tests (``tests/test_redteam_*.py``).

The grader's internals are being moved into new packages, so these tests drive it only through
its command line (``python -m grader``) and its top-level API (``from grader import grade,
Options, Limits``). The few internal names they need are reached through :func:`internal`,
the ONE place to repoint when a module moves.

Every grading runs in a subprocess of its own, so that the test process never holds student
data and so that the trusted process's own peak memory (``VmHWM``) can be measured.
"""

from __future__ import annotations

import ast
import importlib
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
TESTS = ROOT / "tests"
SOLUTIONS = ROOT / "solutions"
EXERCISES_DIR = ROOT / "exercises"
ATTACKS = TESTS / "attacks_trusted"
BIN = Path(sys.executable).parent
NORMLAB = [sys.executable, "-m", "grader"]

# Worker uids: everything graded here uses its own uid range, so that hostile submissions in
# these tests never share a uid (and its RLIMIT_NPROC) with gradings run by other people's test
# suites on the same host, and vice versa. (The grader reads NORMLAB_UID_BASE.)
UID_BASE = int(os.environ.get("NORMLAB_REDTEAM_UID_BASE", "63000"))

# The only names these tests take from inside the grader package. When a module moves, change
# this table, nothing else.
_INTERNAL = {
    "EXERCISES": ("grader.course", "EXERCISES"),
    "LANGUAGES": ("grader.messages", "LANGUAGES"),
    "render": ("grader.messages", "render"),
    "run_hidden": ("grader.integrations.nbgrader.native", "run_hidden"),
    # Gradescope's run_autograder: `python -m grader.gradescope ROOT` (a command line, not a name).
    "gradescope_entry": ("-m", "grader.integrations.gradescope"),
}


def internal(name: str) -> Any:
    """An internal name of the grader (see ``_INTERNAL``): the one place to repoint."""
    module, attribute = _INTERNAL[name]
    if module == "-m":
        return [sys.executable, "-m", attribute]
    return getattr(importlib.import_module(module), attribute)


def exercises() -> dict[str, tuple[str, ...]]:
    """Exercise (module) -> the graded functions it defines."""
    return {k: tuple(v) for k, v in internal("EXERCISES").items()}


def env(**extra: str) -> dict[str, str]:
    """The environment for a grading subprocess: our venv first on PATH, our uid range."""
    base = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    base.setdefault("NORMLAB_UID_BASE", str(UID_BASE))
    base.pop("NORMLAB_LANG", None)
    return {**base, **extra}


# -- running the CLI, with the trusted process's peak memory ------------------------------------


@dataclass
class Run:
    args: list[str]
    returncode: int
    stdout: str
    stderr: str
    peak_rss_mb: float
    """Peak resident memory (VmHWM) of the process running ``python -m grader`` itself: the
    trusted side only, never the sandboxed worker (whose memory ``wait4``/``time -v`` would
    fold in)."""
    seconds: float

    def json(self) -> Any:
        return json.loads(self.stdout)

    def describe(self) -> str:
        return (
            f"$ {' '.join(self.args)}\nexit {self.returncode}, {self.peak_rss_mb:.0f} MB peak, {self.seconds:.1f} s\n"
            f"--- stdout (tail)\n{self.stdout[-1500:]}\n--- stderr (tail)\n{self.stderr[-2500:]}"
        )


def _vm_hwm_kb(pid: int) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except (OSError, ValueError):
        return None
    return None


def run(
    args: list[str],
    *,
    cwd: Path = ROOT,
    extra_env: dict[str, str] | None = None,
    timeout: float = 600,
    text_mode: bool = True,
    preexec: Any = None,
) -> Run:
    """Run a command; poll the peak RSS of the process itself until it exits."""
    started = time.monotonic()
    argv = [a if isinstance(a, bytes) else str(a) for a in args]
    proc = subprocess.Popen(
        argv,
        cwd=cwd,
        env=env(**(extra_env or {})),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=preexec,
        start_new_session=True,
    )
    peak = [0]
    done = threading.Event()

    def poll() -> None:
        while not done.is_set():
            value = _vm_hwm_kb(proc.pid)
            if value is not None:
                peak[0] = max(peak[0], value)
            done.wait(0.02)

    poller = threading.Thread(target=poll, daemon=True)
    poller.start()
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, 9)
        out, err = proc.communicate()
    finally:
        done.set()
        poller.join()
    decode = (lambda b: b.decode("utf-8", "backslashreplace")) if text_mode else (lambda b: b)
    return Run(
        [os.fsdecode(a) for a in argv],
        proc.returncode,
        decode(out),
        decode(err),
        peak[0] / 1024,
        time.monotonic() - started,
    )


def normlab(*args: Any, **kwargs: Any) -> Run:
    """``python -m grader ARGS`` (the ``normlab`` command) from the checkout."""
    return run([*NORMLAB, *map(str, args)], **kwargs)


# -- grading through the top-level API, in a subprocess ------------------------------------------

_GRADE_SCRIPT = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
from redteam_helpers import _grade_main
_grade_main(sys.argv[2:])
"""


def _grade_main(argv: list[str]) -> None:
    """Subprocess side of :func:`grade_api`: grade, then print our own JSON of the report."""
    from grader import Limits, Options, grade
    from grader.settings import current

    path, suites, call_seconds, slot = argv[0], tuple(argv[1].split("+")), float(argv[2]), int(argv[3])
    select = argv[4] or None
    settings = current().replace(limits=Limits(call_seconds=call_seconds))
    # A negative slot: claim a free one from the host's allocator, as every grading does.
    options = Options(suites=suites, settings=settings, slot=slot if slot >= 0 else None, select=select)
    report = grade(path, options)
    try:
        languages, render = internal("LANGUAGES"), internal("render")
    except Exception:  # the renderer moved: compare message ids and parameters only
        languages, render = (), None

    def message(m: Any) -> dict[str, Any]:
        rendered = {lang: render(m, lang) for lang in languages} if render else {}
        return {"id": m.id, "params": {k: repr(v) for k, v in m.params.items()}, "rendered": rendered}

    data = {
        "score": report.score,
        "max_score": report.max_score,
        "worker_uid": report.worker_uid,
        "notes": [message(n) for n in report.notes],
        "results": [
            {
                "name": r.name,
                "exercise": r.exercise,
                "description": r.description,
                "visibility": r.visibility.value,
                "status": r.status.value,
                "score": r.score,
                "max_score": r.max_score,
                "messages": [message(m) for m in r.messages],
                "student_output": r.student_output,
            }
            for r in report.results
        ],
    }
    sys.stdout.write(json.dumps(data, ensure_ascii=True))


def grade_api(
    path: Path, suites: str = "public+hidden", call_seconds: float = 5.0, slot: int = -1, select: str = ""
) -> dict[str, Any]:
    """Grade with ``grader.grade`` in a subprocess; our own JSON of the report, or an
    ``{"error": ...}`` when no report came back. ``select`` is a pytest ``-k`` expression."""
    out = run(
        [sys.executable, "-c", _GRADE_SCRIPT, str(TESTS), str(path), suites, str(call_seconds), str(slot), select],
        timeout=900,
    )
    if out.returncode != 0:
        return {"error": out.describe()}
    return json.loads(out.stdout)


def grade_many_api(
    paths: list[Path], suites: str = "public+hidden", jobs: int = 2, selects: list[str] | None = None, **kwargs: Any
) -> list[dict]:
    """:func:`grade_api` on several submissions, ``jobs`` at a time, each in its own slot."""
    selects = selects or [""] * len(paths)
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = [
            pool.submit(grade_api, p, suites, select=k, **kwargs)
            for i, (p, k) in enumerate(zip(paths, selects, strict=True))
        ]
        return [f.result() for f in futures]


_SPY_SCRIPT = r"""
import contextlib, io, json, sys
sys.path.insert(0, sys.argv[1])
import numpy as np
from redteam_helpers import exercises, internal

events = []


class Tap(io.TextIOBase):
    def write(self, s):
        events.append(("out", s))
        return len(s)


def describe(v):
    if isinstance(v, np.ndarray):
        return {"shape": list(v.shape)}
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    return {"value": v}


def spy(fn):
    def call(*args, **kwargs):
        events.append(("call", [describe(a) for a in [*args, *kwargs.values()]]))
        raise NotImplementedError

    return call


namespace = {fn: spy(fn) for fns in exercises().values() for fn in fns}
found = []
for exercise in exercises():
    events.clear()
    with contextlib.redirect_stdout(Tap()):
        internal("run_hidden")(exercise, namespace)
    calls = []
    for kind, value in events:
        if kind == "call":
            calls += [c for c in value if c]
        elif value.startswith(("PASS", "FAIL")):
            found.append([exercise, value[6:].rsplit("  (", 1)[0], calls])
            calls = []
sys.__stdout__.write(json.dumps(found))
"""


def hidden_inputs(tmp: Path) -> dict[tuple[str, str], list[dict[str, Any]]]:
    """(exercise, hidden test description) -> the shapes and numbers it passes to the student.

    An oracle for the tests only: the in-kernel runner (nbgrader's native path) runs the hidden
    suites against spy functions in a subprocess, which record their arguments. ``tmp`` becomes
    its TMPDIR (that runner leaves temporary files behind)."""
    out = run([sys.executable, "-c", _SPY_SCRIPT, str(TESTS)], extra_env={"TMPDIR": str(tmp)}, timeout=300)
    assert out.returncode == 0, out.describe()
    found: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for exercise, description, calls in json.loads(out.stdout):
        found.setdefault((exercise, description), []).extend(calls)
    return found


def hidden_results(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [r for r in report["results"] if r["visibility"] == "hidden"]


def feedback_of(result: dict[str, Any]) -> str:
    """Everything a student reads for one test: every message in every language, the output."""
    parts = []
    for m in result["messages"]:
        parts.append(f"{m['id']} {json.dumps(m['params'], sort_keys=True)}")
        parts += [f"[{lang}] {text}" for lang, text in sorted(m["rendered"].items())]
    return "\n".join([*parts, result.get("student_output", "")])


# -- building submissions ---------------------------------------------------------------------------


def copy_reference(target: Path) -> Path:
    """A directory submission identical to the reference: its module files and its answers to
    the verification questions."""
    target.mkdir(parents=True, exist_ok=True)
    for module in exercises():
        shutil.copy(SOLUTIONS / f"{module}.py", target / f"{module}.py")
    shutil.copy(SOLUTIONS / "verification.toml", target / "verification.toml")
    return target


def with_module(target: Path, module: str, text: str) -> Path:
    """The reference with one module replaced."""
    copy_reference(target)
    (target / f"{module}.py").write_text(text)
    return target


def attack_text(name: str, **substitutions: Any) -> str:
    """The text of ``tests/attacks_trusted/NAME`` with ``SALT = 0``-style constants replaced."""
    text = (ATTACKS / name).read_text()
    for key, value in substitutions.items():
        line = f"{key} = "
        start = text.index(line)
        end = text.index("\n", start)
        text = text[:start] + f"{key} = {value!r}" + text[end:]
    return text


def reference_signatures() -> dict[str, list[tuple[str, bool]]]:
    """Graded function -> its parameters as (name, required), read from ``solutions/`` as text."""
    found: dict[str, list[tuple[str, bool]]] = {}
    for module, functions in exercises().items():
        tree = ast.parse((SOLUTIONS / f"{module}.py").read_text())
        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and node.name in functions:
                args = node.args.args
                n_required = len(args) - len(node.args.defaults)
                found[node.name] = [(a.arg, i < n_required) for i, a in enumerate(args)]
    return found


def reference_source_without_course_imports() -> str:
    """Every reference module's text, concatenated in lesson order, minus the imports of one
    course module from another (so it can run in one namespace next to other definitions)."""
    modules = set(exercises())
    parts = []
    for module in exercises():
        lines = (SOLUTIONS / f"{module}.py").read_text().splitlines()
        kept = [line for line in lines if not (line.startswith("from ") and line.split()[1] in modules)]
        parts.append("\n".join(kept))
    return "\n\n".join(parts)


# -- nbgrader courses ------------------------------------------------------------------------------

ASSIGNMENT = "normlab"


def make_course(base: Path) -> Path:
    """A released nbgrader course (``normlab release`` + ``nbgrader generate_assignment``)."""
    course = base / "course"
    out = normlab("release", "--course-dir", course, "--assignment", ASSIGNMENT)
    assert out.returncode == 0, out.describe()
    gen = run([BIN / "nbgrader", "generate_assignment", ASSIGNMENT], cwd=course)
    assert gen.returncode == 0, gen.describe()
    return course


def load_nb(path: Path) -> dict:
    return json.loads(path.read_text())


def filled(course: Path, overrides: dict[str, str] | None = None, answer: str | None = None) -> dict:
    """The released notebook with every solution cell answered as the reference does (the
    questions' auto-graded parts too), and each written answer ``answer`` or a default."""
    from notebooks import filled as filled_as_reference

    released = load_nb(course / "release" / ASSIGNMENT / "lab.ipynb")
    source = load_nb(course / "source" / ASSIGNMENT / "lab.ipynb")
    nb = filled_as_reference(released, source, overrides, answers=False)
    for cell in nb["cells"]:
        meta = cell["metadata"].get("nbgrader", {})
        if meta.get("solution") and cell["cell_type"] != "code":
            cell["source"] = answer or "Residual connections add each sublayer's update to the stream; my own words."
    return nb


def submit(
    course: Path, student: str | bytes, nb: dict | str | bytes | None, stamp: str = "2026-11-20 10:00:00.000000 UTC"
) -> Path:
    """Put a submission at ``submitted/<student>/normlab/`` (a notebook dict, raw text or bytes)."""
    student_dir = os.path.join(os.fsencode(course / "submitted"), os.fsencode(student))
    folder = Path(os.fsdecode(student_dir)) / ASSIGNMENT
    folder.mkdir(parents=True, exist_ok=True)
    if nb is not None:
        data = (
            nb
            if isinstance(nb, bytes)
            else (nb if isinstance(nb, str) else json.dumps(nb)).encode("utf-8", "surrogatepass")
        )
        (folder / "lab.ipynb").write_bytes(data)
    if stamp is not None:
        (folder / "timestamp.txt").write_text(stamp)
    return folder


def autograde(course: Path, *extra: str) -> Run:
    return normlab("autograde", ASSIGNMENT, "--course-dir", course, "--no-progress", "--jobs", "2", *extra, timeout=900)


def gradebook_scores(course: Path) -> dict[str, float]:
    """Auto-graded points per student, read back with ``nbgrader export``."""
    import csv

    out = run([BIN / "nbgrader", "export"], cwd=course)
    assert out.returncode == 0, out.describe()
    with open(course / "grades.csv", newline="") as handle:
        return {row["student_id"]: float(row["raw_score"]) for row in csv.DictReader(handle)}
