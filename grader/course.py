"""The course: which module holds which graded functions, and where the course files live.

This is the contract between the stubs, the suites and the worker: a directory submission
provides ``<module>.py`` files, a single file or notebook provides the functions by name.
A test checks it against the public functions of ``solutions/``. The files are found in a
source checkout (or editable install), or in the copy an instructor's wheel carries.
"""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

# In the lab's order (the lab page's steps, the modules' "Lab step N"): the released notebook
# numbers its exercises so, and the reports list them so.
EXERCISES: dict[str, tuple[str, ...]] = {
    "rmsnorm": ("rmsnorm", "rmsnorm_backward"),
    "residual": ("block", "postnorm_block"),
    "layernorm": ("layernorm", "layernorm_backward"),
    "compare": ("op_counts", "shift_response", "scale_response"),
    "stack": (
        "init_params",
        "attention_stub",
        "ffn_stub",
        "token_norm",
        "stack_forward",
        "stack_forward_postnorm",
        "stack_trace",
        "depth_rms",
    ),
    "inspect_config": ("inspect_config",),
    "gradient_path": (
        "sublayer",
        "sublayer_backward",
        "lesson_setup",
        "block_forward",
        "block_backward",
        "gradient_path",
    ),
    "porting": ("forward", "probes", "diagnose"),
    "quantization": ("quantization_setup", "quantize", "quantized_stack", "quantization_report"),
}

MODULE_OF: dict[str, str] = {fn: module for module, fns in EXERCISES.items() for fn in fns}
"""Function name -> the module (and exercise) that defines it."""

REPEATABLE = frozenset({"inspect_config"})
"""Functions whose answer to the same arguments, asked again by a later test of one grading, is
the answer the student's code gave the first time. ``inspect_config`` reads a config and reports
on it, and its hidden tests ask about the same bank configs field by field: 117 of a solved
notebook's 367 calls were repeats. Only answers are reused: a call that raised, crashed or
timed out is made again."""

MODULES: tuple[str, ...] = tuple(EXERCISES)

CALLS: dict[str, tuple[str, ...]] = {
    "block": ("rmsnorm",),
    "postnorm_block": ("rmsnorm",),
    "shift_response": ("layernorm", "rmsnorm"),
    "scale_response": ("layernorm", "rmsnorm"),
    "stack_forward": ("attention_stub", "ffn_stub", "rmsnorm"),
    "stack_forward_postnorm": ("attention_stub", "ffn_stub", "rmsnorm"),
    "stack_trace": ("attention_stub", "ffn_stub", "rmsnorm", "token_norm"),
    "depth_rms": ("attention_stub", "ffn_stub", "rmsnorm"),
    "block_forward": ("rmsnorm", "sublayer"),
    "block_backward": ("rmsnorm", "rmsnorm_backward", "sublayer", "sublayer_backward"),
    "gradient_path": ("block_backward", "block_forward"),
    "forward": ("layernorm", "rmsnorm"),
    "quantized_stack": ("quantize", "rmsnorm"),
    "quantization_report": ("quantized_stack",),
}
"""Graded function -> the graded functions it calls, as the reference does (directly or
through its private helpers; a test holds the two together): a failure of the function may come
from one of those, and a hang in one of them makes it hang too."""


@cache
def callees(function: str) -> frozenset[str]:
    """Every graded function that ``function`` calls, directly or not."""
    found: set[str] = set()
    for called in CALLS.get(function, ()):
        found |= {called, *callees(called)}
    return frozenset(found)


def uses(exercise: str) -> set[str]:
    """The graded functions of other exercises that ``exercise``'s functions call."""
    return {called for function, calls in CALLS.items() if MODULE_OF[function] == exercise for called in calls}


PLAIN_CHECKS = "normlab_public.py"
"""The public tests' helper shipped beside the stubs and the released notebook: never a
student's work, whatever it defines."""

DATA = ("configs",)
"""Folders that ship next to the lab (the release copies them beside the notebook): student
code may read them by a relative path, when grading too."""

PACKAGE = Path(__file__).resolve().parent


@cache
def course_root() -> Path:
    """The directory holding ``exercises/`` (and, for instructors, ``solutions/``).

    In a checkout (or an editable install) that is the repository, and in a student bundle
    the bundle's folder; a wheel carries both under ``grader/_course``.
    """
    checkout = PACKAGE.parent
    if (checkout / "exercises").is_dir() and (checkout / "grader").is_dir():
        return checkout
    return PACKAGE / "_course"


def solutions_dir() -> Path:
    return course_root() / "solutions"


def exercises_dir() -> Path:
    return course_root() / "exercises"


def suites_dir() -> Path:
    """The hidden suites. Absent from a student's copy of the grader."""
    return PACKAGE / "suites"


def in_lesson_order(files: list[Path]) -> list[Path]:
    """Test files sorted by the exercise they test (``test_<module>.py``), in lesson order."""

    def key(path: Path) -> tuple[int, str]:
        name = path.stem.removeprefix("test_")
        return (MODULES.index(name) if name in MODULES else len(MODULES), name)

    return sorted(files, key=key)


def public_tests() -> list[Path]:
    """The public test files, from the course (never from the submission being graded)."""
    return in_lesson_order(list(exercises_dir().glob("test_*.py")))


def hidden_tests() -> list[Path]:
    return in_lesson_order(list(suites_dir().glob("test_*.py")))


@cache
def parameters(function: str) -> tuple[str, ...]:
    """The parameter names of a graded function, as its stub declares them (``x``, ``gamma``)."""
    tree = ast.parse((exercises_dir() / f"{MODULE_OF[function]}.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == function:
            return tuple(a.arg for a in node.args.posonlyargs + node.args.args + node.args.kwonlyargs)
    return ()


def parameter_name(function: str, name: str) -> str:
    """``arg0`` as the spec names that position (``x``); other names as they are."""
    match = re.fullmatch(r"arg(\d+)", name)
    names = parameters(function)
    if match is not None and int(match.group(1)) < len(names):
        return names[int(match.group(1))]
    return name
