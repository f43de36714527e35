"""The class benchmark: ``nbgrader autograde`` and ``normlab autograde`` side by side.

One run generates an nbgrader course and a class of lab notebooks (solved, partly solved,
untouched, slow, crashing and adversarial ones), copies it once per grader, grades each copy
with the real command in a process of its own, and reports throughput, per-submission latency,
CPU per submission and peak memory, with the ratios; then one ``normlab grade`` of one
submission. It checks that honest submissions get identical grades on both paths (read back
with ``nbgrader export``). A measurement, not a test: it is run by hand (``normlab bench
--class-size N``) and its figures go into the instructor docs.
"""

from __future__ import annotations

import csv
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from grader.cpumeter import CpuMeter
from grader.faults import GraderFault

ASSIGNMENT = "normlab"
HONEST = ("solved", "partly", "untouched", "slow")
"""Kinds whose grade must be the same on both paths (the others differ on purpose: nbgrader
runs the tests in the student's kernel, where they can be defeated)."""
KINDS = (*HONEST, "crashing", "adversarial")
MIX = {"solved": 40, "partly": 30, "untouched": 18, "slow": 4, "crashing": 4, "adversarial": 4}
"""Percent of the class of each kind."""
# 2 ms a call: gradient_path on the lesson's setup calls rmsnorm about 600 times, so a whole
# notebook is seconds slower than the reference while each call stays well inside the
# calibrated limit (3 s). At 5 ms that call took 2.9-3.2 s: graded on a loaded machine, an
# honest slow student then lost its points on one path and not the other.
SLOW_RMSNORM = (
    "def rmsnorm(x, gamma, eps=1e-6):\n"
    "    import time\n"
    "    time.sleep(0.002)  # a slow but correct implementation\n"
    "    xf = x.astype(np.float32) if x.dtype == np.float16 else x\n"
    "    ms = np.mean(xf * xf, axis=-1, keepdims=True)  # (..., 1)\n"
    "    return (xf / np.sqrt(ms + eps) * gamma).astype(x.dtype)  # (..., C)\n"
)
EPS_OUTSIDE = ("np.sqrt(ms + eps)", "(np.sqrt(ms) + eps)")
"""A common mistake: eps outside the square root."""
CRASH = "import os\nos._exit(1)\n"
TAMPER = (
    "get_ipython().input_transformers_cleanup.append(\n"
    "    lambda lines: ['pass\\n'] if any('_run_public' in l or 'run_hidden' in l for l in lines) else lines)\n"
)
"""Blanks the test cells in the student's own kernel: full marks under nbgrader."""


def _source(cell: dict[str, Any]) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else str(src)


def _meta(cell: dict[str, Any]) -> dict[str, Any]:
    meta = cell.get("metadata", {}).get("nbgrader", {})
    return meta if isinstance(meta, dict) else {}


def solution_code(source_nb: dict[str, Any]) -> dict[str, str]:
    """The reference code of each solution cell of the course's source notebook, by grade id."""
    from grader.stubs import BEGIN, END

    return {
        str(_meta(cell)["grade_id"]): "\n".join(
            line for line in _source(cell).split("\n") if BEGIN not in line and END not in line
        )
        for cell in source_nb["cells"]
        if _meta(cell).get("solution") and cell["cell_type"] == "code"
    }


def filled(released: dict[str, Any], code: dict[str, str], keep: frozenset[str] = frozenset()) -> dict[str, Any]:
    """The released notebook with solution cells answered by ``code`` (by grade id), except
    those in ``keep`` (left as released), and every written answer given."""
    nb: dict[str, Any] = json.loads(json.dumps(released))
    for cell in nb["cells"]:
        meta = _meta(cell)
        if not meta.get("solution") or meta.get("grade_id") in keep:
            continue
        if cell["cell_type"] == "code":
            cell["source"] = code[meta["grade_id"]]
        else:
            cell["source"] = ANSWER
    return nb


ANSWER = "Residual connections add each sublayer's update to the stream; norms rescale what it reads."


def _code_cell(text: str) -> dict[str, Any]:
    return {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None, "source": text}


def student_notebook(kind: str, released: dict[str, Any], code: dict[str, str], rng: random.Random) -> dict[str, Any]:
    """One student's notebook of ``kind``."""
    solutions = sorted(gid for gid in code if not gid.startswith(("q", "config_note")))
    if kind == "solved":
        return filled(released, code)
    if kind == "untouched":
        return json.loads(json.dumps(released))  # type: ignore[no-any-return]
    if kind == "partly":
        mistaken = code | {"rmsnorm-rmsnorm": code["rmsnorm-rmsnorm"].replace(*EPS_OUTSIDE)}
        return filled(released, mistaken, frozenset(rng.sample(solutions, rng.randint(2, len(solutions) // 2))))
    if kind == "slow":
        return filled(released, code | {"rmsnorm-rmsnorm": SLOW_RMSNORM})
    nb = filled(released, code)
    nb["cells"].insert(3, _code_cell(CRASH if kind == "crashing" else TAMPER))
    return nb


def class_kinds(size: int) -> list[str]:
    """The kind of each of ``size`` students, mixed as ``MIX`` says, interleaved."""
    counts = {kind: max(1 if size >= len(KINDS) else 0, size * share // 100) for kind, share in MIX.items()}
    counts["solved"] += size - sum(counts.values())
    kinds = [kind for kind, n in counts.items() for _ in range(n)]
    random.Random(0).shuffle(kinds)
    return kinds[:size]


def _bin() -> Path:
    return Path(sys.executable).parent


def _run(argv: list[str], cwd: Path, check: bool = True) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": f"{_bin()}{os.pathsep}{os.environ.get('PATH', '')}"}
    out = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    if check and out.returncode != 0:
        raise GraderFault(f"{' '.join(argv)} exited {out.returncode}: {out.stderr[-2000:]}")
    return out


def make_class(base: Path, size: int) -> dict[str, str]:
    """Release the course into ``base`` and hand in ``size`` notebooks; student -> kind."""
    from grader.integrations.nbgrader.release import write_course

    write_course(base, ASSIGNMENT)
    _run([str(_bin() / "nbgrader"), "generate_assignment", ASSIGNMENT], cwd=base)
    released = json.loads((base / "release" / ASSIGNMENT / "lab.ipynb").read_text())
    code = solution_code(json.loads((base / "source" / ASSIGNMENT / "lab.ipynb").read_text()))
    students = {}
    for number, kind in enumerate(class_kinds(size)):
        student = f"{kind}-{number:04d}"
        folder = base / "submitted" / student / ASSIGNMENT
        folder.mkdir(parents=True)
        nb = student_notebook(kind, released, code, random.Random(number))
        (folder / "lab.ipynb").write_text(json.dumps(nb))
        (folder / "timestamp.txt").write_text("2026-11-20 10:00:00.000000 UTC")
        students[student] = kind
    return students


@dataclass
class Run:
    """One grader's pass over the class."""

    name: str
    seconds: float
    cpu_seconds: float
    """User + system CPU of the command and every process it started (see ``cpu_method``)."""
    peak_bytes: int
    """The largest total resident memory of the command's process tree, sampled every 50 ms."""
    latencies: list[float] = field(default_factory=list)
    grades: dict[str, float] = field(default_factory=dict)
    cpu_method: str = ""
    """How ``cpu_seconds`` was counted (a control group, or getrusage, which misses workers)."""

    def summary(self, size: int) -> dict[str, float]:
        lat = sorted(self.latencies) or [float("nan")]
        return {
            "seconds": self.seconds,
            "per_submission": self.seconds / size,
            "throughput": size / self.seconds,
            "latency_median": statistics.median(lat),
            "latency_p95": lat[min(len(lat) - 1, round(0.95 * (len(lat) - 1)))],
            "cpu_per_submission": self.cpu_seconds / size,
            "peak_mib": self.peak_bytes / 2**20,
        }


def _tree_rss(root: int) -> int:
    """Total resident memory of ``root`` and its descendants, from /proc."""
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    page = os.sysconf("SC_PAGE_SIZE")
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(entry.name))
        rss[int(entry.name)] = int(fields[21]) * page
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        total += rss.get(pid, 0)
        todo += children.get(pid, [])
    return total


def timed(
    name: str,
    argv: list[str],
    cwd: Path,
    on_line: Callable[[str, float], None] | None = None,
    extra_env: dict[str, str] | None = None,
) -> Run:
    """Run ``argv`` to its end; its wall time, CPU (its own and every process it starts, see
    ``cpumeter.py``) and peak memory."""
    env = {**os.environ, "PATH": f"{_bin()}{os.pathsep}{os.environ.get('PATH', '')}", **(extra_env or {})}
    meter = CpuMeter()
    started = time.perf_counter()
    proc = subprocess.Popen(
        argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, preexec_fn=meter.join
    )
    peak = [0]
    done = threading.Event()

    def sample() -> None:
        while not done.wait(0.05):
            peak[0] = max(peak[0], _tree_rss(proc.pid))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    assert proc.stdout is not None
    for line in proc.stdout:
        if on_line is not None:
            on_line(line, time.perf_counter())
    proc.wait()
    seconds = time.perf_counter() - started
    done.set()
    sampler.join()
    cpu, method = meter.seconds(), meter.method
    meter.close()
    return Run(name, seconds, cpu, peak[0], cpu_method=method)


def exported(course: Path) -> dict[str, float]:
    """Each student's total score, as ``nbgrader export`` reports it."""
    _run([str(_bin() / "nbgrader"), "export"], cwd=course)
    with open(course / "grades.csv", newline="") as handle:
        return {row["student_id"]: float(row["raw_score"]) for row in csv.DictReader(handle)}


STARTED = re.compile(r"Creating/updating student with ID '([^']+)'")


def run_nbgrader(course: Path) -> Run:
    """``nbgrader autograde``: one student after the other, so a student's latency is the time
    from the log line that starts them to the one that starts the next (or the end)."""
    starts: list[float] = []

    def on_line(line: str, when: float) -> None:
        if STARTED.search(line):
            starts.append(when)

    run = timed("nbgrader autograde", [str(_bin() / "nbgrader"), "autograde", ASSIGNMENT, "--create"], course, on_line)
    ends = [*starts[1:], starts[0] + run.seconds if starts else 0.0]
    run.latencies = [end - start for start, end in zip(starts, ends, strict=True)]
    run.grades = exported(course)
    return run


def run_normlab(course: Path, jobs: int, warm: bool = True) -> Run:
    """``normlab autograde``; a student's latency is their grading's own time (in its report).
    ``warm=False`` starts a fresh sandbox per worker instead of forking it from the slot's zygote."""
    argv = [sys.executable, "-m", "grader", "autograde", ASSIGNMENT, "--course-dir", str(course)]
    name = f"normlab autograde --jobs {jobs}" + ("" if warm else ", cold")
    extra = {"NORMLAB_WARM_SANDBOX": "1" if warm else "0"}
    run = timed(name, [*argv, "--no-progress", "--jobs", str(jobs)], course, extra_env=extra)
    reports = (course / "normlab" / ASSIGNMENT / "reports").glob("*.json")
    run.latencies = [float(json.loads(p.read_text())["report"]["seconds"]) for p in reports]
    run.grades = exported(course)
    return run


@dataclass
class ClassBench:
    """Everything one benchmark run measured."""

    size: int
    kinds: dict[str, str]
    runs: list[Run]
    grade_seconds: list[float]
    """Wall time of ``normlab grade`` (the whole command) on one solved notebook, per round."""
    honest_mismatches: list[str]
    """Honest students whose grade differs between nbgrader and normlab (must be empty)."""
    skipped: list[str] = field(default_factory=list)

    def table(self) -> dict[str, dict[str, float]]:
        return {run.name: run.summary(self.size) for run in self.runs}

    def ratios(self) -> dict[str, float]:
        """Each normlab run's throughput over nbgrader's."""
        native = self.runs[0].seconds
        return {run.name: native / run.seconds for run in self.runs[1:]}


def _grade_once(notebook: Path, rounds: int) -> list[float]:
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        _run([sys.executable, "-m", "grader", "grade", str(notebook)], cwd=notebook.parent)
        times.append(time.perf_counter() - started)
    return times


def measure_class(size: int, jobs: tuple[int, ...], workdir: Path, rounds: int = 3) -> ClassBench:
    """Generate a class of ``size`` in ``workdir``, grade one copy with nbgrader and one per
    ``jobs`` value with normlab, and compare."""
    base = workdir / "class"
    if base.exists():
        shutil.rmtree(base)
    kinds = make_class(base, size)
    # The last run is the widest one again with a cold sandbox per worker: what the zygote saves.
    names = ("nbgrader", *(f"normlab-jobs{j}" for j in jobs), f"normlab-jobs{max(jobs)}-cold")
    copies = [workdir / name for name in names]
    for copy in copies:
        if copy.exists():
            shutil.rmtree(copy)
        shutil.copytree(base, copy, symlinks=True)
    runs = [run_nbgrader(copies[0])]
    runs += [run_normlab(copy, j) for copy, j in zip(copies[1:-1], jobs, strict=True)]
    runs.append(run_normlab(copies[-1], max(jobs), warm=False))
    honest = [s for s, kind in kinds.items() if kind in HONEST]
    mismatches = [
        f"{student} ({kinds[student]}): {runs[0].grades.get(student)} vs {run.name} {run.grades.get(student)}"
        for run in runs[1:]
        for student in honest
        if run.grades.get(student) != runs[0].grades.get(student)
    ]
    solved = next(s for s, kind in kinds.items() if kind == "solved")
    one = _grade_once(base / "submitted" / solved / ASSIGNMENT / "lab.ipynb", rounds)
    skipped = [] if shutil.which("otter") else ["otter run: not installed"]
    return ClassBench(size, kinds, runs, one, mismatches, skipped)


def report_text(bench: ClassBench) -> str:
    """The benchmark's figures as a table for a terminal or the docs."""
    counts = {kind: list(bench.kinds.values()).count(kind) for kind in KINDS}
    lines = [
        f"class of {bench.size}: " + ", ".join(f"{n} {kind}" for kind, n in counts.items() if n),
        f"{'':<28}{'wall s':>8}{'s/sub':>8}{'sub/s':>8}{'lat med':>9}{'lat p95':>9}{'CPU/sub':>9}{'peak MiB':>10}",
    ]
    for name, row in bench.table().items():
        lines.append(
            f"{name:<28}{row['seconds']:>8.1f}{row['per_submission']:>8.3f}{row['throughput']:>8.2f}"
            f"{row['latency_median']:>9.3f}{row['latency_p95']:>9.3f}{row['cpu_per_submission']:>9.3f}"
            f"{row['peak_mib']:>10.0f}"
        )
    for name, ratio in bench.ratios().items():
        lines.append(f"throughput ratio, {name} / nbgrader autograde: {ratio:.1f}x")
    cpu = bench.runs[0].cpu_seconds / max(min(r.cpu_seconds for r in bench.runs[1:]), 1e-9)
    cold = bench.runs[-1]
    warm = next(run for run in bench.runs if run.name == cold.name.removesuffix(", cold"))
    lines.append(f"warm sandbox (zygote) against a cold one per worker: {cold.seconds / warm.seconds:.2f}x throughput")
    lines.append(f"CPU ratio, nbgrader / best normlab: {cpu:.1f}x")
    lines.append(f"CPU counted with {bench.runs[0].cpu_method}")
    grade = statistics.median(bench.grade_seconds)
    lines.append(f"normlab grade, one solved notebook (whole command): median {grade:.2f} s wall")
    honest = sum(kind in HONEST for kind in bench.kinds.values())
    if bench.honest_mismatches:
        lines += ["HONEST GRADES DIFFER:", *(f"  {m}" for m in bench.honest_mismatches)]
    else:
        lines.append(f"identical grades on all {honest} honest submissions (nbgrader export on both paths)")
    lines += [f"skipped: {s}" for s in bench.skipped]
    return "\n".join(lines) + "\n"
