"""The adversarial suite: every attack of the catalog in ``shared/research/security.md`` §4, and
a few more, graded in the full sandbox. One attack per file in ``tests/attacks/`` (its README
lists them with their catalog numbers and expected outcomes).

An attack is one replacement module (``<module>_*.py``), a directory spec (``*.toml``: extra
files, symlinks, a FIFO, a symlinked submission) or notebook cells (``nb_*.ipynb``, completed
with the reference modules). Every attack has wrong maths (or none), so any point it earns on
the exercise it attacks is a false pass.

All attacks are graded once by the batch grader (``grade_many``, two jobs) with a 2 s wall
clock per call; the parametrized ``test_attack`` then checks, per attack:

(a) every test of the attacked exercise scores 0, with the expected status and message;
(b) the messages render, in every language;
(c) every exercise that is neither attacked nor imports the attacked module gets full marks;
(d) the submission on disk is unchanged (and ``test_nothing_escaped_the_sandbox`` checks the
    canary directories, the course tree, the hidden suites and leftover processes);
(e) grading finished with a report: no grader fault, same tests and points as the reference;
(f) no false pass, and neither a secret of the grader's environment nor data chosen by the
    student's code (hidden inputs) in the feedback of hidden tests.

The two batch tests grade attacks interleaved with honest submissions and check that the
honest ones get exactly what they get when graded alone.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import shutil
import stat
import sys
import time
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from helpers import copy_solutions, patched

from grader import course
from grader.batch import grade_many
from grader.course import MODULE_OF, MODULES, uses
from grader.messages import LANGUAGES, render
from grader.messages import catalog as message_catalog
from grader.model import CheckResult, Graded, Outcome, Report, Status, Visibility
from grader.runner import Options, grade
from grader.sandbox.launch import INSIDE_DIR
from grader.sandbox.limits import Limits
from grader.sandbox.slots import MAX_SLOTS
from grader.settings import current as current_settings
from grader.vocabulary import builtin_name

pytestmark = pytest.mark.slow

ATTACKS_DIR = Path(__file__).resolve().parent / "attacks"
CANARIES = (Path("/tmp/normlab-canary"), Path("/var/tmp/normlab-canary"))
"""Directories every attack tries to write into; world-writable on the host, so only the
sandbox's own view of the file system keeps them empty."""
PWNED = "normlab-pwned"
"""Every file an attack tries to create outside its own scratch space has this in its name."""
LEAK = "LEAK:"
"""Attacks that try to smuggle data out through the feedback prefix it with this."""
LIMITS = Limits(call_seconds=2.0)
SETTINGS = current_settings().replace(limits=LIMITS, require_sandbox=True)
JOBS = 2
OUTPUT_SHOWN = 4000
SECRET_VARIABLE = "NORMLAB_ATTACK_SECRET"

# Which exercises import which modules (a broken module also breaks the exercises that use it).
# Exercise -> the modules whose graded functions it calls: an attack on those may cost it too.
DEPENDS = {exercise: {MODULE_OF[f] for f in uses(exercise)} for exercise in MODULES}

# Message families. A result's first message must belong to the attack's expected set; any
# further message must too, or be one of these supplements (shown on public tests only, or hints).
SUPPLEMENTS = {
    "fault.exception_text",
    "fault.traceback",
    "fault.details_withheld",
    "check.uses_failing",
    "fault.died_detail",
    "fault.bad_result_detail",
    "report.output_cut",
    "fault.timeout_where",
    "check.attempt_needed",
}
MUTATED = frozenset({"check.mutated", "check.mutated_hidden"})
"""Most attacks also write into their inputs, so that no test can pass on "x is not modified"."""
DTYPE = frozenset({"check.dtype", "check.dtype_hidden"})
WRONG = (
    frozenset({"check.values_hidden", "check.values_public", "check.assertion", "check.non_finite"}) | DTYPE | MUTATED
)
"""An array answer with wrong values (float64 whatever the input), inputs written into."""
WRONG_REPORT = frozenset(
    {"check.value_hidden", "check.value_public", "check.value_type", "check.assertion", "check.did_not_raise"}
) | {m for m in message_catalog() if m.startswith("check.note_")}
"""An inspect_config report with wrong values and wrong types (its note among them)."""
CHECKS = frozenset(m for m in message_catalog() if m.startswith("check."))
"""Any refusal of an answer by a check (for answers built to pass as many checks as possible)."""
TIMEOUT = frozenset({"fault.timeout", "fault.timeout_repeat"})


@dataclass(frozen=True)
class Attack:
    """One file of ``tests/attacks/`` and what grading it must give."""

    file: str
    catalog: tuple[int, ...]
    """Entry numbers in the catalog of security.md §4."""
    statuses: frozenset[str]
    """Allowed statuses of every test of the attacked exercise."""
    messages: frozenset[str]
    """Allowed message ids on those tests (the first message must be one of them)."""
    notes: frozenset[str] = frozenset()
    """Exactly the submission-level notes expected."""
    exc_types: frozenset[str] = frozenset()
    """For ``fault.raised``: the exception types the message may name."""
    allowed_passes: frozenset[str] = frozenset()
    """Tests of the attacked exercise that may pass (with the reason in the README)."""
    suites: tuple[str, ...] = ("public", "hidden")
    exit_code_channel: bool = False
    """The attack encodes hidden inputs in its exit status: hidden feedback must not vary."""
    own_batch: bool = False
    """Graded in a ``grade_many`` run of its own: it targets the trusted side of a batch."""

    @property
    def id(self) -> str:
        return self.file if self.suites == ("public", "hidden") else f"{self.file}@{'+'.join(self.suites)}"

    @property
    def module(self) -> str:
        """The attacked module (notebook attacks attack rmsnorm; ``all_*`` attacks every module)."""
        if self.file.startswith("nb_"):
            return "rmsnorm"
        if self.file.startswith("all_"):
            return "all"
        return next(m for m in sorted(MODULES, key=len, reverse=True) if self.file.startswith(m + "_"))

    @property
    def affected(self) -> set[str]:
        """The exercises the attack is aimed at."""
        return set(MODULES) if self.module == "all" else {self.module}


# A check that fails on a public test may say so with its public wording, and on a hidden test
# with its guarded one; a public test may also stumble over an answer of the wrong kind, and its
# own conditions (expected.require) are the catalog's public.* messages, where asserts were.
PUBLIC_CONDITIONS = {m for m in message_catalog() if m.startswith("public.")}
EQUIVALENT = {
    "check.shape": {"check.shape_fewer_axes", "check.shape_more_axes", "check.shape_other_sizes"},
    "check.sublayer_calls": {"check.sublayer_calls_hidden"},
    "check.keys": {"check.keys_hidden"},
    "check.non_finite": {"check.non_finite_hidden"},
    "check.assertion": {"check.public_error", *PUBLIC_CONDITIONS},
}


def attack(
    file: str, catalog: tuple[int, ...], statuses: set[str], messages: set[str] | frozenset[str], **kwargs: object
) -> Attack:
    frozen = {k: frozenset(v) if isinstance(v, set) else v for k, v in kwargs.items()}
    messages = set(messages).union(*(EQUIVALENT.get(m, set()) for m in messages))
    return Attack(file, catalog, frozenset(statuses), frozenset(messages), **frozen)  # type: ignore[arg-type]


FAILED, ERROR, CRASHED, TIMED_OUT, PASSED = {"failed"}, {"error"}, {"crashed"}, {"timeout"}, {"passed"}
RAISED = {"fault.raised", "fault.raised_hidden"}
MODULE_GONE, NOT_HANDED_IN = {"fault.module_missing"}, {"submission.module_missing"}
"""A module file the submission's copy left out (a symlink, a FIFO): as if not handed in."""
NOT_ARRAY = {"check.not_array", "check.assertion", *MUTATED}
BAD_KIND = {"check.bad_kind", "check.bad_kind_hidden", "check.assertion", *MUTATED}
MEMORY = {"MemoryError", "an exception"}  # numpy raises its own MemoryError subclass
HIDDEN = ("hidden",)

ATTACKS = [
    # -- result channel: stdout, result files, exit status ---------------------------------------
    attack("rmsnorm_forged_stdout_summary.py", (1,), FAILED, WRONG),
    attack("rmsnorm_forged_score_files.py", (2,), FAILED, WRONG),
    attack(
        "rmsnorm_exit_at_import.py", (3,), CRASHED, {"fault.import_crashed", "fault.died_exit", "fault.died_hidden"}
    ),
    attack("rmsnorm_sys_exit_in_function.py", (4,), ERROR, RAISED, exc_types={"SystemExit"}),
    attack("rmsnorm_raise_keyboardinterrupt.py", (4,), ERROR, RAISED, exc_types={"KeyboardInterrupt", "SystemExit"}),
    attack("compare_os_exit_in_function.py", (4,), CRASHED, {"fault.died_exit", "fault.died_hidden"}),
    # -- harness hijack ----------------------------------------------------------------------------
    attack("rmsnorm_harness_files.toml", (5,), FAILED, WRONG),
    attack("rmsnorm_harness_monkeypatch.py", (5, 8, 15), FAILED, WRONG),
    attack("rmsnorm_fd_fake_npy.py", (6,), FAILED, {"fault.bad_result"}),
    attack("rmsnorm_forged_frames.py", (6,), FAILED, WRONG | {"check.tuple_of"}),
    attack("rmsnorm_forged_frame_bad_record.py", (6,), FAILED, WRONG | {"fault.bad_record", "fault.bad_result"}),
    attack("inspect_config_forged_npy_huge_shape.py", (6,), FAILED, {"fault.bad_result"}),
    attack("inspect_config_forged_array_huge_shape.py", (6,), FAILED, {"fault.bad_result"}),
    # -- answers that are not arrays, or lie about equality ------------------------------------------
    attack("rmsnorm_return_dict.py", (7,), FAILED, NOT_ARRAY | {"check.tuple_of"}),
    attack("rmsnorm_return_dict.py", (7,), FAILED, {"check.not_array", "check.tuple_of"} | MUTATED, suites=HIDDEN),
    attack("inspect_config_return_verdict.py", (7,), FAILED, {"check.keys", "check.assertion", "check.did_not_raise"}),
    attack("layernorm_patch_numpy.py", (8,), FAILED, WRONG),
    attack(
        "rmsnorm_patch_builtins.py", (8,), CRASHED, {"fault.import_crashed", "fault.died_exit", "fault.died_hidden"}
    ),
    attack("rmsnorm_patch_pytest.py", (8,), FAILED, WRONG),
    attack("rmsnorm_always_equal.py", (9,), FAILED, NOT_ARRAY),
    attack("rmsnorm_always_equal.py", (9,), FAILED, {"check.not_array"} | MUTATED, suites=HIDDEN),
    attack("rmsnorm_ndarray_subclass.py", (10,), FAILED, NOT_ARRAY),
    attack("rmsnorm_ndarray_subclass.py", (10,), FAILED, {"check.not_array"} | MUTATED, suites=HIDDEN),
    attack("rmsnorm_scalar_broadcast.py", (11,), FAILED, NOT_ARRAY),
    attack("rmsnorm_scalar_broadcast.py", (11,), FAILED, {"check.not_array"} | MUTATED, suites=HIDDEN),
    attack("rmsnorm_ones_broadcast.py", (11,), FAILED, {"check.shape", "check.assertion"} | MUTATED),
    attack("rmsnorm_ones_broadcast.py", (11,), FAILED, {"check.shape"} | MUTATED, suites=HIDDEN),
    attack("rmsnorm_bool_array.py", (12,), FAILED, BAD_KIND),
    attack("rmsnorm_bool_array.py", (12,), FAILED, {"check.bad_kind_hidden"} | MUTATED, suites=HIDDEN),
    attack("rmsnorm_complex_array.py", (12,), FAILED, BAD_KIND),
    attack("rmsnorm_object_array.py", (7, 12), FAILED, NOT_ARRAY),
    attack("rmsnorm_object_array.py", (7, 12), FAILED, {"check.not_array"} | MUTATED, suites=HIDDEN),
    attack("rmsnorm_masked_array.py", (12,), FAILED, NOT_ARRAY),
    attack("rmsnorm_masked_array.py", (12,), FAILED, {"check.not_array"} | MUTATED, suites=HIDDEN),
    attack("rmsnorm_structured_array.py", (12,), FAILED, BAD_KIND),
    attack("rmsnorm_structured_array.py", (12,), FAILED, {"check.bad_kind_hidden"} | MUTATED, suites=HIDDEN),
    attack("rmsnorm_nan_inf.py", (13,), FAILED, {"check.non_finite", "check.assertion"} | DTYPE | MUTATED),
    attack("rmsnorm_tiny_outputs.py", (14,), FAILED, WRONG),
    attack("rmsnorm_inplace_view.py", (15,), FAILED, WRONG),
    attack(
        "compare_huge_numbers.py",
        (7, 12),
        FAILED,
        {"check.value_hidden", "check.value_public", "check.assertion", "check.about_zero"},
    ),
    # The public example prints its expected values; a copy of them is the right answer for
    # that one input, but a final grading also tries the input's twin (twins.py), which the
    # copy gets wrong. Every test must score 0.
    attack("rmsnorm_hardcoded_public.py", (16,), FAILED, WRONG | {"check.public_twin"}),
    # -- looking for the reference or the hidden tests ----------------------------------------------
    attack("rmsnorm_stack_walk.py", (17,), FAILED, WRONG),
    attack(
        "stack_gc_scan.py",
        (18,),
        FAILED,
        {"check.shape", "check.value_hidden", "check.value_public", "check.did_not_raise", "check.assertion"},
    ),
    # Its search at import has a 1 s budget inside the 2 s call limit: on a loaded machine (a
    # fresh CI one) the import can run out of time instead. Contained either way: nothing found,
    # nothing leaked, no point.
    attack("rmsnorm_disk_search.py", (19, 21), FAILED | TIMED_OUT, WRONG | {"fault.import_timeout"}),
    attack("rmsnorm_venv_course_leak.py", (19,), FAILED, WRONG),
    attack("rmsnorm_network.py", (20,), FAILED, WRONG),
    attack("rmsnorm_proc_snoop.py", (21,), ERROR, RAISED, exc_types={"an exception", "Exception"}),
    # -- time ----------------------------------------------------------------------------------------
    attack("inspect_config_cpu_hog.py", (22,), TIMED_OUT, TIMEOUT),
    attack("inspect_config_sleep_forever.py", (23,), TIMED_OUT, TIMEOUT),
    attack("inspect_config_ignore_signals.py", (24,), TIMED_OUT, TIMEOUT),
    attack("inspect_config_alarm_cancel.py", (25,), TIMED_OUT, TIMEOUT),
    attack("inspect_config_import_hang.py", (22, 23), TIMED_OUT, {"fault.import_timeout"}),
    # The worker takes a stack request's first bytes and no more: the grader's write of the rest
    # must time out like a call, and the rest of the submission be graded as usual.
    attack("stack_stop_reading.py", (5, 23), FAILED | TIMED_OUT, CHECKS | TIMEOUT),
    # -- memory, processes, output, disk -------------------------------------------------------------
    attack("rmsnorm_memory_bomb.py", (26,), ERROR, RAISED, exc_types=MEMORY),
    attack("rmsnorm_fork_bomb.py", (27,), ERROR, RAISED, exc_types={"PermissionError"}),
    attack("rmsnorm_double_fork_daemon.py", (28,), ERROR, RAISED, exc_types={"PermissionError"}),
    attack("rmsnorm_thread_writer.py", (28, 29), FAILED, WRONG),
    attack("rmsnorm_honest_lingering_thread.py", (29,), PASSED, set()),
    attack("inspect_config_print_flood.py", (30,), FAILED, WRONG_REPORT),
    attack("inspect_config_fd_flood.py", (30,), FAILED, WRONG_REPORT),
    attack("rmsnorm_disk_flood.py", (31,), FAILED, WRONG),
    attack("compare_segfault.py", (32,), CRASHED, {"fault.died_segv", "fault.died_hidden"}),
    attack("compare_deep_recursion.py", (32,), CRASHED, {"fault.died_segv", "fault.died_hidden"}),
    attack("rmsnorm_kill_parent.py", (33,), ERROR, RAISED, exc_types={"PermissionError"}),
    attack("rmsnorm_subprocess.py", (27, 34), FAILED, WRONG),
    # Whichever limit is hit first: no memory to build or encode the answer, a frame over the cap, or
    # the wall clock while 1 GB is being serialized.
    attack(
        "compare_result_too_large.py",
        (35,),
        {"failed", "error", "timeout"},
        {"fault.bad_result", "fault.raised", "fault.raised_hidden"} | TIMEOUT,
        exc_types=MEMORY,
    ),
    # -- symlinks and special files ------------------------------------------------------------------
    attack("rmsnorm_symlink_to_solutions.toml", (36,), ERROR, MODULE_GONE, notes=NOT_HANDED_IN),
    attack("rmsnorm_symlink_to_host_file.toml", (36,), ERROR, MODULE_GONE, notes=NOT_HANDED_IN),
    attack("rmsnorm_fifo_module.toml", (36,), ERROR, MODULE_GONE, notes=NOT_HANDED_IN),
    attack("rmsnorm_tmp_symlinks.py", (36,), FAILED, WRONG),
    attack(
        "all_submission_dir_symlink.toml",
        (36,),
        ERROR,
        {"fault.module_missing"},
        notes={"submission.directory_unreadable", "submission.module_missing"},
    ),
    # -- side channels -------------------------------------------------------------------------------
    attack(
        "compare_exit_code_channel.py", (37,), CRASHED, {"fault.died_exit", "fault.died_hidden"}, exit_code_channel=True
    ),
    attack(
        "compare_exit_status_realtime_signal.py",
        (3, 4, 33),
        CRASHED,
        {"fault.died_signal", "fault.died_exit", "fault.died_hidden"},
    ),
    attack("rmsnorm_type_name_channel.py", (37,), FAILED, NOT_ARRAY | {"check.tuple_of"}),
    attack("rmsnorm_type_name_channel.py", (37,), FAILED, {"check.not_array"} | MUTATED, suites=HIDDEN),
    attack("inspect_config_value_echo_channel.py", (37,), FAILED, WRONG_REPORT),
    attack("residual_forged_sublayer_record.py", (15, 17), FAILED, WRONG | {"check.sublayer_calls"}),
    # -- points without the maths: right shapes, dtypes and call pattern, inputs untouched ----------------
    attack("rmsnorm_property_only_answer.py", (16,), FAILED, CHECKS),
    attack("layernorm_property_only_answer.py", (16,), FAILED, CHECKS),
    attack("residual_property_only_answer.py", (16,), FAILED, CHECKS),
    attack("stack_property_only_answer.py", (16,), FAILED, CHECKS),
    attack("inspect_config_property_only_answer.py", (16,), FAILED, CHECKS),
    # -- notebooks -----------------------------------------------------------------------------------
    attack("nb_test_cells_replaced_by_pass.ipynb", (38,), FAILED, WRONG),
    attack("nb_test_cells_deleted.ipynb", (39,), FAILED, WRONG),
    attack("nb_points_and_flags_edited.ipynb", (40,), FAILED, WRONG),
    attack("nb_grade_ids_renamed.ipynb", (41,), FAILED, WRONG),
    # The cells run (as in Jupyter) and fail: the worker's get_ipython() has no kernel to patch.
    attack("nb_input_transformer.ipynb", (42,), FAILED, WRONG, notes={"submission.cell_failed"}),
    attack("nb_showtraceback.ipynb", (43,), FAILED, WRONG, notes={"submission.cell_failed"}),
    attack("nb_kernelspec_outputs.ipynb", (44,), FAILED, WRONG),
    attack(
        "nb_bash_magics.ipynb",
        (45,),
        FAILED,
        WRONG,
        notes={"submission.cell_magic_removed", "submission.cell_other_language"},
    ),
    attack("nb_definition_side_effects.ipynb", (44, 45), FAILED, WRONG),
    # Cells run one by one (issue 10): a cell that hangs is interrupted (one that refuses the
    # interrupt is killed and skipped), one that ends the process is skipped, and the rest
    # graded; progress events a cell forges blame no cell but its own; a forged "ready" hides
    # only its own notes (the uid in reports is the grader's, never the worker's word).
    attack(
        "nb_cell_hang_and_exit.ipynb",
        (22, 3),
        FAILED,
        WRONG,
        notes={"submission.cell_stopped", "submission.cell_crashed"},
    ),
    attack("nb_forged_cell_events.ipynb", (6,), FAILED, WRONG, notes={"submission.cell_timeout"}),
    attack("nb_forged_ready.ipynb", (6,), FAILED, WRONG),
    attack("nb_channel_frame.ipynb", (6,), FAILED, WRONG, notes={"submission.cell_channel"}),
    attack("nb_channel_garbage.ipynb", (6,), FAILED, WRONG, notes={"submission.cell_channel"}),
    # A cell whose compilation blows the worker's stack: that cell is skipped, the rest graded
    # (the trusted side never parses a cell).
    attack("nb_parser_bomb.ipynb", (45,), FAILED, WRONG, notes={"submission.cell_crashed"}, own_batch=True),
]

# Ten attacks that try hardest to disturb the machine, graded next to honest submissions.
BATCH = [
    "inspect_config_cpu_hog.py",
    "rmsnorm_memory_bomb.py",
    "rmsnorm_fork_bomb.py",
    "inspect_config_print_flood.py",
    "rmsnorm_disk_flood.py",
    "rmsnorm_thread_writer.py",
    "rmsnorm_kill_parent.py",
    "compare_segfault.py",
    "rmsnorm_fd_fake_npy.py",
    "rmsnorm_exit_at_import.py",
]


# -- building submissions ---------------------------------------------------------------------------


def build(attack: Attack, root: Path) -> Path:
    """The submission for ``attack`` under ``root``: a directory, or a notebook file."""
    source = ATTACKS_DIR / attack.file
    root.mkdir(parents=True, exist_ok=True)
    name = "-".join([Path(attack.file).stem, *(attack.suites if attack.suites != ("public", "hidden") else ())])
    if source.suffix == ".ipynb":
        nb = json.loads(source.read_text())
        for module in MODULES:
            if module != "rmsnorm":  # the attack cells come first: residual.py imports rmsnorm
                text = (course.solutions_dir() / f"{module}.py").read_text()
                nb["cells"].append(
                    {
                        "cell_type": "code",
                        "execution_count": None,
                        "id": f"ref-{module}",
                        "metadata": {},
                        "outputs": [],
                        "source": text,
                    }
                )
        path = root / f"{name}.ipynb"
        path.write_text(json.dumps(nb))
        return path
    directory = copy_solutions(root / name)
    if source.suffix == ".py":
        shutil.copy(source, directory / f"{attack.module}.py")
        return directory
    spec = tomllib.loads(source.read_text())
    if "submission_symlink" in spec:
        shutil.rmtree(directory)
        directory.symlink_to(spec["submission_symlink"].format(solutions=course.solutions_dir()))
        return directory
    for filename, text in spec.get("files", {}).items():
        (directory / filename).write_text(text)
    for filename, target in spec.get("symlinks", {}).items():
        (directory / filename).unlink(missing_ok=True)
        (directory / filename).symlink_to(target.format(solutions=course.solutions_dir()))
    for filename in spec.get("fifos", []):
        (directory / filename).unlink(missing_ok=True)
        os.mkfifo(directory / filename)
    return directory


def tree_digest(*roots: Path) -> str:
    """A digest of every file (name, mode, bytes or link target) under ``roots``, caches aside."""
    digest = hashlib.sha256()
    for root in roots:
        if not root.exists() and not root.is_symlink():
            digest.update(f"missing {root}".encode())
            continue
        entries = [root] if not root.is_dir() else sorted(root.rglob("*"))
        for path in entries:
            if "__pycache__" in path.parts or any(part.startswith(".") for part in path.relative_to(root.parent).parts):
                continue
            info = path.lstat()
            digest.update(f"{path}\0{stat.S_IFMT(info.st_mode)}\0{stat.S_IMODE(info.st_mode)}\0".encode())
            if stat.S_ISLNK(info.st_mode):
                digest.update(os.readlink(path).encode())
            elif stat.S_ISREG(info.st_mode):
                digest.update(path.read_bytes())
    return digest.hexdigest()


def course_trees() -> list[Path]:
    """What a sandbox escape would go for: the reference, the hidden suites, the stubs and
    public tests, the worker's code, and any copy of the course a package install left behind."""
    trees = [course.solutions_dir(), course.suites_dir(), course.exercises_dir(), INSIDE_DIR]
    trees += sorted(Path(sys.prefix).glob("lib/python3*/site-packages/grader"))
    return trees


def pwned_files() -> list[str]:
    """Files an attack created outside its sandbox (their names carry ``PWNED``)."""
    places = [
        *CANARIES,
        Path("/tmp"),
        Path("/var/tmp"),
        Path("/dev/shm"),
        Path("/root"),
        Path.home(),
        Path.cwd(),
        Path("/work"),
        course.course_root(),
        *course_trees(),
    ]
    found = set()
    for place in places:
        if place.is_dir():
            found |= {str(p) for p in place.glob(f"*{PWNED}*")}
            if place in (Path.cwd(), course.course_root()):
                found |= {str(p) for p in place.glob("results.json")}
    for canary in CANARIES:
        if canary.is_dir():
            found |= {str(p) for p in canary.iterdir()}
    return sorted(found)


# -- processes that outlive their grading -----------------------------------------------------------


def _process(pid: str) -> tuple[list[str], int, str, int] | None:
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")
        lines = Path(f"/proc/{pid}/status").read_text().splitlines()
        fields = dict(line.split(":", 1) for line in lines if ":" in line)
    except (OSError, ValueError):
        return None
    return argv, int(fields["Uid"].split()[1]), fields["State"].strip()[:1], int(fields["PPid"])


def leftover_sandboxes() -> list[str]:
    """Live sandboxes whose grading is over (their submission copy is gone), and processes of
    a worker uid that are not inside any sandbox."""
    table = {pid: info for pid in os.listdir("/proc") if pid.isdigit() and (info := _process(pid))}
    found = []
    for pid, (argv, uid, state, ppid) in table.items():
        if state == "Z":
            continue
        if argv and argv[0].endswith("bwrap") and "/submission" in argv:
            source = argv[argv.index("/submission") - 1]
            if not Path(source).exists():
                found.append(f"pid {pid}: a sandbox for {source}, whose grading is over")
        elif current_settings().uid_base <= uid < current_settings().uid_base + MAX_SLOTS:
            parent, inside = str(ppid), False
            for _ in range(8):
                info = table.get(parent)
                if info is None:
                    break
                if info[0] and info[0][0].endswith("bwrap"):
                    inside = True
                    break
                parent = str(info[3])
            if not inside:
                found.append(f"pid {pid} (uid {uid}) runs outside any sandbox: {' '.join(argv)[:200]}")
    return found


def settled_leftovers(seconds: float = 5.0) -> list[str]:
    """Leftovers that are still there after ``seconds`` (a sandbox being torn down is not one)."""
    deadline = time.monotonic() + seconds
    found = leftover_sandboxes()
    while found and time.monotonic() < deadline:
        time.sleep(0.25)
        found = leftover_sandboxes()
    return found


# -- grading everything once -------------------------------------------------------------------------


@dataclass
class Outcomes:
    reports: dict[str, Report | str] = field(default_factory=dict)
    """Attack id -> its report (or why it could not be graded)."""
    references: dict[tuple[str, ...], Report] = field(default_factory=dict)
    """Suites -> the reference graded with them, in the same run."""
    submissions: dict[str, Path] = field(default_factory=dict)
    digests_before: dict[str, str] = field(default_factory=dict)
    course_before: str = ""
    course_after: str = ""
    pwned: list[str] = field(default_factory=list)
    leftovers: list[str] = field(default_factory=list)
    seconds: float = 0.0


@pytest.fixture(scope="session")
def secret() -> str:
    return "normlab-secret-" + secrets.token_hex(8)


@pytest.fixture(scope="session")
def canaries() -> Iterator[tuple[Path, ...]]:
    """The world-writable canary directories, fresh and empty, for the whole session."""
    for canary in CANARIES:
        shutil.rmtree(canary, ignore_errors=True)
        canary.mkdir(parents=True)
        canary.chmod(0o777)
    yield CANARIES
    for canary in CANARIES:
        shutil.rmtree(canary, ignore_errors=True)


@pytest.fixture(scope="session")
def outcomes(tmp_path_factory: pytest.TempPathFactory, secret: str, canaries: tuple[Path, ...]) -> Outcomes:
    root = tmp_path_factory.mktemp("attacks")
    result = Outcomes()
    batches: dict[tuple[tuple[str, ...], str], dict[Path, str]] = {}
    for item in ATTACKS:
        path = build(item, root)
        result.submissions[item.id] = path
        result.digests_before[item.id] = tree_digest(path)
        batches.setdefault((item.suites, item.id if item.own_batch else ""), {})[path] = item.id
    for (_, alone), batch in batches.items():
        if not alone:
            batch[course.solutions_dir()] = "reference"
    result.course_before = tree_digest(*course_trees())
    saved = os.environ.get(SECRET_VARIABLE)
    os.environ[SECRET_VARIABLE] = secret  # inherited by the grading processes, never by a worker
    started = time.monotonic()
    try:
        for (suites, _), batch in batches.items():
            options = Options(suites=suites, settings=SETTINGS)
            try:
                for path, graded in grade_many(list(batch), options, jobs=JOBS):
                    outcome = as_report(graded)
                    if batch[path] == "reference":
                        assert isinstance(outcome, Report), outcome
                        result.references[suites] = outcome
                    else:
                        result.reports[batch[path]] = outcome
            except Exception as exc:  # the batch grader itself died: say so for what it had not graded
                for name in batch.values():
                    result.reports.setdefault(name, f"grade_many raised {type(exc).__name__}: {exc}")
    finally:
        if saved is None:
            os.environ.pop(SECRET_VARIABLE, None)
        else:
            os.environ[SECRET_VARIABLE] = saved
    result.seconds = time.monotonic() - started
    result.leftovers = settled_leftovers()
    time.sleep(0.5)  # a writer that escaped would keep writing
    result.pwned = pwned_files()
    result.course_after = tree_digest(*course_trees())
    return result


# -- per attack ---------------------------------------------------------------------------------------


def _gist(failure: str) -> str:
    """The test, the exception and where it was raised, from a grader fault's long report."""
    lines = failure.splitlines()
    keep = [line for line in lines[1:] if line.startswith("E ") or re.match(r"^\S+\.py:\d+: ", line)]
    return "\n".join([lines[0][:300], *keep[-12:]]) if lines else failure


def _feedback(result: CheckResult) -> str:
    return "\n".join(render(m, lang) for m in result.messages for lang in LANGUAGES)


def _judge(item: Attack, result: CheckResult) -> str:
    """What is wrong with one result of the attacked exercise ("" when it is as expected)."""
    ids = [m.id for m in result.messages]
    wrong = []
    if item.statuses == {"passed"}:
        return "" if result.status is Status.PASSED else f"{result.status.value} {ids}"
    if result.score != 0:
        wrong.append(f"FALSE PASS ({result.score:g} points)")
    if result.status.value not in item.statuses:
        wrong.append(f"status {result.status.value}")
    if result.status is not Status.PASSED and (not ids or ids[0] not in item.messages):
        wrong.append(f"messages {ids}")
    extra = [i for i in ids[1:] if i not in item.messages | SUPPLEMENTS and not i.startswith("hint.")]
    if extra:
        wrong.append(f"unexpected messages {extra}")
    raised = [m.params.get("exc_type") for m in result.messages if m.id == "fault.raised"]
    # Types outside the few that feedback names are shown as "an exception" (see vocabulary.py).
    shown = {builtin_name(exc) for exc in item.exc_types}
    if item.exc_types and any(exc not in shown for exc in raised):
        wrong.append(f"raised {raised}")
    # (b) a clear message: one at least, rendering in every language.
    if result.status is not Status.PASSED and not _feedback(result).strip():
        wrong.append("no message")
    return ", ".join(wrong)


@pytest.mark.parametrize("item", ATTACKS, ids=lambda a: a.id)
def test_attack(item: Attack, outcomes: Outcomes, secret: str) -> None:
    report = outcomes.reports[item.id]
    reference = outcomes.references[item.suites]
    # (e) the grader kept going: a report, with the same tests and points as the reference.
    assert isinstance(report, Report), f"no report for {item.id}: {_gist(report)}"
    assert [r.name for r in report.results] == [r.name for r in reference.results]
    assert report.max_score == reference.max_score

    problems = []
    if {n.id for n in report.notes} != item.notes:
        problems.append(f"notes {sorted(n.id for n in report.notes)}, expected {sorted(item.notes)}")
    unaffected = {e for e in MODULES if e not in item.affected and not DEPENDS.get(e, set()) & item.affected}
    for result in report.results:
        if result.exercise in item.affected and result.name not in item.allowed_passes:
            # (a) and (f): zero points, with the expected status and message.
            if wrong := _judge(item, result):
                problems.append(f"{result.name}: {wrong}")
        elif result.exercise in unaffected or item.statuses == {"passed"}:
            # (c) the rest of the submission is graded as if nothing happened.
            if result.status is not Status.PASSED or result.score != result.max_score:
                ids = [m.id for m in result.messages]
                problems.append(f"{result.name} (not attacked): {result.status.value} {ids}")
        # (f) nothing of the grader's environment, and no smuggled data on hidden tests.
        text = _feedback(result) + result.student_output
        if secret in text:
            problems.append(f"{result.name}: the grader's secret environment variable is in the feedback")
        if result.visibility is Visibility.HIDDEN and LEAK in text:
            leaked = text[text.index(LEAK) :][:80]
            problems.append(f"{result.name}: hidden feedback carries data the student's code chose: {leaked!r}...")
        if len(result.student_output) > OUTPUT_SHOWN:
            problems.append(f"{result.name}: {len(result.student_output)} characters of output kept")
    if item.exit_code_channel:
        hidden = [r for r in report.results if r.visibility is Visibility.HIDDEN]
        died = [m for r in hidden for m in r.messages if m.id.startswith("fault.died")]
        if not died:
            problems.append("the attack did not end the worker as intended")
        if any(m.params.keys() - {"function"} for m in died):
            problems.append("hidden feedback echoes the exit status, which can encode hidden inputs")
    # (d) the submission itself was only read.
    if tree_digest(outcomes.submissions[item.id]) != outcomes.digests_before[item.id]:
        problems.append("the submission on disk changed during grading")
    shown = problems[:15] + ([f"... and {len(problems) - 15} more"] if len(problems) > 15 else [])
    assert not problems, f"{item.id} (catalog {item.catalog}):\n  " + "\n  ".join(shown)


def test_every_attack_file_is_in_the_table_and_documented() -> None:
    files = {p.name for p in ATTACKS_DIR.iterdir() if p.suffix in (".py", ".toml", ".ipynb")}
    assert files == {a.file for a in ATTACKS}
    assert len(files) >= 40
    readme = (ATTACKS_DIR / "README.md").read_text()
    assert [f for f in sorted(files) if f"`{f}`" not in readme] == []
    assert set(range(1, 46)) <= {n for a in ATTACKS for n in a.catalog}, "every catalog entry has an attack"


def test_nothing_escaped_the_sandbox(outcomes: Outcomes) -> None:
    # (d) nothing written outside: canaries empty, no planted files, course tree unchanged.
    assert outcomes.pwned == []
    assert outcomes.course_after == outcomes.course_before, "the course tree or the hidden suites changed"
    # Nothing outlives its grading: no sandbox left running, no worker-uid process outside one.
    assert outcomes.leftovers == []


def test_no_attack_stalls_the_grader(outcomes: Outcomes) -> None:
    # Timeouts, restarts and floods cost each attack seconds, not minutes (about 2 minutes in
    # all on two cores); a stalled drain or a missed wall clock would show up here.
    assert outcomes.seconds < 400, f"grading the attacks took {outcomes.seconds:.0f} s"


# -- attacks next to honest submissions -----------------------------------------------------------------


def _results(report: Report) -> list[tuple[str, Status, float]]:
    return [(r.name, r.status, r.score) for r in report.results]


@pytest.fixture(scope="session")
def honest(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, list[tuple[str, Status, float]]]]:
    """Three honest submissions and their per-test results when each is graded alone."""
    partly = patched(
        tmp_path_factory.mktemp("honest") / "partly",
        "rmsnorm",
        "rstd = 1.0 / np.sqrt(ms + eps)",
        "rstd = 1.0 / (np.sqrt(ms) + eps)",
    )
    submissions = {
        "reference": course.solutions_dir(),
        "eps outside the square root": partly,
        "untouched stubs": course.exercises_dir(),
    }
    options = Options(settings=SETTINGS)
    alone = {name: (path, _results(grade(path, options))) for name, path in submissions.items()}
    reference, partly_results, stubs = (alone[name][1] for name in submissions)
    assert reference and all(status is Status.PASSED for _, status, _ in reference)
    assert {Status.PASSED, Status.FAILED} <= {status for _, status, _ in partly_results}
    assert all(score == 0 for _, _, score in stubs)
    return alone


def as_report(outcome: Outcome) -> Report | str:
    """The report of a graded submission, else why it was not graded."""
    return outcome.report if isinstance(outcome, Graded) else outcome.reason


def _check_batch(
    attacks: list[Path], honest: dict[str, tuple[Path, list[tuple[str, Status, float]]]]
) -> dict[Path, Report | str]:
    """Grade ``attacks`` interleaved with the honest submissions; each honest one must get
    exactly what it gets alone. Returns what the batch gave the attacks."""
    mixed = list(attacks)
    for i, (path, _) in enumerate(honest.values()):  # spread out, each after some attacks
        mixed.insert(-(-(i + 1) * len(attacks) // len(honest)) + i, path)
    graded: dict[Path, Report | str] = {}
    try:
        for path, outcome in grade_many(mixed, Options(settings=SETTINGS), jobs=JOBS):
            graded[path] = as_report(outcome)
    except Exception as exc:
        pytest.fail(f"the batch stopped after {len(graded)} of {len(mixed)} submissions: {type(exc).__name__}: {exc}")
    for name, (path, alone) in honest.items():
        report = graded[path]
        assert isinstance(report, Report), f"{name}: {report}"
        assert _results(report) == alone, name
    assert settled_leftovers() == []
    assert pwned_files() == []
    return {path: graded[path] for path in attacks}


@pytest.mark.usefixtures("canaries")
def test_batch_mixes_attacks_and_honest_submissions(tmp_path: Path, honest: dict) -> None:
    attacks = {a.file: a for a in ATTACKS if a.suites == ("public", "hidden")}
    submissions = [build(attacks[f], tmp_path / "batch") for f in BATCH]
    graded = _check_batch(submissions, honest)
    assert [p.name for p, outcome in graded.items() if not isinstance(outcome, Report)] == []


@pytest.mark.usefixtures("canaries")
def test_a_notebook_the_grader_cannot_parse_does_not_stop_the_batch(tmp_path: Path, honest: dict) -> None:
    # The notebook is parsed in the trusted process (to find the definitions). Whatever that
    # parse does, it concerns this one student: the other submissions are graded all the same.
    bomb = next(a for a in ATTACKS if a.file == "nb_parser_bomb.ipynb")
    graded = _check_batch([build(bomb, tmp_path / "batch")], honest)
    assert all(isinstance(outcome, Report) for outcome in graded.values()), graded
