"""A notebook downloaded as a ``.py`` file, graded as the notebook it came from.

Jupyter's "Executable Script", ``jupyter nbconvert --to script`` and Colab's "Download .py" keep
what only a notebook runs, at the start of a line: magics (``%matplotlib inline``), shell
commands (``!pip install ...``), or the ``get_ipython()`` calls some of them turn those into; and
a download of the released lab keeps its setup and test cells, which import the public checks.
Imported as a module, such a file fails at its first line of them, and every function scores 0.
Run as cells, the way Jupyter ran them, it is the student's notebook again: its cells are its
top-level statements, each with the comments just above it, so the release's test cells are
still known by their first line and left out as in any notebook.
"""

from __future__ import annotations

import ast
import json
import re

from grader.notebook import SETUP_MARKER

NOTEBOOK_LINE = re.compile(r"^(?:%|!|get_ipython\(\)\.)[^\r\n]*", re.MULTILINE)
"""A line only a notebook runs: a magic, a shell command, or the call a download made of one."""
RELEASE_CELL = re.compile(r"^# (?:Public|Hidden) tests for \w+: |^" + re.escape(SETUP_MARKER), re.MULTILINE)
"""The first line of the release's test cells and of their setup cell."""


def _text(data: bytes) -> str:
    return data.decode("utf-8-sig", "replace")


def _parses(text: str) -> bool:
    try:
        ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def is_notebook_script(data: bytes) -> bool:
    """Whether a ``.py`` file is a notebook's download rather than a module: it holds the
    release's cells, ``get_ipython()`` calls, or lines a notebook runs that plain Python cannot
    parse (found inside a string only, they are the module's own text)."""
    text = _text(data)
    if RELEASE_CELL.search(text) or "get_ipython()." in text:
        return True
    return NOTEBOOK_LINE.search(text) is not None and not _parses(text)


def as_notebook(data: bytes) -> bytes | None:
    """The notebook a script came from, as JSON: one code cell per top-level statement, with
    the comment lines right above it; the release's test machinery left out, as grading leaves
    out its test cells. None when it is no Python even without the lines only a notebook runs
    (its own syntax error is then the one to report)."""
    text = _text(data)
    try:
        tree = ast.parse(NOTEBOOK_LINE.sub("pass", text))  # line for line: the statements' lines stay
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    lines = text.splitlines(keepends=True)
    sources = []
    for node in tree.body:
        if _release_machinery(node):
            continue
        first = node.lineno - 1
        while first > 0 and lines[first - 1].lstrip().startswith("#"):
            first -= 1  # its comments; a comment block a blank line above is another cell's (or none)
        sources.append("".join(lines[first : node.end_lineno or node.lineno]))
    cells = [{"cell_type": "code", "metadata": {}, "outputs": [], "source": source} for source in sources]
    return json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}).encode()


def _release_machinery(node: ast.stmt) -> bool:
    """What the release's setup and public test cells define and call: the public test
    functions, the runner and its call, and the import of the public checks."""
    if isinstance(node, ast.FunctionDef):
        return node.name.startswith("test_") or node.name == "_run_public"
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
        return isinstance(node.value.func, ast.Name) and node.value.func.id == "_run_public"
    if isinstance(node, ast.Try):
        imported = {alias.name for n in ast.walk(node) if isinstance(n, ast.ImportFrom) for alias in n.names}
        return imported == {"run_public"}
    return False
