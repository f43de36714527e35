"""Red team, class 1: points without the maths.

Principle (ARCHITECTURE.md, Decision 1): a hidden test awards points for a property (input
untouched, dtype kept, sublayer called once, raises on bad input, report keys present, the
note names the norm) only together with a correct answer. So trivial code scores ZERO on every
hidden test of every exercise:

* a constant (``None``, ``0.0``);
* a constant of the right *structure*: the answer's shapes, dtypes, keys and types, every value
  a constant (0, 1, or strings stuffed with every norm name and every plausible eps);
* a copy of one of its arguments;
* an always-raise, for each built-in exception type a test might expect;
* the real computation with one *required* argument ignored (a sublayer that is never called,
  a gain that is never applied, a config that is never read), wherever ignoring it changes the
  outcome on that input (so ``layernorm_backward``'s ``beta``, which the maths never uses, and
  other arguments that make no difference to one particular call are not counted).

The trivial implementations are generated programmatically for every graded function of every
exercise (from the manifest and the reference's signatures), so a new function or test is
covered without editing this file. Each family is one single-file submission graded with every
suite; the reference, graded the same way in the same run, must get full marks. A second test
applies the same rule to the public tests, which count towards the grade as well.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from redteam_helpers import (
    EXERCISES_DIR,
    exercises,
    feedback_of,
    grade_many_api,
    hidden_results,
    reference_signatures,
    reference_source_without_course_imports,
)

pytestmark = pytest.mark.slow

RAISES = (
    "ValueError",
    "TypeError",
    "KeyError",
    "IndexError",
    "LookupError",
    "ZeroDivisionError",
    "ArithmeticError",
    "FileNotFoundError",
    "OSError",
    "RuntimeError",
    "AssertionError",
    "Exception",
)
"""Built-in exceptions a hidden test may expect (``expect_raises``/``pytest.raises``)."""


def _max_required() -> int:
    return max(sum(required for _, required in params) for params in reference_signatures().values())


def public_configs() -> dict[str, str]:
    """The config bank students get with the exercises: public inputs of ``inspect_config``."""
    return {p.stem: p.read_text() for p in sorted((EXERCISES_DIR / "configs").glob("*.json"))}


def families() -> list[str]:
    names = ["constant-None", "constant-0.0", "structure-zeros", "structure-ones", "keyword-stuffed"]
    names += [f"copy-arg{i}" for i in range(_max_required())]
    names += [f"ignore-arg{i}" for i in range(_max_required())]
    names += [f"raise-{exc}" for exc in RAISES]
    names += ["copy-through"] + [f"memorized-{name}" for name in sorted(public_configs())]
    return names


# Runs inside the sandbox, next to the reference's code (in ``_REF``). ``FAMILY`` selects what
# every graded function does; ``SIGNATURES`` maps each function to its (name, required) params.
_RUNTIME = r'''
import copy as _copy
import json as _json
import inspect as _inspect

import numpy as _np

_REF = {}
exec(compile(_REFERENCE_SOURCE, "<reference>", "exec"), _REF)

_EPS_WORDS = [f(m * 10.0 ** -k) for m in (1, 2, 3, 5) for k in range(1, 13) for f in (repr, lambda v: format(v, "g"))]
_SOUP = " ".join(
    ["RMSNorm", "LayerNorm", "rmsnorm", "layernorm", "gemma_rmsnorm", "RMSNorm with a (1 + weight) scale",
     "1 + weight", "pre", "post", "parallel", "sandwich", "post_sublayer", "default"] + _EPS_WORDS
)


def _neutral(value):
    """What code that ignores an argument uses in its place."""
    if isinstance(value, _np.ndarray):
        return _np.ones_like(value)
    if callable(value):
        return lambda h: _np.zeros_like(h)  # the sublayer is never called
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return 5
    if isinstance(value, float):
        return 0.5
    if isinstance(value, str):
        return ""
    if isinstance(value, dict):
        return {}
    return None


def _constantize(value, number, stuffed):
    """The same structure as ``value`` with every leaf a constant."""
    if isinstance(value, _np.ndarray):
        return _np.full_like(value, number)
    if isinstance(value, (bool, _np.bool_)):
        return bool(number)
    if isinstance(value, (int, _np.integer)):
        return int(number)
    if isinstance(value, (float, _np.floating)):
        return float(number)
    if isinstance(value, str):
        return _SOUP if stuffed else ""
    if isinstance(value, dict):
        return {k: _constantize(v, number, stuffed) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_constantize(v, number, stuffed) for v in value)
    return value


def _outcome(name, args, kwargs):
    try:
        return _REF[name](*_copy.deepcopy(args), **_copy.deepcopy(kwargs))
    except Exception as exc:
        return exc


def _same(a, b):
    if isinstance(a, BaseException) or isinstance(b, BaseException):
        return type(a) is type(b)
    if isinstance(a, _np.ndarray) or isinstance(b, _np.ndarray):
        return (
            isinstance(a, _np.ndarray) and isinstance(b, _np.ndarray) and a.shape == b.shape
            and a.dtype == b.dtype and bool(_np.array_equal(a, b, equal_nan=True))
        )
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def _copy_through(answer, arguments):
    if not isinstance(answer, dict):
        return answer
    sources = [a for a in arguments.values() if isinstance(a, dict)]
    out = {}
    for key, value in answer.items():
        found = [s[key] for s in sources if key in s and type(s[key]) is type(value)]
        out[key] = (found[0].lower() if isinstance(found[0], str) else found[0]) if found else value
    return out


def _trivial(name, args, kwargs):
    family = FAMILY
    params = SIGNATURES[name]
    bound = _inspect.signature(_REF[name]).bind(*args, **kwargs)
    required = [p for p, req in params if req]
    if family == "constant-None":
        return None
    if family == "constant-0.0":
        return 0.0
    if family.startswith("raise-"):
        import builtins

        raise getattr(builtins, family[6:])("trivial")
    if family.startswith("copy-arg"):
        i = int(family[8:])
        if i >= len(required) or required[i] not in bound.arguments:
            return None
        return _copy.deepcopy(bound.arguments[required[i]])
    if family.startswith("ignore-arg"):
        i = int(family[10:])
        if i >= len(required) or required[i] not in bound.arguments:
            return None
        real = _outcome(name, bound.args, bound.kwargs)
        bound.arguments[required[i]] = _neutral(bound.arguments[required[i]])
        ignored = _outcome(name, bound.args, bound.kwargs)
        if _same(real, ignored):
            # The argument makes no difference on this input (layernorm_backward's beta, a
            # placement refused before x is read): ignoring it here is not a mistake.
            return None
        if isinstance(ignored, BaseException):
            raise ignored
        return ignored
    if family.startswith("memorized-"):
        # A constant: the right answer for one public config, whatever the argument.
        if name != "inspect_config":
            return None
        return _REF[name](_json.loads(PUBLIC_CONFIGS[family[10:]]))
    # The right structure, constant values: take the structure from the reference's answer.
    try:
        shape_of = _REF[name](*_copy.deepcopy(bound.args), **_copy.deepcopy(bound.kwargs))
    except Exception:
        return None
    if family == "copy-through":
        # Constant values, except that a key of the answer that the input also has is copied
        # from the input (lower-cased): no maths, only names.
        return _copy_through(_constantize(shape_of, 0, False), bound.arguments)
    if family == "structure-zeros":
        return _constantize(shape_of, 0, False)
    if family == "structure-ones":
        return _constantize(shape_of, 1, False)
    return _constantize(shape_of, 1, True)  # keyword-stuffed
'''


def submission_text(family: str) -> str:
    signatures = reference_signatures()
    functions = [fn for fns in exercises().values() for fn in fns]
    wrappers = "\n".join(f"def {fn}(*args, **kwargs):\n    return _trivial({fn!r}, args, kwargs)\n" for fn in functions)
    return "\n".join(
        [
            f'"""Trivial implementation, family {family}: generated by tests/test_redteam_trivial.py."""',
            f"FAMILY = {family!r}",
            f"SIGNATURES = {signatures!r}",
            f"PUBLIC_CONFIGS = {public_configs()!r}",
            f"_REFERENCE_SOURCE = {reference_source_without_course_imports()!r}",
            textwrap.dedent(_RUNTIME),
            wrappers,
        ]
    )


def _select(family: str) -> str:
    """Only the exercises where the family differs from returning None are worth grading: a
    memorized config answers only inspect_config; copy-argN and ignore-argN act only on functions
    with more than N required arguments."""
    if family.startswith("memorized-"):
        return "test_inspect_config"
    if family.startswith(("copy-arg", "ignore-arg")):
        index = int(family.rsplit("arg", 1)[1])
        signatures = reference_signatures()
        modules = [
            module
            for module, functions in exercises().items()
            if any(sum(required for _, required in signatures[fn]) > index for fn in functions)
        ]
        return " or ".join(f"test_{module}" for module in modules)
    return ""


@pytest.fixture(scope="module")
def graded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict]:
    root = tmp_path_factory.mktemp("trivial")
    paths: dict[str, Path] = {}
    for family in families():
        path = root / f"trivial_{family.replace('.', '_')}.py"
        path.write_text(submission_text(family))
        paths[family] = path
    names = ["reference", *paths]
    from redteam_helpers import SOLUTIONS

    selects = ["", *(_select(f) for f in paths)]
    reports = grade_many_api([SOLUTIONS, *paths.values()], suites="public+hidden", call_seconds=5.0, selects=selects)
    return dict(zip(names, reports, strict=True))


def test_the_reference_scores_full_marks_the_same_way(graded: dict[str, dict]) -> None:
    reference = graded["reference"]
    assert "error" not in reference, reference.get("error")
    assert reference["score"] == reference["max_score"] > 0
    assert {r["exercise"] for r in hidden_results(reference)} == set(exercises())


@pytest.mark.parametrize("family", families())
def test_trivial_code_scores_zero_on_every_hidden_test(family: str, graded: dict[str, dict]) -> None:
    report = graded[family]
    assert "error" not in report, f"no report for the trivial family {family}:\n{report.get('error')}"
    results = hidden_results(report)
    # A family graded with -k on the exercises it acts on reports only those (issue 11).
    graded_exercises = {r["exercise"] for r in results}
    reference = [r["name"] for r in hidden_results(graded["reference"]) if r["exercise"] in graded_exercises]
    assert results and [r["name"] for r in results] == reference
    # Not vacuous: the trivial code was imported and called (no import error, nothing missing).
    ids = {m["id"] for r in results for m in r["messages"]}
    assert not ids & {"fault.import_error", "fault.missing", "fault.module_missing", "fault.not_callable"}, sorted(ids)
    false_passes = [
        f"{r['name']} ({r['score']:g} points): {r['status']} {feedback_of(r)[:200]!r}" for r in results if r["score"]
    ]
    assert not false_passes, (
        f"trivial code ({family}) earned points on {len(false_passes)} hidden test(s):\n  " + "\n  ".join(false_passes)
    )


@pytest.mark.parametrize("family", [f for f in families() if not f.startswith("memorized-")])
def test_trivial_code_scores_zero_on_every_public_test(family: str, graded: dict[str, dict]) -> None:
    """Public tests count towards the grade too (Decision 1 speaks of points, not of suites).

    A memorized answer is left out here: on a public test it is the right answer for that
    test's own, public input (as ``tests/attacks/rmsnorm_hardcoded_public.py`` already allows)."""
    report = graded[family]
    assert "error" not in report, report.get("error")
    results = [r for r in report["results"] if r["visibility"] == "public" and r["status"] != "skipped"]
    false_passes = [f"{r['name']} ({r['score']:g} points)" for r in results if r["score"]]
    assert not false_passes, (
        f"trivial code ({family}) earned points on {len(false_passes)} public test(s):\n  " + "\n  ".join(false_passes)
    )


def lookup_table_text() -> str:
    """A submission that computes nothing: each graded function hashes its arguments as the
    public tests' answers file does and returns the recorded answer (every student has the file)."""
    import inspect
    import json

    from grader import course, public

    calls = json.loads((course.exercises_dir() / public.ANSWERS_FILE).read_text())["calls"]
    names = sorted({entry["function"] for entry in calls.values()})
    helpers = "\n\n".join(inspect.getsource(f) for f in (public._canonical, public.key, public.decode))
    table = f"CALLS = json.loads({json.dumps(calls)!r})\n"
    lookup = (
        "def _make(name):\n"
        "    def answer(*args, **kwargs):\n"
        "        entry = CALLS.get(key(name, args, kwargs))\n"
        "        return None if entry is None else decode(entry['answer'])\n"
        "    answer.__name__ = name\n"
        "    return answer\n"
    )
    made = "".join(f"{name} = _make({name!r})\n" for name in names)
    imports = "import base64\nimport hashlib\nimport json\nfrom typing import Any\n\nimport numpy as np\n\n"
    return imports + helpers + "\n\n" + table + lookup + made


def test_a_table_of_the_public_answers_earns_only_what_has_no_array_to_turn(tmp_path: Path) -> None:
    """The public answers ship to students; a table of them passed all 25 public tests (a red
    team). A final grading repeats each public check on its twin (arrays' first axis reversed):
    only calls without such an array stay memorizable (op_counts(C), a config file)."""
    from grader.runner import Options, grade

    path = tmp_path / "lookup.py"
    path.write_text(lookup_table_text())
    report = grade(path, Options(suites=("public", "hidden")))
    public = [r for r in report.results if r.visibility.value == "public"]
    passed = {r.exercise for r in public if r.score}
    assert public and passed <= {"compare", "inspect_config"} and sum(r.score for r in public) <= 3, passed
    assert any(m.id == "check.public_twin" for r in public for m in r.messages)
    assert sum(r.score for r in report.results if r.visibility.value == "hidden") == 0


if __name__ == "__main__":  # write one family's submission, to grade it by hand
    import sys

    if len(sys.argv) != 3 or sys.argv[1] not in families():
        sys.exit(f"usage: python tests/test_redteam_trivial.py FAMILY OUT.py\nfamilies: {', '.join(families())}")
    Path(sys.argv[2]).write_text(submission_text(sys.argv[1]))
    print(sys.argv[2])
