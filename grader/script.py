"""A notebook downloaded as a ``.py`` file, made the module it is meant to be.

Jupyter's "Executable Script", ``jupyter nbconvert --to script`` and Colab's "Download .py" keep
what only a notebook runs: magics (``%matplotlib inline``) and shell commands (``!pip install``)
at the start of a line, or the ``get_ipython()`` calls some of them turn those into; and a
download of the released lab keeps its setup and test cells, which import the public checks.
Imported as it is, such a file stops at the first of them, and every function scores 0 (a
correct notebook's download scored 0/286). Here those lines and statements become ``pass`` and
blank lines (every other line keeps its number), and the rest is imported as any ``.py`` file
is: a statement that raises still stops the import, as in Python. Cell by cell, as Jupyter runs
it, is how the notebook itself is graded.
"""

from __future__ import annotations

import ast
import functools
import io
import json
import re
import tokenize

from grader.notebook import MAX_PARSED_CHARS, OverAllowance, inside_strings, magic_call, parsed, python_of

NOTEBOOK_LINE = re.compile(r"^[%!][^\r\n]*", re.MULTILINE)
"""A magic or a shell command, at the start of a line: no Python parses it."""
_NOTEBOOK_LINE_START = re.compile(r"(?:\A|[\r\n])[%!]")
"""Where such a line starts, with lines as :data:`_LINE` counts them."""
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")
"""A line as Python's parser counts them: a form feed or a U+2028 does not end one (it does
for ``str.splitlines``, and the statements to drop would be blanked a line off)."""


@functools.lru_cache(maxsize=4)  # the grading and the answers read the same file
def plain_module(data: bytes) -> str | None:
    """The module a notebook's download is, or None when ``data`` is no download (nothing in it
    is only a notebook's), is too large to be read as one (:func:`too_large_download`), or is
    no Python even without those lines (its own error is then the one to report)."""
    text = data.decode("utf-8-sig", "replace")
    if not _has_notebook_lines(text) or len(text) > MAX_PARSED_CHARS:
        return None  # a plain module (most files) is not parsed here; a larger one is imported as it is
    tree, magics = parsed(text), False
    if tree is None:
        found = _without_notebook_lines(text)
        if found is None:
            return None
        (text, tree), magics = found, True
    own_shell = any(_defines(node, "get_ipython") for node in tree.body)  # its calls are the module's own
    dropped = [node for node in tree.body if _release_machinery(node) or (not own_shell and _calls_shell(node))]
    if not dropped and not magics:
        return None
    lines = _LINE.findall(text)
    for node in dropped:
        first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))]) - 1
        last = node.end_lineno or node.lineno
        lines[first:last] = [(_magic_run(node) or "pass") + "\n"] + ["\n"] * (last - first - 1)
    return "".join(lines)


def _magic_run(node: ast.stmt) -> str | None:
    """The statement that runs a cell magic's body where the download has
    ``get_ipython().run_cell_magic('time', '', '<the cell>')``, for the magics whose body a
    kernel runs in the notebook's namespace (``%%time``, ``%%capture``, ``%%prun``): the body,
    made Python as its magic makes it, run by the worker's stand-in for ``get_ipython()``
    (``inside/cells.py``, ``DownloadShell``) on this same line. None for any other statement,
    or a body that is no Python even so."""
    from grader.sandbox.inside.cells import DOWNLOAD_SHELL, RUN_BODY  # as notebook.py: only where a magic is

    magic = magic_call(node, "cell")
    if magic is None or magic[0] not in RUN_BODY:
        return None
    name, line, body = magic
    try:
        code = python_of(body)  # the download keeps the body as typed: "!pip install" and all
    except OverAllowance:
        return None
    code = plain_module(code.encode("utf-8", "surrogatepass")) or code  # its own magics made pass
    if parsed(code) is None:
        return None
    return f"{DOWNLOAD_SHELL}.run_cell_magic({name!r}, {line!r}, {code!r})"


def cell_magic_functions(data: bytes) -> list[str]:
    """The functions a download defines only inside the body of a cell magic that does not run
    it in the notebook's namespace (``%%timeit``, ``%%writefile``...: in Jupyter too they are not
    defined by that cell). The body of ``%%time``, ``%%capture`` and ``%%prun`` runs
    (:func:`_magic_run`); before it did, a correct notebook's download scored 162/286 (trial 60)."""
    text = data.decode("utf-8-sig", "replace")
    if "run_cell_magic" not in text or len(text) > MAX_PARSED_CHARS:
        return []
    tree = parsed(text)
    if tree is None:  # magics at the start of lines too: read as the module leaves them
        blanked = _without_notebook_lines(text)
        tree = blanked[1] if blanked is not None else None
    names: list[str] = []
    for node in tree.body if tree is not None else []:
        body = _cell_magic_body(node) if _magic_run(node) is None else None
        cell = parsed(body) if body is not None else None
        names += [n.name for n in (cell.body if cell is not None else []) if isinstance(n, ast.FunctionDef)]
    return names


def _cell_magic_body(node: ast.stmt) -> str | None:
    """The body of ``get_ipython().run_cell_magic(name, line, body)``, a statement of its own."""
    call = node.value if isinstance(node, ast.Expr) else None
    if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Attribute) or len(call.args) != 3:
        return None
    if call.func.attr != "run_cell_magic" or not _calls_shell(node):
        return None
    body = call.args[2]
    return body.value if isinstance(body, ast.Constant) and isinstance(body.value, str) else None


def _has_notebook_lines(text: str) -> bool:
    """Whether ``text`` has anything only a notebook runs, or the release's machinery."""
    return bool(_NOTEBOOK_LINE_START.search(text)) or "get_ipython" in text or "_run_public" in text


def too_large_download(data: bytes) -> bool:
    """Whether ``data`` looks like a notebook's download but is too large to be read as one."""
    text = data.decode("utf-8-sig", "replace")
    return len(text) > MAX_PARSED_CHARS and _has_notebook_lines(text)


def _without_notebook_lines(text: str) -> tuple[str, ast.Module] | None:
    """``text`` with each line of a magic or a shell command made ``pass`` (line for line), and
    its tree; a line that continues a statement or a string is the statement's, as IPython
    reads tokens (``%d layers`` in a docstring). None when it is no Python even so."""
    lines = _LINE.findall(text)
    notebook_lines = [i for i, line in enumerate(lines) if NOTEBOOK_LINE.match(line)]
    starts = _statement_starts(lines)
    at_starts = [i for i in notebook_lines if i in starts]
    # If a magic's own text misleads the tokenizer (``%timeit f(x``), every such line goes.
    for marked in [at_starts] + ([notebook_lines] if at_starts != notebook_lines else []):
        found = _blanked(lines, marked)
        if found is not None:
            return found
    return None


def _blanked(lines: list[str], marked: list[int]) -> tuple[str, ast.Module] | None:
    placeholder = list(lines)
    for i in marked:
        placeholder[i] = "pass" + lines[i][len(lines[i].rstrip("\r\n")) :]
    tree = parsed("".join(placeholder))
    if tree is None:
        return None
    inside = set(marked) & inside_strings(tree)
    if inside:  # the string's own lines back; unless their quotes end it elsewhere
        kept = [lines[i] if i in inside else line for i, line in enumerate(placeholder)]
        kept_tree = parsed("".join(kept))
        if kept_tree is not None:
            return "".join(kept), kept_tree
    return "".join(placeholder), tree


def _statement_starts(lines: list[str]) -> set[int]:
    """The lines (from 0) a statement may start on, as IPython finds its escapes: not inside a
    string, brackets or after a backslash (``X = (7`` then ``%3)`` is Python). Read with
    Python's tokenizer, which goes on past a magic's ``!``; every line when it cannot read."""
    source = "".join(line.rstrip("\r\n") + "\n" for line in lines)  # rows as _LINE counts them
    starts, depth, fresh = set(), 0, True
    try:
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.type in (tokenize.NEWLINE, tokenize.NL):
                fresh = fresh or depth == 0
                continue
            if token.type in (tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER):
                continue
            if fresh:
                starts.add(token.start[0] - 1)
            fresh = False
            if token.type == tokenize.OP and token.string in "([{":
                depth += 1
            elif token.type == tokenize.OP and token.string in ")]}":
                depth = max(0, depth - 1)
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return set(range(len(lines)))
    return starts


def as_notebook(module: str) -> bytes:
    """``module`` as a one-cell notebook, to read the answers in it as a notebook's."""
    cell = {"cell_type": "code", "metadata": {}, "outputs": [], "source": module}
    return json.dumps({"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}).encode()


def _defines(node: ast.stmt, name: str) -> bool:
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return node.name == name
    if isinstance(node, ast.Import | ast.ImportFrom):
        return any((alias.asname or alias.name) == name for alias in node.names)
    return False


def _calls_shell(node: ast.stmt) -> bool:
    """A statement (not a definition) that calls ``get_ipython()``: a download's magic or
    shell command (``get_ipython().run_line_magic(...)``, ``files = get_ipython().getoutput(...)``)."""
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return False
    return any(
        isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "get_ipython" for n in ast.walk(node)
    )


def _release_machinery(node: ast.stmt) -> bool:
    """What the release's setup and public test cells define and call: the public test
    functions, the runner and its calls, and the import of the public checks."""
    if isinstance(node, ast.FunctionDef):
        return node.name.startswith("test_") or node.name == "_run_public"
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
        return isinstance(node.value.func, ast.Name) and node.value.func.id == "_run_public"
    if isinstance(node, ast.Try):
        imported = {alias.name for n in ast.walk(node) if isinstance(n, ast.ImportFrom) for alias in n.names}
        return imported == {"run_public"}
    return False
