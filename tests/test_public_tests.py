"""The public tests: they pass on the reference and fail on the stubs, with normlab's checks and
with the plain ones (``normlab_public.py``, for a Python without normlab), and a mistake they
can see is named in their failure the way the hidden tests name it."""

import json
import re
import shutil
import subprocess
import sys

import pytest
from helpers import patched
from mutants import MUTANTS

from grader import course
from grader.course import EXERCISES, MODULE_OF
from grader.messages import Message, render

# Run pytest with the `grader` package made unimportable: what a student's bare Python sees.
WITHOUT_NORMLAB = "import sys; sys.modules['grader'] = None; import pytest; sys.exit(pytest.main(sys.argv[1:]))"


def _pytest(directory, *, normlab=True, target=None, lang=None):
    """pytest on the student's folder (or one ``target`` file in it), with normlab's checks or
    with the plain ones of a kernel without normlab, its messages in ``lang``."""
    runner = ["-m", "pytest"] if normlab else ["-c", WITHOUT_NORMLAB]
    env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": str(directory)}
    return subprocess.run(
        [sys.executable, *runner, "-q", "-p", "no:cacheprovider", "-p", "no:randomly", target or str(directory)],
        capture_output=True,
        text=True,
        cwd=directory,
        timeout=300,
        env=env | ({"NORMLAB_LANG": lang} if lang else {}),
    )


def _student_folder(target, module=None, old=None, new=None):
    """The student's folder: stubs, public tests, answers file, with the reference (or one
    mutant of it) written in."""
    shutil.copytree(course.exercises_dir(), target, ignore=shutil.ignore_patterns("__pycache__"))
    if module is None:
        reference = target.parent / "reference"
        shutil.copytree(course.solutions_dir(), reference, ignore=shutil.ignore_patterns("__pycache__", "test_*"))
    else:
        reference = patched(target.parent / "reference", module, old, new)
    for name in EXERCISES:
        shutil.copy2(reference / f"{name}.py", target / f"{name}.py")
    return target


@pytest.mark.parametrize("normlab", [True, False], ids=["normlab-checks", "plain-checks"])
def test_public_tests_pass_on_the_reference(tmp_path, normlab):
    out = _pytest(_student_folder(tmp_path / "student"), normlab=normlab)
    assert out.returncode == 0, out.stdout[-3000:]
    assert re.search(r"\b34 passed\b", out.stdout), out.stdout[-500:]


@pytest.mark.parametrize("normlab", [True, False], ids=["normlab-checks", "plain-checks"])
def test_public_tests_fail_on_the_stubs(normlab, tmp_path):
    folder = tmp_path / "stubs"
    shutil.copytree(course.exercises_dir(), folder, ignore=shutil.ignore_patterns("__pycache__"))
    out = _pytest(folder, normlab=normlab)
    assert out.returncode == 1, out.stdout[-2000:]
    assert " passed" not in out.stdout.splitlines()[-1]


def test_public_tests_pass_in_the_solutions_folder():
    """An instructor runs ``pytest`` in solutions/ (no answers file there: normlab's own)."""
    out = _pytest(course.solutions_dir())
    assert out.returncode == 0, out.stdout[-2000:]


def test_every_graded_function_has_a_public_test():
    sources = "".join(p.read_text() for p in course.public_tests())
    untested = [f for f in MODULE_OF if not re.search(rf"student\.{f}\b", sources)]
    assert untested == []


def test_every_public_check_was_recorded_for_public_inputs_only():
    """answers.json holds one entry per distinct public call; nothing else (no hidden input
    could reach it: it is recorded by running the public tests, see recording.py)."""
    answers = json.loads((course.exercises_dir() / "answers.json").read_text())
    assert set(answers) == {"calls", "hints", "messages", "descriptions"}
    assert all(name.startswith("public.") for name in answers["messages"])  # the tests' own, nothing else
    public_tests = set(re.findall(r"^def (test_\w+)", "".join(p.read_text() for p in course.public_tests()), re.M))
    assert set(answers["descriptions"]) == public_tests  # the public tests' descriptions, no hidden one's
    functions = {entry["function"] for entry in answers["calls"].values()}
    assert functions <= set(MODULE_OF)
    checked = "".join(p.read_text() for p in course.public_tests())
    assert {f for f in MODULE_OF if re.search(rf"expected\.check\(\s*student\.{f}\s*,", checked)} == functions


def _hints_public_tests_can_give(module):
    """The hints the public tests of ``module``'s functions carry (a mistake in rmsnorm shows
    on the stack's tests too, but as the stack's mistakes)."""
    answers = json.loads((course.exercises_dir() / "answers.json").read_text())
    calls = answers["calls"].values()
    return {hint for entry in calls if course.MODULE_OF[entry["function"]] == module for hint, _ in entry["hints"]}


VISIBLE = [m for m in MUTANTS if m[4] in _hints_public_tests_can_give(m[1])]


@pytest.mark.parametrize("normlab", [True, False], ids=["normlab-checks", "plain-checks"])
@pytest.mark.parametrize(("name", "module", "old", "new", "hint"), VISIBLE, ids=[m[0] for m in VISIBLE])
def test_a_mistake_the_public_tests_can_see_is_named(tmp_path, name, module, old, new, hint, normlab):
    """The failure shows the numbers and the mistake's hint, in plain pytest, with or without
    normlab: the student does not wait for grading to learn what the mistake is."""
    out = _pytest(_student_folder(tmp_path / "student", module, old, new), normlab=normlab)
    assert out.returncode == 1, f"{name}: the public tests pass"
    text = " ".join(out.stdout.split())
    assert " ".join(render(Message(hint)).split()) in text, f"{name}: no {hint} in\n{out.stdout[-3000:]}"
    assert re.search(r"expected|instead of", text), f"{name}: no numbers in\n{out.stdout[-3000:]}"


def test_public_tests_name_most_of_the_hinted_mistakes():
    """The public inputs are chosen so that most mistakes with a hint show it before grading."""
    hinted = [m for m in MUTANTS if m[4] and m[4].startswith("hint.")]
    assert len(VISIBLE) >= 0.6 * len(hinted), sorted({m[0] for m in hinted} - {m[0] for m in VISIBLE})


def test_a_layernorm_with_rmsnorms_default_eps_is_told_so_before_grading(tmp_path):
    """Trial 60: a LayerNorm with RMSNorm's default eps was told its eps was missing. The public
    test cannot tell 1e-6 from no eps at all, and names both; the hidden tests, which can, name
    the default. (Two hints for one mistake: its mutant carries none of its own.)"""
    from grader.runner import Options, grade

    _, module, old, new, _ = next(m for m in MUTANTS if m[0] == "ln_rmsnorm_default_eps")
    out = _pytest(_student_folder(tmp_path / "student", module, old, new), normlab=True)
    assert out.returncode == 1
    text = " ".join(out.stdout.split())
    assert " ".join(render(Message("hint.eps_missing_or_small_default")).split()) in text, out.stdout[-3000:]
    report = grade(patched(tmp_path / "hidden", module, old, new), Options(suites=("hidden",)))
    assert "hint.layernorm_rms_default_eps" in {m.id for r in report.results for m in r.messages}


IN_PLACE = "    x /= np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps)\n    x *= gamma\n    return x\n"


@pytest.mark.parametrize("normlab", [True, False], ids=["normlab-checks", "plain-checks"])
def test_an_input_changed_in_place_is_named_not_taken_for_a_changed_test(tmp_path, normlab):
    """A student's rmsnorm that divides x in place: both checkers say so (the answer is looked up
    before the call), instead of blaming a changed test."""
    folder = _student_folder(tmp_path / "student")
    source = (folder / "rmsnorm.py").read_text()
    start = source.index("def rmsnorm(")
    body_end = source.index("\ndef ", start + 1)
    signature_end = source.index('"""', source.index('"""', start) + 3) + 3
    (folder / "rmsnorm.py").write_text(source[:signature_end] + "\n" + IN_PLACE + "\n" + source[body_end:])
    out = _pytest(folder, normlab=normlab)
    assert out.returncode == 1
    text = " ".join(out.stdout.split())
    assert "modified its input(s) in place (x)" in text, out.stdout[-3000:]

    # A test that called the function itself before checking it can only say what may have happened.
    from grader.public import recorded

    with pytest.raises(LookupError, match="in place earlier in this test"):
        recorded({"calls": {}}, "rmsnorm", (), {})


@pytest.mark.parametrize("normlab", [True, False], ids=["normlab-checks", "plain-checks"])
def test_a_public_tests_own_condition_is_said_in_the_readers_language(tmp_path, normlab):
    """A pt-BR student read "A verificação falhou: forward(x, params, 'match') is not the
    expected block...": a public test's own conditions (probes' form, diagnose's answer,
    forward unchanged) are catalog messages, in either checker."""
    folder = _student_folder(tmp_path / "student")
    source = (folder / "porting.py").read_text()
    start = source.index("def probes(")
    signature_end = source.index('"""', source.index('"""', start) + 3) + 3
    body_end = source.index("\ndef ", start + 1)
    probes = "\n    return [np.ones((2, 16), dtype=np.float32)]\n"
    (folder / "porting.py").write_text(source[:signature_end] + probes + source[body_end:])
    out = _pytest(folder, normlab=normlab, target="test_porting.py", lang="pt-BR")
    assert out.returncode == 1
    text = " ".join(out.stdout.split())
    assert "A probe 0 precisa ser float64 e finita (ela é float32" in text, out.stdout[-3000:]


def test_no_public_test_asserts_in_english():
    """Trial 47: seven bare asserts of the public tests reached a pt-BR report in English ("A
    verificação falhou: LayerNorm's output moved under a shift"). Every condition of a public
    test is a catalog message (``expected.require``), said in the reader's language."""
    import ast

    for path in course.public_tests():
        asserts = [node.lineno for node in ast.walk(ast.parse(path.read_text())) if isinstance(node, ast.Assert)]
        assert not asserts, f"{path.name}: assert on lines {asserts}"


@pytest.mark.parametrize("normlab", [True, False], ids=["normlab-checks", "plain-checks"])
def test_a_public_property_that_fails_is_said_in_portuguese(tmp_path, normlab):
    folder = _student_folder(tmp_path / "student")
    with (folder / "compare.py").open("a") as module:
        module.write(
            "\n\n_right = shift_response\n\n\ndef shift_response(x, c):\n"
            "    out = _right(x, c)\n    out['layernorm'] = 1.0\n    return out\n"
        )
    out = _pytest(folder, normlab=normlab, target="test_compare.py", lang="pt-BR")
    text = " ".join(out.stdout.split())
    assert out.returncode == 1 and "a saída da LayerNorm mudou com um deslocamento" in text, out.stdout[-3000:]
    assert "moved under a shift" not in text


def test_the_kernels_public_runner_speaks_the_courses_language(capsys, monkeypatch):
    """Trial 49: ``nbgrader validate`` of a pt-BR course printed its test descriptions, the
    stub's message and the count of failures in English. The released notebook passes the
    course's language; descriptions come translated with the public answers."""
    import importlib.util

    from grader import public

    monkeypatch.setenv("NBGRADER_EXECUTION", "validate")
    monkeypatch.delenv("NORMLAB_LANG", raising=False)
    monkeypatch.setattr(public, "_course_language", None)
    folder = course.exercises_dir()
    spec = importlib.util.spec_from_file_location("public_rmsnorm_tests", folder / "test_rmsnorm.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    tests = [module.test_rmsnorm_small_example]
    stubs = {"rmsnorm": lambda *args, **kwargs: (_ for _ in ()).throw(NotImplementedError())}
    assert public.run_public(tests, stubs, folder, lang="pt-BR") == 0
    out, err = capsys.readouterr()
    assert "rmsnorm([3, 4]) com gamma [1, 2]" in out and "ainda não foi implementada" in out, out
    assert "1 de 1 testes públicos falharam" in err and "public tests failed" not in err
    monkeypatch.setattr(public, "_course_language", None)
    public.run_public(tests, stubs, folder, lang="en")
    assert "is not implemented yet" in capsys.readouterr().out


def test_the_plain_checks_say_a_wrong_answer_in_portuguese(tmp_path):
    """Trial 50: without normlab installed (a JupyterHub kernel), a pt-BR student read
    "PlainFailure: layernorm(...) differs from the expected answer..." in English."""
    folder = _student_folder(tmp_path / "student", "rmsnorm", "np.sqrt(ms + eps)", "(np.sqrt(ms) + eps)")
    out = _pytest(folder, normlab=False, target="test_rmsnorm.py", lang="pt-BR")
    text = " ".join(out.stdout.split())
    assert out.returncode == 1 and "difere da resposta esperada no índice" in text, out.stdout[-3000:]
    assert "differs from the expected answer" not in text
    kernel = (  # the notebook's public cell, in a kernel without normlab
        "import sys; sys.modules['grader'] = None; import normlab_public, rmsnorm, test_rmsnorm; "
        "tests = [getattr(test_rmsnorm, n) for n in dir(test_rmsnorm) if n.startswith('test_')]; "
        "normlab_public.run_public(tests, vars(rmsnorm), lang='pt-BR')"
    )
    shown = subprocess.run([sys.executable, "-c", kernel], capture_output=True, text=True, cwd=folder, timeout=300)
    assert "\nFALHOU  " in "\n" + shown.stdout and "difere da resposta esperada" in shown.stdout, shown.stdout
    assert "PlainFailure" not in shown.stdout
