"""Reading a notebook on the trusted side: which cells run, as what Python, and the notes.

Nothing here runs student code: the cells are prepared for the worker, which runs them as
Jupyter does (``test_cells.py``).
"""

import json
import warnings

import pytest

from grader.notebook import CELL_CAP, NotebookUnreadable, outcome_notes, read


def _nb(*sources, cell_type="code", metadata=None):
    cells = [{"cell_type": cell_type, "source": s, "metadata": metadata or {}} for s in sources]
    return json.dumps({"cells": cells}).encode()


def ids(notes):
    return [n.id for n in notes]


def test_code_cells_run_in_order_with_their_numbers_among_all_cells():
    raw = json.dumps(
        {
            "cells": [
                {"cell_type": "markdown", "source": ["# Lab\n", "def not_code(): pass"]},
                {"cell_type": "code", "source": ["def f():\n", "    return 5\n"]},
                {"cell_type": "raw", "source": "x = 1"},
                {"cell_type": "code", "source": "print(f())"},
            ]
        }
    ).encode()
    notebook = read(raw)
    assert [(c.number, c.code) for c in notebook.cells] == [(2, "def f():\n    return 5\n"), (4, "print(f())")]
    assert notebook.cells[0].first_line == "def f():" and notebook.notes == []


def test_ipython_syntax_becomes_the_calls_a_kernel_makes():
    notebook = read(_nb("%%time\ndef f(x):\n    return x", "%matplotlib inline\nfiles = !ls\nimport numpy as np"))
    timed, magics = notebook.cells
    assert timed.code.startswith("get_ipython().run_cell_magic('time'")
    assert "get_ipython().run_line_magic('matplotlib', 'inline')" in magics.code and "import numpy" in magics.code
    assert ids(notebook.notes) == ["submission.cell_magic_removed"]
    assert notebook.notes[0].params == {"cell": 2, "first_line": "%matplotlib inline"}


def test_valid_python_is_run_as_written_whatever_ipython_would_do_with_it():
    # A '?' ending a docstring line is not a help request; IPython leaves such cells alone.
    from IPython.core.inputtransformer2 import TransformerManager

    from grader.notebook import python_of

    for source in ('def f():\n    """Which one vanishes?\n    """\n', "x = 5 % 2  # why?\n", 's = """\n!ls\n"""\n'):
        assert python_of(source) == source == TransformerManager().transform_cell(source)
    assert python_of("np.mean?\n") != "np.mean?\n"


def test_a_cell_of_magics_alone_is_not_said_to_have_run_the_rest():
    notebook = read(_nb("np.mean?", "%load_ext autoreload\n%autoreload 2\nfiles = !ls", "%pip install numpy\nx = 1"))
    assert ids(notebook.notes) == ["submission.cell_magic_only"] * 2 + ["submission.cell_magic_removed"]
    assert [n.params["cell"] for n in notebook.notes] == [c.number for c in notebook.cells]


def test_the_body_of_a_time_or_capture_cell_is_turned_into_python_too():
    """IPython transforms such a body when the magic runs it; the worker has no IPython."""
    import ast

    from grader.notebook import python_of

    for source in ("%%capture\n!pip install numpy", "%%time\n%%capture out\nx = 1\n%ls -l"):
        code = python_of(source)
        body = ast.parse(code).body[0].value.args[2].value
        while body.startswith("get_ipython().run_cell_magic"):  # a magic inside the magic
            body = ast.parse(body).body[0].value.args[2].value
        compile(body, "<body>", "exec")  # plain Python: no `!` or `%` left
        assert "get_ipython()." in body
    assert python_of("%%bash\necho hi") == "get_ipython().run_cell_magic('bash', '', 'echo hi\\n')\n"


@pytest.mark.parametrize(
    ("source", "note"),
    [
        ("%%bash\nrm -rf /", "submission.cell_other_language"),
        ("%%html\n<b>hi</b>", "submission.cell_other_language"),
        ("%%timeit\ndef f(x):\n    return x", "submission.cell_timeit"),
        # a trial's %%python cell read "UsageError: Cell magic %%python not found"; IPython runs
        # these in a process of their own
        ("%%python\ndef rmsnorm(x):\n    return x", "submission.cell_subprocess"),
        ("%%python3\nprint(1)", "submission.cell_subprocess"),
    ],
)
def test_cells_jupyter_would_not_run_as_python_are_skipped_with_a_note(source, note):
    notebook = read(_nb(source, "y = 2"))
    assert [c.number for c in notebook.cells] == [2]
    assert ids(notebook.notes) == [note]


def test_nbgrader_test_cells_never_run_as_the_students_code():
    marked = {"nbgrader": {"grade": True, "solution": False, "grade_id": "rmsnorm-hidden", "points": 29}}
    solution = {"nbgrader": {"grade": False, "solution": True, "grade_id": "rmsnorm-rmsnorm"}}
    raw = json.dumps(
        {
            "cells": [
                {"cell_type": "code", "source": "def rmsnorm(x): ...", "metadata": solution},
                {"cell_type": "code", "source": "assert True", "metadata": marked},
                # nbgrader metadata stripped (as some editors do): found by the release's text
                {"cell_type": "code", "source": "### BEGIN HIDDEN TESTS\nrun_hidden('rmsnorm', globals())"},
                {"cell_type": "code", "source": "# Public tests for rmsnorm: 4 point(s)\n_run_public([])"},
                # a pt-BR course's notebook, stripped the same way
                {"cell_type": "code", "source": "# Testes públicos de rmsnorm: 4 ponto(s)\n_run_public([])"},
                {
                    "cell_type": "code",
                    "source": "# Preparação dos testes públicos. Rode esta célula primeiro; não a edite.\n",
                },
            ]
        }
    ).encode()
    notebook = read(raw)
    assert [c.number for c in notebook.cells] == [1] and notebook.notes == []


def test_a_cell_too_long_to_be_a_lab_cell_is_not_read():
    notebook = read(_nb("x = 1\n" * (CELL_CAP // 6 + 1), "y = 2"))
    assert [c.number for c in notebook.cells] == [2] and ids(notebook.notes) == ["submission.cell_too_large"]


def test_malformed_cells_are_read_as_far_as_they_make_sense():
    raw = json.dumps(
        {
            "cells": [
                "not a cell",
                {"cell_type": "code", "source": 42, "metadata": ["a", "list"]},
                {"cell_type": "code", "source": ["a = ", "1"], "metadata": {"nbgrader": [1]}},
            ]
        }
    ).encode()
    assert [(c.number, c.code) for c in read(raw).cells] == [(2, "42"), (3, "a = 1")]


def test_notes_come_in_cell_order_after_those_about_the_whole_submission():
    from grader.messages import Message
    from grader.notebook import in_cell_order

    notes = [Message("a", {"cell": 3}), Message("b", {"cell": 1}), Message("c", {}), Message("d", {"cell": 1})]
    assert [n.id for n in in_cell_order(notes)] == ["c", "b", "d", "a"]


def test_a_byte_order_mark_before_the_json_is_read_past():
    raw = b"\xef\xbb\xbf" + json.dumps({"cells": [{"cell_type": "code", "source": "A = 1"}]}).encode()
    assert [c.code for c in read(raw).cells] == ["A = 1"]


@pytest.mark.parametrize("raw", [b"not json", b"[1, 2]", b'{"cells": 5}', b"\xff\xfe"])
def test_unreadable_notebooks_raise_with_a_message(raw):
    with pytest.raises(NotebookUnreadable) as info:
        read(raw)
    assert info.value.message.id.startswith("submission.notebook_")


def test_cell_outcomes_become_notes_and_what_does_not_fit_the_schema_is_ignored():
    cells = read(_nb("import pandas as pd", "def f(:", "1 / 0", "ok = 1", "while True: pass")).cells
    outcomes = [
        {"number": 1, "status": "raised", "builtin_type": "ModuleNotFoundError", "message": "No module named 'pandas'"},
        {"number": 2, "status": "syntax", "line": 1},
        {"number": 3, "status": "raised", "exc_type": "ZeroDivisionError", "message": "division by zero", "line": 1},
        {"number": 4, "status": "ok"},
        {"number": 99, "status": "raised"},  # not a cell that was sent: ignored
        "junk",
    ]
    notes = outcome_notes(cells, outcomes, {5: "timeout"}, ("numpy", "matplotlib"), 10.0)
    assert ids(notes) == [
        "submission.cell_timeout",
        "submission.cell_missing_package",
        "submission.cell_syntax_error",
        "submission.cell_failed",
    ]
    assert notes[1].params["package"] == "pandas" and notes[1].params["available"] == "numpy, matplotlib"
    assert outcome_notes(cells, {"not": "a list"}, {}, (), 1.0) == []


def test_an_exception_without_a_message_is_said_without_a_dangling_colon():
    from grader.messages import render

    cells = read(_nb("raise NotImplementedError()")).cells
    outcomes = [{"number": 1, "status": "raised", "exc_type": "NotImplementedError", "message": "", "line": 1}]
    notes = outcome_notes(cells, outcomes, {}, ("numpy",), 10.0)
    assert ids(notes) == ["submission.cell_failed_silent"]
    for lang in ("en", "pt-BR"):
        text = render(notes[0], lang)
        assert "NotImplementedError" in text and ": ." not in text and ":." not in text


def test_ipython_syntax_past_the_allowance_is_not_run_and_said_so():
    # IPython's transformer reads a whole cell again for each magic line: thousands cost the
    # grader minutes. A cell over the per-cell allowance, and cells past the notebook's, are
    # not run; ordinary magics are.
    from grader.notebook import MAX_CELL_IPYTHON_LINES, MAX_IPYTHON_LINES

    huge = read(_nb("x = !a\n" * 5000, "%matplotlib inline\ny = 1"))
    assert ids(huge.notes) == ["submission.cell_too_many_magics", "submission.cell_magic_removed"]
    assert [c.number for c in huge.cells] == [2]
    per_cell = MAX_CELL_IPYTHON_LINES
    many = read(_nb(*["%time x = 1\n" * per_cell + "y = 2\n"] * (MAX_IPYTHON_LINES // per_cell + 3)))
    run = len(many.cells)
    assert run == MAX_IPYTHON_LINES // per_cell
    assert ids(many.notes).count("submission.cell_too_many_magics") == 3
    assert read(_nb("\n" * 50_000 + "x = 1\n")).notes == []  # blank lines are no IPython syntax


def test_what_ipythons_transformer_reads_in_a_notebook_is_bounded_in_characters(monkeypatch):
    """Red team, round 5: one ``%lsmagic`` line over a 100 KB line cost a second of transformer
    time, well inside the line allowance; 60 such cells cost a minute of the grader's CPU before
    any sandbox. The characters the transformer reads (a cell once per IPython line in it) are
    bounded; cells past that are not run, and said."""
    from IPython.core.inputtransformer2 import TransformerManager

    from grader.notebook import MAX_TRANSFORMED_CHARS

    read_chars = []
    original = TransformerManager.transform_cell
    monkeypatch.setattr(
        TransformerManager, "transform_cell", lambda self, cell: read_chars.append(len(cell)) or original(self, cell)
    )
    heavy = "%lsmagic\nx = [" + "1, " * 33_000 + "1]\n"
    notebook = read(_nb(*[heavy] * 20, "y = 2"))
    assert sum(read_chars) <= MAX_TRANSFORMED_CHARS
    assert ids(notebook.notes).count("submission.cell_too_many_magics") == 20 - len(read_chars)
    assert notebook.cells[-1].code == "y = 2"


def _answers(code: str) -> dict:
    """The answers a notebook of one code cell gives."""
    from grader.verification import from_notebook

    return from_notebook(json.dumps({"cells": [{"cell_type": "code", "source": code}]}).encode()).values


def test_answers_are_read_from_a_cell_of_many_assignments_the_last_one_winning():
    code = "answers_q1 = {'a': 'c'}\n" + "answers_other = 1\n" * 3000 + "answers_q1 = {'a': 'b'}\n"
    assert _answers(code)["q1"] == {"a": "b"}


def test_answers_are_sized_in_the_units_ast_counts_whatever_the_line_breaks():
    from grader.verification import MAX_LITERAL_CHARS

    windows = "x = 'é' * 3\r\nanswers_q1 = {\r\n  'a': 'ç',\r\n  'b': 2.5,\r\n}\r\n"
    assert _answers(windows)["q1"] == {"a": "ç", "b": 2.5}
    feed = "answers_q2 = {'a': 'b'}\x0c\nanswers_q3 = {'a': 'c'}\n"  # a form feed is no line break to ast
    assert _answers(feed) == {"q2": {"a": "b"}, "q3": {"a": "c"}}
    too_long = "answers_q1 = {'a': '" + "é" * MAX_LITERAL_CHARS + "'}\n"
    assert "q1" not in _answers(too_long)


LINE_BY_LINE_CELLS = [
    "%matplotlib inline\nimport numpy as np\nx = np.ones(3)\n",
    "!pip install -q numpy\n!wget -q http://example.org/a.zip\n%load_ext autoreload\n%autoreload 2\n"
    "def f(x):\n    return x  # why?\n",
    "for i in range(2):\n    %time f(i)\n    y = !ls\n",
    "np.mean?\nx = 1\n",
    "s = '''\n%d items\nwhy?\n'''\n%time f()\n",  # lines of a string are the string's
    "s = '''\n%d items'''\n%time f()\n",  # a line that may end its string: the whole cell
    "x = (1,\n%time 2)\n",  # inside brackets: not a statement of its own
    "if True:\n\t%time f()\n",
    "%matplotlib inline\ndef f(x):  # why keepdims?\n    if x:  # ok?\n        return np.mean?\n    return x\n",
    "%time f()\nnp.mean??\nx = 1  # a?\n",
    # Found by differential fuzzing against IPython (red team 7):
    "!pip install numpy \\\npandas\nF1 = 6\n",  # a continued shell line
    "H0 = 1\n%%time\nH1 = 2\n",  # a cell magic after the first line is a line magic to IPython
    'x = "\u2028\u2028"\ns2 = """\n%d\n"""\nG1 = s2\n%time G2 = 1\n',  # not line breaks to Python
    "J0 = 1\n\x0c\n\x0c\ns3 = '''\n%d\n'''\n%time J1 = s3\n",
    "print('x =!')\r\n%time f()\r\n",
    "    B1 = 2\n    B2 = 3\n",  # pasted from a function's body: IPython dedents it
    # IPython's escapes at a line's start: help, autocall, quoting
    "?np.sqrt\ndef f(x):\n    ??x\n    return x\n",
    "/print 1\n,print a b\n;print a b\nx = [1\n  , 2]\n",
    "y = (1\n     / 2)\n%time z = 1\n",  # a continuation line is no escape
    "s = '''\n/print 1\n'''\n%time f()\n",
]


@pytest.mark.parametrize("source", LINE_BY_LINE_CELLS)
def test_ipython_lines_turned_one_by_one_are_what_ipython_makes_of_the_cell(source):
    """Each line of IPython syntax turned into Python alone gives IPython's own transform of the
    whole cell, or the cell goes to the whole-cell transformer."""
    from IPython.core.inputtransformer2 import TransformerManager

    from grader.notebook import _line_by_line, python_of

    spliced = _line_by_line(source)
    with warnings.catch_warnings():  # IPython warns of the lines it splits at \u2028
        warnings.simplefilter("ignore")
        ipython = TransformerManager().transform_cell(source)
        mine = python_of(source)
    assert spliced is None or _layout(spliced) == _layout(ipython)
    assert _layout(mine) == _layout(ipython)


PROMPTED_CELLS = [
    ">>> def f():\n...     return 2\n...\n>>> f()\n",
    "In [3]: def g():\n   ...:     return 3\n   ...: \n",
    "\n  >>> x = 1\n  >>> y = 2\n",
    "x = 1\n>>> y = 2\n",
    "s = '''\n>>> hi\n'''\n",  # valid Python: IPython may strip it all the same
    "def f():\n    '''\n    >>> f()\n    1\n    '''\n    return 1\n",
    "%%time\n>>> x = 1\n",
    "\xa0>>> x = 1\n\xa0>>> y = 2\n",  # pasted from a web page: a non-breaking space first
    "x = 1\r>>> y = 2\n",  # a lone CR is a line break to IPython
]


@pytest.mark.parametrize("source", PROMPTED_CELLS)
def test_a_cell_pasted_with_its_prompts_is_what_ipython_makes_of_it(source):
    """Prompts pasted from a Python or IPython session: IPython strips them (by rules that
    change between its versions), so the cell is IPython's to read, valid Python or not."""
    from IPython.core.inputtransformer2 import TransformerManager

    from grader.notebook import python_of

    assert _layout(python_of(source)) == _layout(TransformerManager().transform_cell(source))


def _layout(code):
    """The program, not its layout: IPython writes "\\n" line ends and drops leading blank lines."""
    return code.replace("\r\n", "\n").strip("\n")


def test_a_colab_header_over_the_whole_lab_runs():
    """Red team, round 6 (a regression of the character allowance): %%capture over !pip lines,
    %load_ext and %matplotlib, then the whole lab in one cell, was not run (0 points); so was
    %%time over the lab with comments ending in '?'."""
    from grader import course

    lab = "\n\n".join((course.solutions_dir() / f"{m}.py").read_text() for m in course.MODULES)
    header = (
        "!pip install -q numpy\n!pip install -q matplotlib\n%load_ext autoreload\n%autoreload 2\n%matplotlib inline\n"
    )
    questions = "".join(f"# por que isso {i}?\n" for i in range(8))
    lab = lab.replace("):\n", "):  # por quê?\n")  # headers ending in '?' are statements too
    notebook = read(_nb("%%capture\n" + header + lab, "%%time\n" + questions + lab, header + questions + lab))
    assert [c.number for c in notebook.cells] == [1, 2, 3]
    assert "submission.cell_too_many_magics" not in ids(notebook.notes)


def test_what_a_notebook_makes_the_grader_parse_is_bounded(monkeypatch):
    """Red team, round 6: every cell with a %, ! or ? line was parsed, whatever the notebook had
    cost already; 29 MB of such cells cost 88 s of the grader's CPU before any sandbox."""
    import ast

    from grader.notebook import MAX_EXAMINED_CHARS

    parsed = []
    original = ast.parse
    monkeypatch.setattr(ast, "parse", lambda source, *a, **k: parsed.append(len(source)) or original(source, *a, **k))
    heavy = "f(" + "a, " * 30_000 + "a)\n%ls\n"
    notebook = read(_nb(*[heavy] * 40, "y = 2"))
    assert sum(parsed) <= MAX_EXAMINED_CHARS
    assert notebook.cells[-1].code == "y = 2"


def test_a_long_line_of_ipython_help_syntax_is_not_read():
    """Red team 7: IPython reads a help line (``obj?``) in time that grows with its square: a
    30 KB one cost 38 s of the grader's CPU. A cell with such a line is not run, and said."""
    notebook = read(_nb("a" * 30_000 + " ?\n", "y = 2"))
    assert ids(notebook.notes) == ["submission.cell_too_many_magics"]
    assert [c.code for c in notebook.cells] == ["y = 2"]


def test_a_comment_that_only_mentions_the_test_cells_does_not_drop_a_cell():
    """Red team, round 8: a cell whose first line was "# Public tests for rmsnorm all pass on my
    machine" was skipped as a test cell (rmsnorm missing, -91, without a word); so would one with
    run_hidden( in a comment. A test cell is the release's first line or its hidden block."""
    mine = "# Public tests for rmsnorm all pass on my machine\ndef rmsnorm(x, gamma, eps=1e-6):\n    return x\n"
    quoted = "x = 1  # run_hidden(...) and score_answers(...)\ns = '### BEGIN HIDDEN TESTS'\n"
    notebook = read(_nb(mine, quoted))
    assert [c.number for c in notebook.cells] == [1, 2] and notebook.notes == []


def test_a_cell_dropped_as_a_test_cell_by_its_text_names_the_functions_it_defines():
    released = "# Public tests for rmsnorm: 4 point(s), one per test.\ndef test_small(student):\n    pass\n"
    edited = released + "\n\ndef rmsnorm(x, gamma, eps=1e-6):\n    return x\n"
    hidden = "# Hidden tests for stack: 26 point(s).\n### BEGIN HIDDEN TESTS\nrun_hidden('stack', globals())\n"
    notebook = read(_nb(released, edited, hidden))
    assert notebook.cells == [] and ids(notebook.notes) == ["submission.test_cell_skipped"]
    assert notebook.notes[0].params["cell"] == 2 and notebook.notes[0].params["functions"] == "rmsnorm"
    with_metadata = read(_nb(edited, metadata={"nbgrader": {"grade": True, "grade_id": "t", "solution": False}}))
    assert with_metadata.cells == [] and with_metadata.notes == []  # the release's own cell, as marked


def test_valid_python_with_a_doctest_is_read_once_whatever_its_comments():
    """Red team, round 9: the whole lab in one valid cell, with a doctest in a docstring and
    eight comments ending in '?', cost eight readings of 61 KB: past the allowance, the cell
    was not run (23/278). Valid Python with prompts is read once."""
    from grader import course
    from grader.notebook import Allowance, python_of

    lab = "\n\n".join((course.solutions_dir() / f"{m}.py").read_text() for m in course.MODULES)
    cell = lab.replace('"""', '"""\n    >>> rmsnorm(np.ones(2), np.ones(2))\n', 1)
    cell += "".join(f"# is keepdims needed here {i}?\n" for i in range(8))
    assert python_of(cell, allowance=Allowance()).count("def ") == lab.count("def ")


def test_a_solution_cell_is_the_students_whatever_its_first_line():
    """Red team, round 9: a solution cell (nbgrader metadata) whose first line was a pasted
    "# Public tests for rmsnorm: ..." was dropped without a word; metadata says whose it is."""
    source = "# Public tests for rmsnorm: my notes\ndef rmsnorm(x, gamma, eps=1e-6):\n    return x\n"
    solution = {"nbgrader": {"solution": True, "grade": False, "grade_id": "rmsnorm-solution"}}
    assert [c.number for c in read(_nb(source, metadata=solution)).cells] == [1]
    other = read(_nb(source, metadata={"nbgrader": {"grade_id": "mine"}}))
    assert other.cells == [] and ids(other.notes) == ["submission.test_cell_skipped"]


def test_a_stub_defined_after_an_implementation_is_named():
    """Trial 64: a scratch `def rmsnorm(...): raise NotImplementedError` in the last cell made
    the notebook end with the stub (163/287; nbgrader, whose test cell runs right below the
    implementation, gave 287), and the feedback only said rmsnorm was not implemented."""
    implemented = "import numpy as np\ndef rmsnorm(x, gamma, eps=1e-6):\n    return x * gamma\n"
    stub = 'def rmsnorm(x, gamma, eps=1e-6):\n    """scratch"""\n    raise NotImplementedError("scratch")\n'
    notes = [n for n in read(_nb(implemented, "x = 1", stub)).notes if n.id == "submission.stub_defined_last"]
    assert [n.params for n in notes] == [{"function": "rmsnorm", "cell": 3, "implemented": 1}]
    # Implemented last, or a stub never implemented: nothing to say.
    assert "submission.stub_defined_last" not in ids(read(_nb(stub, implemented)).notes)
    assert "submission.stub_defined_last" not in ids(read(_nb(stub, stub)).notes)
