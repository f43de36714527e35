"""A notebook downloaded as a .py file (Jupyter's "Executable Script", `jupyter nbconvert --to
script`, Colab's "Download .py") is graded as the notebook it came from: imported as a module
it failed at its first `%matplotlib inline` and scored 0."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from redteam_helpers import BIN, filled, make_course

from grader import script
from grader.notebook import MAX_PARSED_CHARS

pytestmark = pytest.mark.slow

HEADER = "%matplotlib inline\nimport matplotlib.pyplot as plt\n!pip install numpy\n"
PYTHON = {
    "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
    "language_info": {"name": "python", "file_extension": ".py"},
}


def _grade(path) -> dict:
    out = subprocess.run(
        [sys.executable, "-m", "grader", "grade", "--json", str(path)], capture_output=True, text=True, timeout=600
    )
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    return {"score": report["score"], "tests": {t["name"]: t["status"] for t in report["tests"]}}


@pytest.fixture(scope="module")
def downloaded(tmp_path_factory):
    """A solved notebook with a Colab-style first cell, and the .py jupyter nbconvert makes of it."""
    base = tmp_path_factory.mktemp("script")
    nb = filled(make_course(base))
    header = {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": HEADER}
    nb["cells"].insert(0, header)
    nb["metadata"] = {**nb.get("metadata", {}), **PYTHON}
    (base / "lab.ipynb").write_text(json.dumps(nb))
    return base, _nbconvert_script(base / "lab.ipynb").read_text()


def _nbconvert_script(notebook):
    """``jupyter nbconvert --to script`` of ``notebook``: the .py beside it."""
    out = subprocess.run(
        [BIN / "jupyter", "nbconvert", "--to", "script", "--output", notebook.stem, notebook.name],
        cwd=notebook.parent,
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr
    made = next(p for p in (notebook.with_suffix(".py"), notebook.with_suffix(".txt")) if p.exists())
    return made.rename(notebook.with_suffix(".py"))


def test_a_notebook_downloaded_as_py_is_graded_as_the_notebook(downloaded):
    base, text = downloaded
    assert "%matplotlib inline" in text or "get_ipython()" in text  # what the download keeps
    (base / "download.py").write_text(text)
    notebook, module = _grade(base / "lab.ipynb"), _grade(base / "download.py")
    assert notebook["score"] > 250 and module == notebook


def test_a_download_with_get_ipython_calls_is_graded_as_the_notebook_too(downloaded):
    """Colab's download and older nbconvert write the calls IPython makes of the magics."""
    base, text = downloaded
    calls = text.replace("%matplotlib inline", "get_ipython().run_line_magic('matplotlib', 'inline')")
    calls = calls.replace("!pip install numpy", "get_ipython().system('pip install numpy')")
    assert "get_ipython()" in calls
    (base / "calls.py").write_text(calls)
    assert _grade(base / "calls.py") == _grade(base / "lab.ipynb")


@pytest.mark.parametrize(
    "module",
    [
        b'"""Notes.\n%s is a format, not a magic\n!important\n"""\nimport numpy as np\n',
        b'"""In Jupyter, get_ipython().run_line_magic(...) runs a magic."""\nimport numpy as np\n',
        b"def get_ipython():\n    return None\n\nget_ipython()\n",  # its own shell, its own calls
    ],
)
def test_a_plain_module_is_not_taken_for_a_download(module):
    """Red team 37: a docstring that mentions get_ipython(), or a module with its own, was taken
    for a download."""
    assert script.plain_module(module) is None


def _no_parse(code):
    raise AssertionError(f"parsed {len(code)} characters")


def test_a_plain_module_is_not_parsed_to_tell_it_from_a_download(monkeypatch):
    """Trial 51: a 2 MiB module of one-name lines cost the grader 1.9 GB while it was parsed
    only to find it was no download. Without a notebook's lines nothing is parsed."""
    monkeypatch.setattr(script, "parsed", _no_parse)
    flood = b"a\n" * (1 << 20)
    assert script.plain_module(flood) is None and not script.too_large_download(flood)


@pytest.mark.parametrize("mark", [b"%matplotlib inline\n", b"x = 1\r!pip install numpy\n", b"get_ipython()\n"])
def test_a_download_past_its_cap_is_not_parsed_and_is_said(monkeypatch, mark):
    monkeypatch.setattr(script, "parsed", _no_parse)
    flood = mark + b"a\n" * (MAX_PARSED_CHARS // 2)
    assert script.plain_module(flood) is None and script.too_large_download(flood)


def test_a_whole_lab_download_is_well_within_the_cap(downloaded):
    _, text = downloaded
    assert len(text) * 2 < MAX_PARSED_CHARS and script.plain_module(text.encode()) is not None


def test_a_download_keeps_every_line_number_and_drops_what_only_a_notebook_runs():
    download = (
        b"%matplotlib inline\n"
        b"get_ipython().run_line_magic(\n    'time', 'x = 1')\n"  # red team 37: one call over two lines
        b"files = get_ipython().getoutput('ls')\n"
        b"def rmsnorm(x):\n    return x\n"
    )
    module = script.plain_module(download)
    assert module is not None and module.splitlines()[4:] == ["def rmsnorm(x):", "    return x"]
    assert "get_ipython" not in module and "%" not in module and len(module.splitlines()) == 6


def test_a_download_that_is_no_python_even_without_its_notebook_lines_keeps_its_own_error():
    broken = b"%matplotlib inline\ndef rmsnorm(x:\n    return x\n"
    assert script.plain_module(broken) is None


@pytest.mark.parametrize("breaker", ["# page\x0cbreak", "TITLE = 'residual stream\u2028notes'", "# \x1c\x1d\x1e\x85"])
def test_a_character_python_does_not_end_a_line_with_moves_no_line(breaker):
    """Red team 39: a form feed in a comment or a U+2028 in a string (both Python's parser reads
    as inside a line; str.splitlines ends a line there) shifted the blanking by a line: the
    `get_ipython()` call stayed, the import failed, and a correct download scored 0/286."""
    text = f"{breaker}\nget_ipython().run_line_magic('matplotlib', 'inline')\ndef f():\n    return 1\n"
    module = script.plain_module(text.encode())
    assert module is not None and "get_ipython" not in module
    namespace: dict = {}
    exec(compile(module, "download.py", "exec"), namespace)
    assert namespace["f"]() == 1 and module.count("\n") == text.count("\n")


def test_a_magic_looking_line_inside_a_string_is_the_strings():
    """Red team 39: with a real `%` line elsewhere, a line of a triple-quoted string starting
    with `%` or `!` became `pass`; IPython reads tokens, so it leaves a string's lines alone."""
    text = '%matplotlib inline\nTABLE = """\n!important: keep this line\n%d layers\n"""\nX = f"""\n%{1}\n"""\n'
    module = script.plain_module(text.encode())
    assert module is not None
    namespace: dict = {}
    exec(compile(module, "download.py", "exec"), namespace)
    assert namespace["TABLE"] == "\n!important: keep this line\n%d layers\n" and namespace["X"] == "\n%1\n"


@pytest.mark.parametrize(
    "continued",
    ['TEMPLATE = """\nheader\n%d layers"""', "X = (7\n%3)", "X = 7 \\\n%3", "X = [7,\n8][0] \\\n%3"],
)
def test_a_percent_or_bang_line_that_continues_a_statement_is_python(continued):
    """Trial 40: with a real magic elsewhere, a line starting with % or ! that closes a string,
    sits inside brackets or follows a backslash became `pass`; the rest no longer parsed and a
    correct download scored 0/286. IPython reads such a line as the Python it continues."""
    text = f"!pip install -q numpy\n%matplotlib inline\n{continued}\ndef f():\n    return 1\n"
    module = script.plain_module(text.encode())
    assert module is not None
    namespace: dict = {}
    exec(compile(module, "download.py", "exec"), namespace)
    assert namespace["f"]() == 1 and module.count("\n") == text.count("\n")
    assert namespace.get("X", 1) == 1
    if "TEMPLATE" in namespace:
        assert namespace["TEMPLATE"] == "\nheader\n%d layers"


def test_a_magic_whose_own_text_misleads_the_tokenizer_is_still_dropped():
    """A magic with an unbalanced bracket (``%timeit f(x``) reads to Python's tokenizer as an
    open bracket: the magics below it are still made ``pass``."""
    text = "%timeit f(x\nimport numpy as np\n%matplotlib inline\ndef f():\n    return 1\n"
    module = script.plain_module(text.encode())
    assert module is not None and "%" not in module


def _as_colab_downloads(cells: list[str]) -> str:
    """Code cells as Colab's "Download .py" (and nbconvert before 7) write them: each as
    IPython transforms it, a cell magic as one get_ipython().run_cell_magic(...) line."""
    from IPython.core.inputtransformer2 import TransformerManager

    return "\n\n".join(TransformerManager().transform_cell(cell) for cell in cells)


def test_a_notebook_with_time_cells_downloaded_as_colab_does_is_graded_as_the_notebook(tmp_path):
    """Trial 60: a correct notebook whose solution cells start with %%time scored 0 for those
    functions once downloaded from Colab ("rmsnorm is not defined"): the download holds each
    such cell as one get_ipython().run_cell_magic('time', '', '<cell>') line, which the grader
    dropped. Jupyter runs the cell; the download must grade as the notebook does. One cell also
    installs with !pip inside its %%time, one is a %%capture."""
    nb = filled(make_course(tmp_path))
    magics = iter(["%%time\n!pip install -q numpy\n", "%%capture out\n"])
    for cell in nb["cells"]:
        meta = cell["metadata"].get("nbgrader", {})
        if cell["cell_type"] == "code" and meta.get("solution") and "def " in "".join(cell["source"]):
            cell["source"] = next(magics, "%%time\n") + "".join(cell["source"])
    nb["metadata"] = {**nb.get("metadata", {}), **PYTHON}
    (tmp_path / "lab.ipynb").write_text(json.dumps(nb))
    colab = json.loads(json.dumps(nb))
    for cell in colab["cells"]:
        if cell["cell_type"] == "code":
            cell["source"] = _as_colab_downloads(["".join(cell["source"])])
    (tmp_path / "colab.ipynb").write_text(json.dumps(colab))
    download = _nbconvert_script(tmp_path / "colab.ipynb")
    assert download.read_text().count("get_ipython().run_cell_magic('time', ''") > 5
    notebook, module = _grade(tmp_path / "lab.ipynb"), _grade(download)
    assert notebook["score"] > 250 and module == notebook


def test_an_error_inside_a_downloaded_time_cell_names_its_line_of_the_file(tmp_path):
    """The body of a %%time cell runs on the download's one line that holds it: a traceback
    names that line of the student's file and shows it as the file has it."""
    cells = [
        "import numpy as np",
        "%%time\ndef rmsnorm(x, gamma, eps=1e-6):\n    return x / undefined_name\n",
    ]
    (tmp_path / "lab.py").write_text(_as_colab_downloads(cells))
    out = subprocess.run(
        [sys.executable, "-m", "grader", "check", str(tmp_path / "lab.py")], capture_output=True, text=True, timeout=600
    )
    assert 'File "lab.py", line 4, in rmsnorm' in out.stdout, out.stdout
    assert "get_ipython().run_cell_magic('time', '', 'def rmsnorm" in out.stdout
    assert "NameError" in out.stdout and "inside.cells" not in out.stdout


def test_functions_defined_only_inside_a_cell_magic_that_jupyter_does_not_run_are_named(tmp_path):
    """The body of %%time, %%capture and %%prun runs (above); what a %%timeit or %%writefile
    cell defines is not defined in Jupyter either: a note names the lab's functions left out."""
    from grader.submission import prepare

    cells = [
        "import numpy as np",
        "%%time\ndef rmsnorm(x, gamma, eps=1e-6):\n    return x\n",
        "%%timeit\ndef layernorm(x, gamma, beta, eps=1e-5):\n    return x\n\ndef my_helper():\n    pass\n",
        "%%writefile helper.py\ndef block(x, sublayer_fn, gamma, eps=1e-6):\n    return x\n",
    ]
    download = _as_colab_downloads(cells)
    (tmp_path / "lab.py").write_text(download)
    assert script.cell_magic_functions(download.encode()) == ["layernorm", "my_helper", "block"]
    notes = prepare(tmp_path / "lab.py").notes
    said = [n for n in notes if n.id == "submission.script_cell_magic"]
    assert said and said[0].params["functions"] == "layernorm, block", notes  # the lab's names only
