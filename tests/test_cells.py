"""The worker runs a notebook's cells as Jupyter does (``sandbox/inside/cells.py``), tested here
in-process on the cells the trusted side prepares."""

import json
import os

import pytest

from grader.notebook import read
from grader.sandbox.inside import cells


def run_all(*sources):
    """Run cells as prepared from a notebook; the namespace and each cell's outcome."""
    notebook = read(json.dumps({"cells": [{"cell_type": "code", "source": s} for s in sources]}).encode())
    module = cells.notebook_module("submission")
    outcomes = [cells.run({"number": c.number, "code": c.code}, module) for c in notebook.cells]
    return module.__dict__, outcomes


def test_a_cell_that_raises_keeps_what_it_bound_before_and_the_next_cell_runs():
    namespace, outcomes = run_all("import math\nA = 1\nraise ValueError('scratch')\nB = 2", "C = A + 1")
    assert namespace["A"] == 1 and "B" not in namespace and namespace["C"] == 2
    assert outcomes[0]["status"] == "raised" and outcomes[0]["line"] == 3 and outcomes[0]["exc_type"] == "ValueError"
    assert outcomes[1] == {"number": 2, "status": "ok"}


def test_a_top_level_import_of_a_missing_package_is_skipped_and_the_rest_of_the_cell_runs():
    namespace, outcomes = run_all(
        "from __future__ import annotations\n"
        "from normlab_absent.colab import drive\n"
        "drive.mount('/content/drive')\n"
        "import math, normlab_absent_two as two\n"
        "def f(x: NotDefinedAnywhere) -> float:\n"  # annotations stay postponed after the skip
        "    return math.sqrt(x)\n"
        "READY = not two.cuda.is_available()",
    )
    assert outcomes[0] == {"number": 1, "status": "imports_skipped", "absent": ["normlab_absent", "normlab_absent_two"]}
    assert namespace["f"](4.0) == 2.0 and namespace["READY"] is True
    assert "not installed" in repr(namespace["drive"]) and not namespace["two"]


def test_an_import_in_try_or_a_function_fails_as_written():
    namespace, outcomes = run_all(
        "try:\n    import normlab_absent\n    HERE = True\nexcept ImportError:\n    HERE = False",
        "def load():\n    import normlab_absent\nload()\nAFTER = 1",
    )
    assert namespace["HERE"] is False and outcomes[0]["status"] == "ok"
    assert outcomes[1]["status"] == "raised" and outcomes[1]["exc_type"] == "ModuleNotFoundError"
    assert "AFTER" not in namespace  # not a top-level import of the cell: it stops there, as in Jupyter


def test_a_cell_with_a_syntax_error_runs_not_at_all():
    namespace, outcomes = run_all("A = 1\ndef f(:\n    pass")
    assert "A" not in namespace and outcomes[0] == {"number": 1, "status": "syntax", "line": 2}


def test_a_cell_that_parses_but_does_not_compile_runs_statement_by_statement_as_ipython_does():
    """IPython compiles and runs a cell one top-level statement at a time (checked against
    InteractiveShell.run_cell): what comes before a stray ``return`` or ``break`` runs, and a
    ``from __future__`` import below the first line holds for what follows. Compiling the whole
    cell ran nothing of it: a function defined above a stray ``return`` was lost."""
    namespace, outcomes = run_all(
        "A = 1\ndef f():\n    return 1\nreturn 2\nB = 3",
        "P = 1\nbreak\nQ = 2",
        "X = 1\nfrom __future__ import annotations\ndef g(x: UndefinedName):\n    return x\nY = g(2)",
        "from normlab_absent import thing\nZ = 1\nreturn Z",
    )
    assert namespace["A"] == 1 and namespace["f"]() == 1 and "B" not in namespace
    assert outcomes[0]["status"] == "raised" and outcomes[0]["exc_type"] == "SyntaxError" and outcomes[0]["line"] == 4
    assert namespace["P"] == 1 and "Q" not in namespace and outcomes[1]["line"] == 2
    assert namespace["X"] == 1 and namespace["Y"] == 2 and outcomes[2] == {"number": 3, "status": "ok"}
    assert namespace["Z"] == 1 and not namespace["thing"] and outcomes[3]["exc_type"] == "SyntaxError"


def test_time_and_capture_run_their_body_in_the_notebook():
    namespace, outcomes = run_all("%%time\ndef f(x):\n    return 2 * x", "%%capture out\nprint('hi')\nG = f(2)")
    assert namespace["f"](3) == 6 and namespace["G"] == 4 and namespace["out"].stdout == "hi\n"
    assert [o["status"] for o in outcomes] == ["ok", "ok"]


def test_line_magics_and_shell_commands_do_nothing_but_time_runs_its_statement():
    namespace, outcomes = run_all("%matplotlib inline\n!pip install numpy\nfiles = !ls\n%time x = 3\ny = x + 1")
    assert namespace["files"] == [] and namespace["y"] == 4 and outcomes[0]["status"] == "ok"


def test_an_unknown_cell_magic_fails_its_cell_as_in_jupyter():
    _, outcomes = run_all("%%nosuchmagic\nx = 1")
    assert outcomes[0]["status"] == "raised" and outcomes[0]["exc_type"] == "UsageError"


def test_writefile_writes_a_module_a_later_cell_imports(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    namespace, outcomes = run_all(
        "%%writefile norms_util.py\ndef double(x):\n    return 2 * x\n", "from norms_util import double"
    )
    assert namespace["double"](4) == 8 and [o["status"] for o in outcomes] == ["ok", "ok"]
    assert os.path.exists(tmp_path / "norms_util.py")


def test_name_is_main_as_in_a_kernel_and_print_output_is_dropped(capsys):
    namespace, _ = run_all("if __name__ == '__main__':\n    RAN = True\n    print('demo')")
    assert namespace["RAN"] is True and capsys.readouterr().out == ""


@pytest.mark.parametrize("statement", ["raise SystemExit(3)", "raise KeyboardInterrupt"])
def test_exit_and_interrupt_end_their_cell_only(statement):
    namespace, outcomes = run_all(statement, "after = 1")
    assert outcomes[0]["status"] == "raised" and namespace["after"] == 1


def test_percent_run_runs_a_written_file_as_ipython_does(tmp_path, monkeypatch):
    """%%writefile then %run file.py (with arguments, and -i): the script runs as __main__ in a
    namespace whose names then join the notebook's, as in IPython."""
    monkeypatch.chdir(tmp_path)
    namespace, outcomes = run_all(
        "%%writefile helpers.py\nimport sys\ndef twice(x):\n    return 2 * x\nARGS = sys.argv[1:]\nNAME = __name__",
        "%run helpers.py one two",
        "Y = twice(21)",
        "%%writefile shared.py\nZ = BASE + 1",
        "BASE = 9\n%run -i shared.py",
    )
    assert [o["status"] for o in outcomes] == ["ok"] * 5
    assert namespace["Y"] == 42 and namespace["ARGS"] == ["one", "two"] and namespace["NAME"] == "__main__"
    assert namespace["Z"] == 10  # -i: the script sees the notebook's names


def test_time_and_run_magics_are_not_noted_as_not_run():
    notes = read(
        json.dumps({"cells": [{"cell_type": "code", "source": s} for s in ("%time A = 1", "%run x.py")]}).encode()
    ).notes
    assert not notes
    noted = read(json.dumps({"cells": [{"cell_type": "code", "source": "%pip install tqdm\nA = 1"}]}).encode()).notes
    assert [n.id for n in noted] == ["submission.cell_magic_removed"]


def test_cd_and_env_change_what_later_cells_see_as_in_ipython(tmp_path, monkeypatch):
    """A trial's correct notebook scored 162/286 (``%env`` then ``os.environ[...]``) and 242/286
    (``%cd configs`` ... ``%cd ..``) while Jupyter ran both without an error."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("NORMLAB_TRIAL_EPS", raising=False)
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "model.json").write_text('{"eps": 1e-05}')
    namespace, outcomes = run_all(
        "%env NORMLAB_TRIAL_EPS=1e-6",
        "import os, json\nEPS = float(os.environ['NORMLAB_TRIAL_EPS'])",
        "%cd configs\nwith open('model.json') as f:\n    CONFIG = json.load(f)\n%cd ..",
        "%cd -q no-such-folder\nHERE = os.getcwd()",
        "%env NORMLAB_TRIAL_OTHER 3\nOTHER = os.environ['NORMLAB_TRIAL_OTHER']",
    )
    assert [o["status"] for o in outcomes] == ["ok"] * 5
    assert namespace["EPS"] == 1e-6 and namespace["CONFIG"] == {"eps": 1e-05} and namespace["OTHER"] == "3"
    assert namespace["HERE"] == str(tmp_path)  # a folder that is not there is printed, not raised
    monkeypatch.delenv("NORMLAB_TRIAL_EPS", raising=False)
    monkeypatch.delenv("NORMLAB_TRIAL_OTHER", raising=False)
    _, outcomes = run_all("%env NORMLAB_TRIAL_NOT_SET")
    assert outcomes[0]["status"] == "raised" and outcomes[0]["exc_type"] == "UsageError"


def test_reset_f_and_xdel_remove_what_a_cell_defined_as_in_ipython():
    """``%reset -f`` and ``%xdel`` after the definitions: in Jupyter the functions are gone, so
    they must not be graded (a trial's notebooks kept 286/286)."""
    namespace, outcomes = run_all(
        "def rmsnorm(x):\n    return x\ndef layernorm(x):\n    return x\nKEPT = 1",
        "%xdel layernorm\n%xdel never_defined",
        "%reset\nASKED = 1",  # without -f IPython asks first: nothing is removed here
        "%reset -f\nAFTER = 2",
        "import math\nx = math.sqrt(4)",
    )
    assert [o["status"] for o in outcomes] == ["ok"] * 5
    assert "rmsnorm" not in namespace and "layernorm" not in namespace and "KEPT" not in namespace
    assert "ASKED" not in namespace and namespace["AFTER"] == 2 and namespace["x"] == 2.0
    assert callable(namespace["get_ipython"]) and namespace["__name__"] == "__main__"  # the kernel's own stay


def test_effect_magics_expand_the_line_and_read_options_as_ipython_does(tmp_path, monkeypatch):
    """Trial 46's near variants, each checked against a real kernel: ``$name`` and ``{expr}`` in
    the line, a folder with a space given without quotes, combined flags (``-sf``), ``%reset -f``
    of one history only or of the arrays, ``%xdel -n``, ``%xdel`` of a second name for an object,
    ``%reset_selective -f``."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("NORMLAB_TRIAL_DIR", raising=False)
    (tmp_path / "my configs").mkdir()
    (tmp_path / "configs").mkdir()
    namespace, outcomes = run_all(
        "import os\nfolder = 'configs'\n%cd $folder\nIN_DOLLAR = os.path.basename(os.getcwd())\n%cd ..",
        "%cd {folder}\nIN_BRACES = os.path.basename(os.getcwd())\n%cd -q ..",
        "%cd my configs\nIN_SPACED = os.path.basename(os.getcwd())\n%cd ..",
        "%env NORMLAB_TRIAL_DIR=$folder\nENV = os.environ['NORMLAB_TRIAL_DIR']",
        "import numpy as np\nW = np.ones(2)\ndef kept():\n    return 1\n%reset -f array\n%reset -f out",
        "def a():\n    return 1\nalias = a\n%xdel alias",
        "def b():\n    return 2\nsecond = b\n%xdel -n second",
        "def quantization_report():\n    return 3\n%reset_selective -f ^quantization_",
    )
    del os.environ["NORMLAB_TRIAL_DIR"]
    assert [o["status"] for o in outcomes] == ["ok"] * 8, outcomes
    assert (namespace["IN_DOLLAR"], namespace["IN_BRACES"], namespace["IN_SPACED"]) == (
        "configs",
        "configs",
        "my configs",
    )
    assert namespace["ENV"] == "configs" and os.getcwd() == str(tmp_path)
    assert "W" not in namespace and namespace["kept"]() == 1  # only the arrays went
    assert "a" not in namespace and "alias" not in namespace  # every name of the object
    assert namespace["b"]() == 2 and "second" not in namespace  # -n: that name only
    assert "quantization_report" not in namespace
    namespace, _ = run_all("def f():\n    return 1", "%reset -sf")
    assert "f" not in namespace


def test_shell_output_assigned_to_a_name_has_ipythons_list_attributes():
    namespace, outcomes = run_all("files = !ls configs\nLISTED = (files.n, files.s, files.l, files.p)\nDONE = 1")
    assert outcomes[0]["status"] == "ok" and namespace["DONE"] == 1 and namespace["LISTED"] == ("", "", [], [])


def test_effect_magics_are_not_noted_as_not_run():
    sources = ("%cd configs", "%env A=1", "%xdel A", "%reset -f")
    assert not read(json.dumps({"cells": [{"cell_type": "code", "source": s} for s in sources]}).encode()).notes


def test_the_output_history_holds_what_cells_ended_with():
    """IPython keeps the value a cell ends with in _ (then __, ___); None, a ';' or a statement
    ending the cell keeps nothing."""
    namespace, outcomes = run_all("3 * 7", "print('x')", "A = _ * 2", "[1, 2];", "'s'", "B = (_, __)")
    assert [o["status"] for o in outcomes] == ["ok"] * 6
    assert namespace["A"] == 42 and namespace["B"] == ("s", 21)


def test_what_a_missing_package_returned_can_be_indexed_and_used_as_a_context():
    """pandas or tqdm missing where grading runs: the rest of the cell runs as it did on the
    student's machine, even when it indexes or enters what they returned."""
    namespace, outcomes = run_all(
        "import normlab_absent_pd as pd\n"
        "df = pd.DataFrame({'a': [1]})\n"
        "df['b'] = df['a'] * 2\n"
        "with pd.option_context('x', 1) as ctx:\n"
        "    INSIDE = True\n"
        "AFTER = 1"
    )
    assert outcomes[0]["status"] == "imports_skipped" and namespace["INSIDE"] and namespace["AFTER"] == 1


def test_a_traceback_through_a_cell_shows_the_cells_line():
    _, outcomes = run_all("def f(x):\n    return x / zero_here\n", "f(1)")
    assert outcomes[1]["status"] == "raised"
    assert "return x / zero_here" in outcomes[1]["traceback"], outcomes[1]["traceback"]


def test_a_huge_exception_message_keeps_the_type_and_the_frames_in_the_traceback():
    """A trial raised a 100 kB message: the traceback's last 4000 characters were all message,
    so the student saw neither the exception's type nor the line it came from."""
    _, outcomes = run_all("def f():\n    raise RuntimeError('q' * 100_000)\n", "f()")
    shown = outcomes[1]["traceback"]
    assert len(shown) <= 4000 and "RuntimeError: qqq" in shown and "raise RuntimeError" in shown, shown[:300]
    assert "more characters]" in shown


def test_a_magic_run_by_a_function_after_the_cells_names_no_cell():
    """%time inside a function's body runs when a test calls it, after every cell ran: its
    traceback must not name the last cell (it quoted that cell's first line)."""
    namespace, _ = run_all("def f():\n    y = 2\n    %time z = y\n    return 1", "LAST = 'the last cell'")
    cells.cells_done(namespace)
    with pytest.raises(NameError) as info:
        namespace["f"]()
    frames = [frame.filename for frame in __import__("traceback").extract_tb(info.value.__traceback__)]
    assert "<cell 2>" not in frames and "<magic>" in frames


def test_top_level_await_is_told_apart_from_a_syntax_error():
    """Jupyter runs a cell with await at its top level; plain Python cannot: the note must not
    say the cell failed "as in Jupyter"."""
    from grader.notebook import outcome_notes

    _, outcomes = run_all("import asyncio\nawait asyncio.sleep(0)\nA = 1", "def f(:\n    pass")
    assert outcomes[0]["status"] == "syntax" and outcomes[0]["top_level_await"] is True
    assert "top_level_await" not in outcomes[1]
    notebook = read(
        json.dumps({"cells": [{"cell_type": "code", "source": s} for s in ("await x()", "def f(:")]}).encode()
    )
    notes = outcome_notes(notebook.cells, outcomes, {}, ("numpy",), 10.0)
    assert [n.id for n in notes] == ["submission.cell_top_level_await", "submission.cell_syntax_error"]


def test_a_cell_stops_at_its_top_level_statement_not_inside_a_function_it_defined():
    """Red team, round 9: an answers cell calling its own check() after each answer raised
    inside check (line 2): every answer of the cell was dropped, though the kernel set all but
    the last. The line is the cell's statement that raised, or a %%capture body's."""
    helper = "def check(ok):\n    assert ok\n"
    outcomes = run_all(
        helper + "A = 1\ncheck(True)\nB = 2\ncheck(False)\nC = 3\n",
        "%%capture\n" + helper + "D = 1\ncheck(False)\n",
        "%time check(False)\n",
    )[1]
    assert [o["line"] for o in outcomes] == [6, 4, 1]


def test_time_runs_its_statement_dedented_as_ipython_does():
    """Verification of red team 9: `%time  answers_q5 = {...}` (two spaces) failed with an
    IndentationError in grading, said to be "as in Jupyter"; IPython dedents what it times."""
    namespace, outcomes = run_all("%time  A = 1\nB = A + 1\n")
    assert namespace["B"] == 2 and outcomes == [{"number": 1, "status": "ok"}]


def test_annotations_are_evaluated_as_python_evaluates_them_in_a_kernel():
    """Trial 38: `def rmsnorm(x: Tensor, ...)` with Tensor defined nowhere scored full marks,
    where Jupyter's cell raises NameError and leaves rmsnorm undefined: the cells were compiled
    with the worker's own `from __future__ import annotations`. A future import in a cell holds
    for the cells after it, as IPython's compiler keeps it."""
    namespace, outcomes = run_all("def f(x: Tensor) -> float:\n    return x", "G = 1")
    assert "f" not in namespace and outcomes[0]["status"] == "raised" and outcomes[0]["exc_type"] == "NameError"
    assert namespace["G"] == 1
    namespace, outcomes = run_all(
        "from __future__ import annotations", "def f(x: Tensor) -> float:\n    return x", "%%time\ndef g(y: Y): pass"
    )
    assert namespace["f"](2) == 2 and callable(namespace["g"]) and [o["status"] for o in outcomes] == ["ok"] * 3


def test_a_cell_magic_below_the_first_line_stops_its_cell_as_in_jupyter():
    """Trial 38: `# time it` then `%%time` then `def rmsnorm`: IPython reads `%%time` there as a
    line magic named `%time`, which does not exist (UsageError), and the cell stops before the
    def; the grader ran the def and gave full marks. A blank line first is still a cell magic."""
    namespace, outcomes = run_all("# time my implementation\n%%time\ndef f(x):\n    return x", "\n%%time\nH = 2")
    assert "f" not in namespace and outcomes[0]["status"] == "raised" and outcomes[0]["exc_type"] == "UsageError"
    assert outcomes[0]["line"] == 2 and namespace["H"] == 2


def run_timed(seconds, *sources):
    """``run_all`` with each cell stopped after ``seconds``, as the worker runs them."""
    notebook = read(json.dumps({"cells": [{"cell_type": "code", "source": s} for s in sources]}).encode())
    module = cells.notebook_module("submission")
    outcomes = [cells.run({"number": c.number, "code": c.code}, module, seconds) for c in notebook.cells]
    return module.__dict__, outcomes


def test_a_cell_past_its_time_is_stopped_where_it_is_and_keeps_what_it_defined():
    """Trial 38: a cell that defines depth_rms and then runs a 14 s sweep lost depth_rms (the
    worker was killed at the cell's limit and the cell skipped); Jupyter keeps it. The cell is
    now stopped where it runs, as Jupyter's Interrupt stops it, inside a function it calls too."""
    import time

    began = time.monotonic()
    namespace, outcomes = run_timed(
        0.2,
        "def f(x):\n    return x\nimport time\nwhile True:\n    time.sleep(0.01)\nAFTER = 1",
        "def spin():\n    while True:\n        pass\nG = 1\nspin()",
        "%%time\nH = 2\nwhile True: pass",
        "DONE = f(3)",
    )
    assert time.monotonic() - began < 5
    assert [o["status"] for o in outcomes] == ["stopped", "stopped", "stopped", "ok"]
    assert [o.get("line") for o in outcomes[:3]] == [5, 5, 2]  # a %%time body counts from its first line
    assert namespace["f"](1) == 1 and "AFTER" not in namespace and namespace["G"] == 1 and namespace["H"] == 2
    assert namespace["DONE"] == 3
    import signal

    assert signal.getsignal(signal.SIGALRM) in (signal.SIG_DFL, signal.default_int_handler, None)
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
