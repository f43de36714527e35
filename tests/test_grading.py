"""End-to-end grading: the reference, the stubs, every submission shape and bad input."""

import json

import nbformat
import pytest
from helpers import copy_solutions, ends_within, failing, message_ids, patched

from grader import course
from grader.course import MODULES
from grader.messages import Message
from grader.model import Status, Visibility
from grader.report import reporters
from grader.runner import Options, grade
from grader.sandbox import limits as limits_module
from grader.sandbox.limits import Limits
from grader.settings import current as current_settings


def test_reference_gets_full_marks():
    report = grade(course.solutions_dir())
    assert report.max_score > 100
    assert report.score == report.max_score
    assert {r.status for r in report.results} == {Status.PASSED}
    assert {r.visibility for r in report.results} == {Visibility.PUBLIC, Visibility.HIDDEN}
    assert {exercise for exercise, _ in report.by_exercise()} == set(MODULES)


def test_every_test_function_gets_exactly_one_result():
    import ast

    files = course.public_tests() + course.hidden_tests()
    expected = sum(
        1
        for f in files
        for n in ast.parse(f.read_text()).body
        if isinstance(n, ast.FunctionDef) and n.name.startswith("test_")
    )
    report = grade(course.solutions_dir())
    assert len(report.results) == expected
    assert len({r.name for r in report.results}) == expected


def test_untouched_stubs_score_zero_and_say_not_implemented():
    report = grade(course.exercises_dir())
    assert report.score == 0
    for result in report.results:
        assert result.status is Status.ERROR, result.name
        assert [m.id for m in result.messages] == ["fault.not_implemented"], result.name


def test_single_python_file(tmp_path):
    # Everything in one file, sibling imports included, as a student might paste it.
    source = "\n\n".join((course.solutions_dir() / f"{m}.py").read_text() for m in MODULES)
    path = tmp_path / "everything.py"
    path.write_text(source)
    report = grade(path)
    assert report.score == report.max_score


def _notebook(cells):
    nb = nbformat.v4.new_notebook()
    nb.cells = cells
    return json.dumps(nb)  # not nbformat.writes: a duplicated cell id is what we want to test


def test_notebook_with_demo_cells_magics_and_shuffled_order(tmp_path):
    code = [nbformat.v4.new_code_cell((course.solutions_dir() / f"{m}.py").read_text()) for m in MODULES]
    junk = [
        nbformat.v4.new_code_cell("%matplotlib inline\n!pip install numpy\nimport numpy as np"),
        nbformat.v4.new_code_cell("x = np.ones((2, 3))\nprint(rmsnorm(x, np.ones(3)))\nassert False, 'demo'"),
        nbformat.v4.new_markdown_cell("# My answers"),
        nbformat.v4.new_code_cell("def broken(:\n    pass"),
    ]
    cells = [code[5], junk[0], junk[2], *code[:5], junk[1], junk[3], code[0], *code[6:]]  # reordered, duplicated
    path = tmp_path / "lab.ipynb"
    path.write_text(_notebook(cells))
    report = grade(path)
    assert report.score == report.max_score
    notes = {n.id for n in report.notes}
    # Jupyter's semantics: the demo cell fails on its own assert, the broken cell does not compile.
    assert notes == {"submission.cell_magic_removed", "submission.cell_failed", "submission.cell_syntax_error"}


def test_a_function_lost_with_its_failing_cell_is_traced_to_that_cell_on_public_tests_only(tmp_path):
    source = (course.solutions_dir() / "rmsnorm.py").read_text()
    cells = [nbformat.v4.new_code_cell("import numpy as np\nraise RuntimeError('a scratch check')\n" + source)]
    path = tmp_path / "lab.ipynb"
    path.write_text(_notebook(cells))
    report = grade(path, Options(select="rmsnorm"))
    rmsnorm = [r for r in report.results if r.exercise == "rmsnorm"]
    assert rmsnorm and all(r.status is Status.ERROR for r in rmsnorm)
    for result in rmsnorm:
        ids = {m.id for m in result.messages}
        assert ids >= {"fault.missing"} or ids >= {"fault.missing_in_submission"}, (result.name, ids)
        assert ("fault.name_from_cell" in ids) == (result.visibility is Visibility.PUBLIC), (result.name, ids)


def test_a_colab_notebook_whose_first_cell_mounts_drive_before_importing_numpy_loses_nothing(tmp_path):
    """On Colab that cell ran whole; here google.colab is not installed. Stopping the cell at
    the import would leave numpy unimported and every function failing (a trial scored 0)."""
    colab = "from google.colab import drive\ndrive.mount('/content/drive')\nimport numpy as np"
    code = [nbformat.v4.new_code_cell((course.solutions_dir() / f"{m}.py").read_text()) for m in MODULES]
    for cell in code:  # the functions use the first cell's np, as a notebook's cells do
        cell.source = "\n".join(line for line in cell.source.splitlines() if line != "import numpy as np")
    path = tmp_path / "colab.ipynb"
    path.write_text(_notebook([nbformat.v4.new_code_cell(colab), *code]))
    report = grade(path, Options(select="rmsnorm or layernorm"))
    assert report.results and report.score == report.max_score, failing(report)
    (note,) = [n for n in report.notes if n.id == "submission.cell_imports_skipped"]
    assert note.params["cell"] == 1 and note.params["package"] == "google"


def test_a_function_computing_with_a_package_not_installed_says_so_not_the_stand_ins_class(tmp_path):
    """A draft decorated with numba's njit, where numba is not installed: the function gives back
    the stand-in for the package. The message says what happened, in both visibilities, and never
    names the grader's own class (a trial read "it is inside.cells.Absent")."""
    source = (course.solutions_dir() / "rmsnorm.py").read_text()
    drafted = "from numba import njit\n" + source.replace("def rmsnorm(", "@njit\ndef rmsnorm(", 1)
    path = tmp_path / "lab.ipynb"
    path.write_text(_notebook([nbformat.v4.new_code_cell(drafted)]))
    report = grade(path, Options(select="rmsnorm and not backward"))
    failed = [r for r in report.results if r.exercise == "rmsnorm" and r.status is Status.FAILED]
    assert {r.visibility for r in failed} == {Visibility.PUBLIC, Visibility.HIDDEN}, failing(report)
    for result in failed:
        assert "check.absent_package" in {m.id for m in result.messages}, (result.name, result.messages)
    for lang in ("en", "pt-BR"):
        assert "Absent" not in reporters.to_text(report, lang) + reporters.to_json(report, lang)


def test_notebook_that_is_not_json_scores_zero_without_crashing(tmp_path):
    # Trial 58: the parser's complaint (in English) was repeated on each of 200 tests, and no
    # note said it at the top. It is one note now, in the student's words; each test points to it.
    path = tmp_path / "lab.ipynb"
    path.write_text('{"cells": [ this is not json')
    report = grade(path)
    assert report.score == 0 and report.max_score > 0
    assert all(r.status is Status.ERROR for r in report.results)
    assert message_ids(report) == {"fault.submission_unreadable"}
    assert report.notes[0] == Message("submission.notebook_not_json", {"line": "1", "column": "13"})
    shown = reporters.to_text(report, "pt-BR")
    assert shown.count("linha 1, coluna 13") == 1 and "Expecting" not in shown
    path.write_text(" \n")
    assert grade(path).notes[0] == Message("submission.notebook_empty")


def test_missing_file_costs_only_its_exercise(tmp_path):
    sub = copy_solutions(tmp_path / "sub")
    (sub / "stack.py").unlink()
    report = grade(sub)
    lost = failing(report)
    assert {r.exercise for r in lost} == {"stack"}
    assert {m.id for r in lost for m in r.messages} == {"fault.module_missing"}  # not "not defined in stack.py"
    assert [n.id for n in report.notes] == ["submission.module_missing"]


def test_missing_function_costs_only_its_tests(tmp_path):
    sub = patched(tmp_path / "sub", "residual", "def postnorm_block(", "def post_norm_block(")
    report = grade(sub)
    lost = failing(report)
    assert lost and all("postnorm" in r.name or "post" in r.description.lower() for r in lost)
    assert {m.id for r in lost for m in r.messages} == {"fault.missing"}


def test_syntax_error_costs_only_that_module(tmp_path):
    sub = patched(tmp_path / "sub", "compare", "def op_counts(C):", "def op_counts(C)")
    report = grade(sub)
    assert {r.exercise for r in failing(report)} == {"compare"}
    assert "fault.import_error" in message_ids(report)


def test_a_module_that_does_not_import_is_named_with_the_function_each_test_called(tmp_path):
    # The fault is kept per module, but each test called its own function: a postnorm_block
    # test must not say "so block could not be called" (trial 57).
    sub = patched(
        tmp_path / "sub", "residual", "from rmsnorm import rmsnorm\n", "import pandas\nfrom rmsnorm import rmsnorm\n"
    )
    report = grade(sub)
    named = {
        r.name: {m.params["function"] for m in r.messages if m.id == "fault.import_error"}
        for r in failing(report)
        if r.exercise == "residual"
    }
    postnorm = {name: functions for name, functions in named.items() if "postnorm" in name}
    assert postnorm and all(functions == {"postnorm_block"} for functions in postnorm.values()), postnorm
    assert set().union(*named.values()) == {"block", "postnorm_block"}


def test_exit_at_import_zeroes_that_module_only(tmp_path):
    sub = patched(tmp_path / "sub", "inspect_config", "import json\n", "import json\nimport os\nos._exit(0)\n")
    report = grade(sub)
    lost = failing(report)
    assert {r.exercise for r in lost} == {"inspect_config"}
    assert {r.status for r in lost} == {Status.CRASHED}
    assert "fault.import_crashed" in message_ids(report)
    others = [r for r in report.results if r.exercise != "inspect_config"]
    assert all(r.status is Status.PASSED for r in others)


def test_infinite_loop_times_out_and_the_rest_is_graded(tmp_path):
    sub = patched(
        tmp_path / "sub", "compare", '    """Arithmetic cost', '    while True:\n        pass\n    """Arithmetic cost'
    )
    limits = Limits(call_seconds=1.0)
    report = grade(sub, Options(settings=current_settings().replace(limits=limits)))
    lost = failing(report)
    assert lost and {r.status for r in lost} == {Status.TIMEOUT}
    assert all("op_counts" in r.name for r in lost)
    assert {m.id for r in lost for m in r.messages} <= {"fault.timeout", "fault.timeout_repeat", "fault.timeout_where"}
    assert sum(r.exercise == "compare" and r.status is Status.PASSED for r in report.results) >= 4


def test_a_notebook_cell_slower_than_a_tight_call_limit_still_runs(tmp_path):
    """A calibrated call limit (seconds) is not a cell's limit: Jupyter never times a cell, and a
    slow import or demonstration must not remove the cell's definitions."""
    source = (course.solutions_dir() / "rmsnorm.py").read_text()
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("import time\ntime.sleep(2.5)\n" + source)])
    path = tmp_path / "slow_cell.ipynb"
    nbformat.write(nb, str(path))
    tight = current_settings().replace(limits=Limits(call_seconds=1.0))
    report = grade(path, Options(suites=("public",), settings=tight, select="rmsnorm"))
    rms = [r for r in report.results if r.exercise == "rmsnorm"]
    assert rms and all(r.status is Status.PASSED for r in rms), [(r.name, r.status) for r in rms]
    assert "submission.cell_timeout" not in {note.id for note in report.notes}


def test_a_notebooks_slow_cells_do_not_spend_the_submissions_budget(tmp_path):
    """The budget bounds the functions' calls: cells run once, as Jupyter ran them, each under
    its own limit, are not counted against it (a trial's solved notebook with slow demo cells
    scored 24/253 on Gradescope under the calibrated 30 s budget)."""
    source = (course.solutions_dir() / "rmsnorm.py").read_text()
    demos = [nbformat.v4.new_code_cell("import time\ntime.sleep(1.2)") for _ in range(3)]
    path = tmp_path / "slow_demos.ipynb"
    path.write_text(_notebook([nbformat.v4.new_code_cell(source), *demos]))
    tight = current_settings().replace(limits=Limits(call_seconds=1.0, submission_seconds=2.0))
    report = grade(path, Options(suites=("public",), settings=tight, select="rmsnorm"))
    rms = [r for r in report.results if r.exercise == "rmsnorm"]
    assert rms and all(r.status is Status.PASSED for r in rms), [(r.name, r.status) for r in rms]


def test_a_notebook_whose_cells_run_too_long_altogether_stops_in_bounded_time(tmp_path):
    """Each cell has its own limit and the first run is not the budget's: a thousand cells just
    under their limit would hold a grading for hours. Past ``notebook_seconds`` in all, no
    function is called, each test says why, and the grading ends."""
    import time

    source = (course.solutions_dir() / "rmsnorm.py").read_text()
    slow = [nbformat.v4.new_code_cell("import time\ntime.sleep(0.8)") for _ in range(40)]
    path = tmp_path / "slow.ipynb"
    path.write_text(_notebook([*slow, nbformat.v4.new_code_cell(source)]))
    tight = current_settings().replace(limits=Limits(notebook_seconds=2.0))
    began = time.monotonic()
    report = grade(path, Options(suites=("public",), settings=tight, select="rmsnorm"))
    assert time.monotonic() - began < 15  # the cells alone would take 32 s
    rms = [r for r in report.results if r.exercise == "rmsnorm"]
    assert rms and all(r.score == 0 for r in rms)
    assert all(m.id == "fault.notebook_too_slow" for r in rms for m in r.messages)


def test_a_restart_reruns_the_cells_within_what_is_left_of_the_budget(tmp_path):
    """A crash restarts the worker, which runs the notebook's cells again; cells fast the first
    time and slow afterwards held one grading for minutes (red team, round 4): a restart has
    what is left of the submission's budget, then the budget is spent."""
    import time

    crash = "import os, time\ndef rmsnorm(x, gamma, eps=1e-6):\n    time.sleep(0.6)\n    os._exit(1)\n"
    slow_later = (
        "import os, time\nif time.time() - os.stat('/submission/cells.json').st_mtime > 0.5:\n    time.sleep(2.0)\n"
    )
    cells = [nbformat.v4.new_code_cell(crash), *(nbformat.v4.new_code_cell(slow_later) for _ in range(10))]
    path = tmp_path / "restarts.ipynb"
    path.write_text(_notebook(cells))
    tight = current_settings().replace(limits=Limits(call_seconds=1.0, submission_seconds=3.0))
    began = time.monotonic()
    report = grade(path, Options(suites=("public",), settings=tight, select="rmsnorm"))
    assert time.monotonic() - began < 15  # one restart alone would take 20 s
    ids = {m.id for r in report.results if r.exercise == "rmsnorm" for m in r.messages}
    assert "fault.budget_spent" in ids


def test_patching_allclose_does_not_help(tmp_path):
    sub = patched(
        tmp_path / "sub",
        "layernorm",
        "import numpy as np\n",
        "import numpy as np\nnp.allclose = lambda *a, **k: True\nnp.testing.assert_allclose = lambda *a, **k: None\n",
    )
    source = (sub / "layernorm.py").read_text().replace("y = xc * rstd * gamma + beta", "y = xc * gamma + beta")
    (sub / "layernorm.py").write_text(source)
    report = grade(sub)
    lost = failing(report)
    assert {r.exercise for r in lost} <= {"layernorm", "compare"}
    assert any(r.exercise == "layernorm" and r.visibility is Visibility.PUBLIC for r in lost)
    assert all(r.status is Status.FAILED for r in lost)
    assert all(r.status is Status.PASSED for r in report.results if r.exercise not in {"layernorm", "compare"})


def test_hidden_feedback_never_shows_expected_values_inputs_or_prints(tmp_path):
    sub = patched(tmp_path / "sub", "rmsnorm", "y = xf * rstd * gamma", "print(x)\n    y = xf * rstd")
    report = grade(sub)
    hidden = [r for r in failing(report) if r.visibility is Visibility.HIDDEN]
    assert hidden
    revealing = {
        "check.values_public",
        "check.value_public",
        "check.assertion",
        "fault.exception_text",
        "fault.traceback",
    }
    for result in hidden:
        assert not {m.id for m in result.messages} & revealing, result.name
        assert result.student_output == ""
    public = [r for r in failing(report) if r.visibility is Visibility.PUBLIC]
    # Public tests show the student's own numbers (their inputs are public).
    assert any({"check.values_public", "check.assertion"} & {m.id for m in r.messages} for r in public)
    assert any(r.student_output for r in public)


@pytest.mark.parametrize(
    "returned", ["np.float64(1.0)", "x.tolist()", "np.ma.masked_array(x)", "x.astype(object)", "{'passed': True}"]
)
def test_answers_that_are_not_plain_arrays_fail(tmp_path, returned):
    sub = patched(tmp_path / "sub", "rmsnorm", "    return y.astype(x.dtype)\n", f"    return {returned}\n")
    report = grade(sub, Options(suites=("hidden",), select="test_sequence_of_tokens"))
    rms = [r for r in report.results if r.exercise == "rmsnorm"]
    assert rms and all(r.status in (Status.FAILED, Status.ERROR) for r in rms)
    ids = {m.id for r in rms for m in r.messages}
    assert ids & {"check.not_array", "check.bad_kind", "check.bad_kind_hidden", "check.shape", "fault.bad_result"}, ids


def test_json_report_round_trips(tmp_path):
    from grader.report import reporters

    report = grade(course.solutions_dir(), Options(suites=("public",)))
    data = json.loads(reporters.to_json(report))
    assert data["score"] == data["max_score"] == report.max_score
    assert {"name", "score", "max_score", "status", "output"} <= set(data["tests"][0])


def test_a_selection_reports_only_the_tests_it_selected():
    report = grade(course.solutions_dir(), Options(suites=("hidden",), select="test_sequence_of_tokens"))
    names = {r.name for r in report.results}
    assert names == {"rmsnorm/hidden/test_sequence_of_tokens", "layernorm/hidden/test_sequence_of_tokens"}
    assert all(r.status is Status.PASSED for r in report.results) and report.score == report.max_score


def test_a_function_missing_from_a_single_file_is_named_on_hidden_tests_too(tmp_path):
    """A lone .py file that lacks a function: public tests name the file as the student named it,
    hidden tests say "your submission" (no student-chosen text in hidden feedback), never the
    bare "details withheld"."""
    from grader import course as course_module
    from grader.runner import Options, grade

    source = (course_module.solutions_dir() / "rmsnorm.py").read_text()
    only = source[: source.index("\ndef rmsnorm_backward")]
    (tmp_path / "my_work_sub2.py").write_text(only)
    report = grade(tmp_path / "my_work_sub2.py", Options(suites=("public", "hidden"), select="rmsnorm"))
    backward = [r for r in report.results if "backward" in r.name]
    hidden = [r for r in backward if r.visibility.value == "hidden"]
    public = [r for r in backward if r.visibility.value == "public"]
    assert hidden and all(m.id == "fault.missing_in_submission" for r in hidden for m in r.messages[:1])
    assert all("my_work_sub2" not in str(m.params) for r in hidden for m in r.messages)
    assert public and public[0].messages[0].params["module"] == "my_work_sub2.py"


def test_an_implemented_function_calling_a_stub_names_the_stub(tmp_path):
    """stack_trace written, token_norm (which it calls) still the stub: the feedback says
    token_norm is the one to implement, not that stack_trace is unimplemented."""
    import shutil

    from grader import course as course_module
    from grader.runner import Options, grade

    for module in course_module.MODULES:
        shutil.copy(course_module.solutions_dir() / f"{module}.py", tmp_path / f"{module}.py")
    stack = (tmp_path / "stack.py").read_text()
    start = stack.index("def token_norm(")
    begin = stack.index("    ### BEGIN SOLUTION", start)
    end = stack.index("### END SOLUTION", begin) + len("### END SOLUTION")
    (tmp_path / "stack.py").write_text(stack[:begin] + "    raise NotImplementedError" + stack[end:])
    report = grade(tmp_path, Options(suites=("public", "hidden"), select="trace"))
    ids = {(m.id, tuple(sorted(m.params.items()))) for r in report.results for m in r.messages}
    inside = ("fault.not_implemented_inside", (("function", "stack_trace"), ("inner", "token_norm")))
    assert inside in ids, ids
    assert ("fault.not_implemented", (("function", "stack_trace"),)) not in ids


def test_a_failing_function_is_blamed_only_where_the_tested_function_calls_it(tmp_path):
    # layernorm uses the unbiased variance; op_counts divides by zero. op_counts calls no norm,
    # so its failures must not point at layernorm; shift_response calls layernorm, so its may.
    unbiased = "np.var(xf, axis=-1, ddof=1, keepdims=True)"
    sub = patched(tmp_path / "sub", "layernorm", "np.mean(xc * xc, axis=-1, keepdims=True)", unbiased)
    compare = sub / "compare.py"
    compare.write_text(compare.read_text().replace("def op_counts(C):\n", "def op_counts(C):\n    1 / 0\n", 1))
    report = grade(sub, Options(select="compare or layernorm"))
    blamed = {
        r.name: {m.params["function"] for m in r.messages if m.id == "check.uses_failing"} for r in failing(report)
    }
    op_counts = [name for name in blamed if "op_count" in name or "count" in name]
    assert op_counts and all(not blamed[name] for name in op_counts), blamed
    assert any("layernorm" in functions for functions in blamed.values()), blamed


def test_the_calls_table_is_what_the_reference_calls():
    # course.CALLS says which graded functions a function calls; the feedback blames them when it
    # fails, and the budget's reserve stops it with them. Read it off the reference: names a
    # function (or a private helper of its module) uses that are graded functions, not its
    # parameters or locals. Trial 57: the table held calls into other exercises only, so a
    # stack_forward failing with the student's attention_stub got no "may come from" line.
    import ast

    from grader.course import CALLS, MODULE_OF

    found: dict[str, tuple[str, ...]] = {}
    for module in MODULES:
        tree = ast.parse((course.solutions_dir() / f"{module}.py").read_text())
        functions = {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)}

        def called(name, seen, module=module, functions=functions):
            node = functions[name]
            own = {a.arg for a in (*node.args.args, *node.args.kwonlyargs)}
            own |= {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
            out = set()
            for used in {n.id for n in ast.walk(node) if isinstance(n, ast.Name)} - own:
                if used in MODULE_OF:
                    out.add(used)
                elif used in functions and used not in seen:
                    out |= called(used, seen | {used})
            return out

        for name in functions:
            if MODULE_OF.get(name) == module and (calls := called(name, {name})):
                found[name] = tuple(sorted(calls))
    assert found == {name: tuple(sorted(calls)) for name, calls in CALLS.items()}


def test_a_check_without_the_grading_environment_says_how_to_get_it():
    """Without own-environment, imports can differ from grading's: the report says the one
    command that fixes it, not only which layer is missing."""
    import dataclasses

    from grader.report.reporters import to_text

    report = grade(course.exercises_dir(), Options(suites=("public",), select="rmsnorm"))
    without = dataclasses.replace(report, missing_layers=("own-environment",))
    assert "normlab environment" in to_text(without) and "normlab environment" in to_text(without, "pt-BR")
    assert "normlab environment" not in to_text(dataclasses.replace(report, missing_layers=()))


def test_a_typo_is_not_blamed_on_an_unrelated_failed_cell(tmp_path):
    """A NameError for a name no failed cell would have bound is the function's own mistake:
    no hint about failed cells. One for a name a failed cell binds keeps the hint."""
    source = (course.solutions_dir() / "rmsnorm.py").read_text()
    typo = source.replace("rstd = 1.0 / np.sqrt(ms + eps)", "rstd = 1.0 / np.sqrt(ms + epsilon)")
    assert typo != source
    cells = [
        nbformat.v4.new_code_cell("import numpy as np\nSCRATCH = 1\nraise RuntimeError('a scratch check')"),
        nbformat.v4.new_code_cell(typo),
    ]
    path = tmp_path / "lab.ipynb"
    path.write_text(_notebook(cells))
    report = grade(path, Options(suites=("public",), select="rmsnorm and not backward"))
    ids = {m.id for r in report.results for m in r.messages}
    assert report.score == 0 and "hint.failed_cell_name" not in ids, ids
    # SCALE comes after the raise: that cell would have bound it, so the hint points there.
    late = nbformat.v4.new_code_cell("import numpy as np\nraise RuntimeError('a scratch check')\nSCALE = 1")
    path.write_text(_notebook([late, nbformat.v4.new_code_cell(typo.replace("ms + epsilon", "ms + eps * SCALE"))]))
    report = grade(path, Options(suites=("public",), select="rmsnorm and not backward"))
    assert "hint.failed_cell_name" in {m.id for r in report.results for m in r.messages}


def test_a_syntax_error_in_a_one_file_submission_names_the_students_file(tmp_path):
    path = tmp_path / "mywork.py"
    path.write_text((course.solutions_dir() / "rmsnorm.py").read_text() + "\ndef broken(:\n    pass\n")
    report = grade(path, Options(suites=("public",), select="rmsnorm_small"))
    texts = [str(m.params) for r in report.results for m in r.messages]
    assert any("mywork.py, line" in t for t in texts) and not any("submission.py" in t for t in texts), texts


def test_a_block_without_its_norm_earns_no_property_points(tmp_path):
    """``x + sublayer(x)`` ignores gamma and eps: a diagnosed mistake, but one that consists of
    ignoring arguments, so "x is not modified" and the like earn it nothing (decision 1; a red
    team collected 3 hidden points with it)."""
    sub = copy_solutions(tmp_path / "sub")
    source = (sub / "residual.py").read_text()
    for right in (
        "x + sublayer(rmsnorm(x, gamma, eps)).astype(x.dtype)",
        "rmsnorm(x + sublayer(x).astype(x.dtype), gamma, eps)",
    ):
        assert right in source
        source = source.replace(right, "x + sublayer(x).astype(x.dtype)")
    (sub / "residual.py").write_text(source)
    report = grade(sub, Options(suites=("hidden",), select="residual"))
    residual = [r for r in report.results if r.exercise == "residual"]
    assert residual and sum(r.score for r in residual) == 0, [(r.name, r.score) for r in residual if r.score]


def test_a_misspelled_function_name_is_named_beside_the_one_the_tests_call(tmp_path):
    """Student trial: a notebook defining rmsnrom was told only "rmsnorm is not defined", for a
    function the student did write. The close name is said once, in a note read from the code."""
    from grader.submission import misspelled, prepare

    sub = copy_solutions(tmp_path / "sub")
    path = sub / "rmsnorm.py"
    path.write_text(path.read_text().replace("def rmsnorm(", "def rms_norm(", 1))
    (sub / "gradient_path.py").unlink()  # its sublayer is missing: the stack's _sublayers is no misspelling
    notes = [n for n in grade(sub, Options(suites=("public",))).notes if n.id == "submission.misspelled"]
    assert [n.params for n in notes] == [{"function": "rmsnorm", "defined": "rms_norm"}]
    prepared = prepare(course.solutions_dir())
    try:
        assert misspelled(prepared) == []  # every graded name defined: nothing to say
    finally:
        prepared.cleanup()


def test_code_of_millions_of_names_is_not_searched_for_misspellings(tmp_path):
    """Trial 51: a notebook of 30 MB of ``x1 = 1`` lines (2.3 million names) and no graded
    function held the grader past two minutes (a 2 MiB module of them, for seconds): each
    missing function was compared with every name. Past a lab's few hundred there is nothing to say."""
    from grader.submission import misspelled, prepare

    lines = [f"n{i:07d} = 1\n" for i in range(1_200_000)]
    cells = [nbformat.v4.new_code_cell("".join(lines[i : i + 5_000])) for i in range(0, len(lines), 5_000)]
    cells.append(nbformat.v4.new_code_cell("def rms_norm(x):\n    return x\n"))
    path = tmp_path / "lab.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=cells), path)
    prepared = prepare(path)
    try:
        assert ends_within(30, lambda: misspelled(prepared))
        assert misspelled(prepared) == []
    finally:
        prepared.cleanup()


def test_a_cell_that_defines_a_function_and_then_runs_too_long_keeps_the_function(tmp_path, monkeypatch):
    """Trial 38: a cell defining a correct function and then running a long experiment lost the
    function (the worker was killed at the cell's limit and the cell skipped, 280 where Jupyter
    gives 286). Interrupted inside the sandbox as Jupyter's Interrupt would, the cell keeps what
    it defined; one that ignores the interrupt is still killed and skipped."""
    source = (course.solutions_dir() / "rmsnorm.py").read_text()
    experiment = "\nimport time\nwhile True:\n    time.sleep(0.05)\n"
    stubborn = "import signal\nsignal.signal(signal.SIGALRM, signal.SIG_IGN)\nwhile True:\n    pass\n"
    nb = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell(source + experiment), nbformat.v4.new_code_cell(stubborn)]
    )
    path = tmp_path / "long_experiment.ipynb"
    nbformat.write(nb, str(path))
    monkeypatch.setattr(limits_module, "CELL_FLOOR_SECONDS", 1.0)  # seconds, not tens of them
    tight = current_settings().replace(limits=Limits(call_seconds=1.0))
    report = grade(path, Options(suites=("public",), settings=tight, select="rmsnorm"))
    rms = [r for r in report.results if r.exercise == "rmsnorm"]
    assert rms and all(r.status is Status.PASSED for r in rms), [(r.name, r.status) for r in rms]
    notes = {note.id: note for note in report.notes}
    assert notes["submission.cell_stopped"].params["seconds"] == 1.0
    assert notes["submission.cell_stopped"].params["cell"] == 1 and "submission.cell_timeout" in notes
    assert notes["submission.cell_timeout"].params["cell"] == 2


def test_a_constant_equal_to_the_public_answer_fails_the_public_check_in_a_final_grading(tmp_path):
    # token_norm's public answer is a mean over tokens: reversing the tokens leaves it as it
    # is, so a function returning that constant passed its twin (trial 57).
    sub = patched(tmp_path / "sub", "stack", "def token_norm(v):\n", "def token_norm(v):\n    return 5.0\n")
    report = grade(sub)
    public = next(r for r in report.results if r.name == "stack/public/test_token_norm_small_example")
    assert public.status is Status.FAILED
    assert [m.id for m in public.messages] == ["check.public_twin_scaled"]


def test_print_output_cut_for_the_report_says_so_and_ends_at_a_line(tmp_path):
    # Trial 57: a debug loop's output was cut mid-number ("debug 141 -6.32825806") with nothing
    # to say that more had been printed.
    sub = patched(
        tmp_path / "sub",
        "rmsnorm",
        "    xf = x.astype(np.float32) if x.dtype == np.float16 else x",
        "    for i in range(2000):\n        print('debug', i, -6.328258061234)\n"
        "    xf = x.astype(np.float32) if x.dtype == np.float16 else x",
    )
    report = grade(sub, Options(suites=("public",)))
    result = next(r for r in report.results if r.name == "rmsnorm/public/test_rmsnorm_small_example")
    assert result.status is Status.PASSED
    assert [m.id for m in result.messages] == ["report.output_cut"]
    assert result.student_output.endswith("-6.328258061234\n") and len(result.student_output) <= 4000


def test_a_forgotten_return_is_named_as_one(tmp_path):
    # Trial 57: "postnorm_block(x, f, gamma) should return a numpy.ndarray, but returned NoneType",
    # without asking whether a return statement was missing.
    sub = patched(tmp_path / "sub", "residual", "    return rmsnorm(x + sublayer", "    rmsnorm(x + sublayer")
    report = grade(sub, Options(suites=("public",)))
    lost = [r for r in failing(report) if "postnorm" in r.name]
    assert lost and all("hint.returned_none" in {m.id for m in r.messages} for r in lost), lost
    shown = reporters.to_text(report, "en")
    assert "should be a numpy.ndarray, not NoneType" in shown and "without a return statement" in shown


def test_a_hang_in_rmsnorm_does_not_cost_the_exercises_that_never_call_it(tmp_path):
    # Trial 58: an infinite loop in rmsnorm alone scored 32/286. Its timeouts, and those of the
    # functions calling it, spent the submission's budget, and every test after that scored 0:
    # inspect_config (44 points) and layernorm never call rmsnorm. They run on a reserve now.
    sub = patched(
        tmp_path / "sub",
        "rmsnorm",
        "    ms = np.mean(xf * xf",
        "    while True:\n        pass\n    ms = np.mean(xf * xf",
    )
    tight = current_settings().replace(limits=Limits(call_seconds=0.5, submission_seconds=3.0))
    report = grade(sub, Options(suites=("public", "hidden"), settings=tight))
    by_exercise = {
        e: [r for r in report.results if r.exercise == e] for e in ("rmsnorm", "layernorm", "inspect_config")
    }
    assert all(r.status is Status.PASSED for e in ("layernorm", "inspect_config") for r in by_exercise[e])
    assert any(r.status is Status.TIMEOUT for r in by_exercise["rmsnorm"])
    assert "fault.budget_spent" in message_ids(report)  # the functions that call rmsnorm still stop
    # Trial 57: "rmsnorm did not finish within 10 s" named no line, where a raised exception
    # shows the student's traceback. The worker now interrupts the call at its limit, as
    # Jupyter's Interrupt does, and says where it was: on public tests only (which line runs
    # longest is the student's code's choice, so it could tell a hidden input).
    timed_out = [r for r in by_exercise["rmsnorm"] if r.status is Status.TIMEOUT]
    where: dict[str, list[str]] = {"public": [], "hidden": []}
    for r in timed_out:
        where[r.visibility.value] += [m.params["traceback"] for m in r.messages if m.id == "fault.timeout_where"]
    assert where["public"] and all("while True:" in text for text in where["public"]), where
    assert 'File "rmsnorm.py", line' in where["public"][0]
    assert where["hidden"] == [] and any(r.visibility.value == "hidden" for r in timed_out)


def test_a_function_that_swallows_the_interrupt_still_times_out(tmp_path):
    # The worker's interrupt is a courtesy: code that catches it runs on, and the trusted side
    # kills the worker at the limit as it always did.
    sub = patched(
        tmp_path / "sub",
        "rmsnorm",
        "    ms = np.mean(xf * xf",
        "    try:\n        while True:\n            pass\n    except BaseException:\n        while True:\n"
        "            pass\n    ms = np.mean(xf * xf",
    )
    tight = current_settings().replace(limits=Limits(call_seconds=0.5, submission_seconds=3.0))
    report = grade(sub, Options(suites=("public",), settings=tight))
    result = next(r for r in report.results if r.name == "rmsnorm/public/test_rmsnorm_small_example")
    assert result.status is Status.TIMEOUT
    assert "fault.timeout" in {m.id for m in result.messages}
    assert "fault.timeout_where" not in {m.id for m in result.messages}


def _graded_with(tmp_path, module, old, new):
    """The reference with one change in ``module``, graded by the public and hidden suites."""
    return grade(patched(tmp_path / "sub", module, old, new), Options(suites=("public", "hidden")))


def test_a_none_inside_a_returned_report_is_not_taken_for_a_forgotten_return(tmp_path):
    """Trial 65: a report whose eps_source was None was told "does the function end without a
    return statement?" although the function had returned its report."""
    old, new = "eps, eps_source = float(cfg[eps_key]), eps_key", "eps, eps_source = float(cfg[eps_key]), None"
    report = _graded_with(tmp_path, "inspect_config", old, new)
    lost = [r for r in failing(report) if r.name.startswith("inspect_config/")]
    shown = [m.id for r in lost for m in r.messages]
    assert "hint.part_none" in shown and "hint.returned_none" not in shown, shown


def test_a_reduction_without_keepdims_that_breaks_broadcasting_is_hinted(tmp_path):
    """Trial 65: rmsnorm's mean without keepdims=True raised numpy's "operands could not be
    broadcast together" with no word on the classic cause. The hint is public-only: it reads the
    exception's text, which a hidden test never shows."""
    old = "    ms = np.mean(xf * xf, axis=-1, keepdims=True)  # (..., 1)"
    report = _graded_with(tmp_path, "rmsnorm", old, "    ms = np.mean(xf * xf, axis=-1)")

    def ids(result):
        return {m.id for m in result.messages}

    def broadcast_error(result):
        return any("could not be broadcast" in str(m.params) for m in result.messages)

    public = [r for r in failing(report) if r.visibility is Visibility.PUBLIC and broadcast_error(r)]
    assert public and all("hint.broadcast_lost_axis" in ids(r) for r in public), public
    hidden = [r for r in failing(report) if r.visibility is Visibility.HIDDEN]
    assert hidden and not any("hint.broadcast_lost_axis" in ids(r) for r in hidden)


def test_a_public_check_of_a_dict_names_every_wrong_entry_at_once(tmp_path):
    """Trial 65: op_counts with two wrong counts was told of one, and of the next only once
    that one was fixed."""
    sub = patched(
        tmp_path / "sub",
        "compare",
        '"rmsnorm": {"flops": rms_flops, "reductions": 1, "params": C},\n'
        '        "layernorm": {"flops": ln_flops, "reductions": 2, "params": 2 * C},',
        '"rmsnorm": {"flops": rms_flops + 1, "reductions": 1, "params": C},\n'
        '        "layernorm": {"flops": ln_flops, "reductions": 2, "params": C},',
    )
    report = grade(sub, Options(suites=("public",)))
    result = next(r for r in report.results if r.name == "compare/public/test_op_counts_for_a_small_width")
    said = " ".join(str(m.params.get("what", "")) for m in result.messages)
    assert '["rmsnorm"]["flops"]' in said and '["layernorm"]["params"]' in said, result.messages
