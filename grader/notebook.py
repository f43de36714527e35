"""Read a student's notebook as data: its cells, which of them run, and what to tell the student.

Nothing here runs the student's code, or trusts anything in the file. The worker runs the code
cells in order, in one namespace, each on its own (``sandbox/inside/cells.py``): a notebook is
graded as Jupyter runs it. Here each code cell is prepared for that:

* IPython syntax (magics, ``!`` commands, ``obj?``) is turned into plain Python by IPython's
  own input transformer, as a kernel does before it runs a cell;
* a cell in another language (``%%bash``, ``%%html``...) or under ``%%timeit`` (IPython runs it
  in a scope of its own: nothing it defines survives) is skipped with a note;
* nbgrader's own test cells, found by their metadata or by the test code the release writes
  into them, are never run as the student's code;
* a cell too long to be a cell of this lab is skipped with a note.

Cell ids, outputs, kernelspecs and every other piece of metadata are ignored, so deleting,
duplicating, reordering or retyping cells cannot break grading.
"""

from __future__ import annotations

import ast
import functools
import json
import re
from dataclasses import dataclass, field
from typing import Any

from grader.messages import Message
from grader.sandbox.inside.protocol import clean_text

MAX_NOTEBOOK_BYTES = 32 << 20
"""A notebook larger than this is not read. Stored outputs are most of a notebook's size: a
solved lab with a few dozen plots passed 8 MiB, and nbgrader grades it; its code alone is a
few hundred KiB."""
CELL_CAP = 100_000
"""Characters of one code cell that are read: no honest cell of this lab comes near it."""
MAX_PARSED_CHARS = 256 << 10
"""The most code the grader parses at once (a ``.py`` file read as a notebook's download, an
upload's candidate): a parse tree costs up to ~900 bytes a character of code (2 MiB of one-name
lines took 1.9 GB and 11 s of the grader's). The whole lab's code is about 80 KB."""
MAX_CELLS = 20_000
"""Cells of any kind that are read; no notebook of this lab comes near it."""
MAX_CODE_CELLS = 2000
"""Code cells run per notebook; a notebook with more is not one of this lab's."""

LANGUAGE_MAGICS = frozenset(
    {
        "bash",
        "sh",
        "script",
        "html",
        "javascript",
        "js",
        "latex",
        "markdown",
        "svg",
        "perl",
        "ruby",
        "system",
        "sx",
        "cmd",
        "powershell",
        "sql",
        "R",
    }
)
"""Cell magics whose body is not Python: Jupyter hands them to another program."""
SUBPROCESS_MAGICS = frozenset({"python", "python2", "python3", "pypy"})
"""Cell magics whose Python body IPython runs in a process of its own: nothing it defines
reaches the notebook."""
_TEST_CELL_START = re.compile(r"[ \t\r\n]*# (?:(?:Public|Hidden) tests for|Testes (?:públicos|ocultos) de) \w+: ")
_HIDDEN_BLOCK = re.compile(r"^[ \t]*### BEGIN HIDDEN TESTS[ \t]*\r?$", re.MULTILINE)
"""What the release writes into nbgrader's test cells, found even when a notebook's nbgrader
metadata was stripped (as some editors do): their first line, or the line opening a hidden
block. A student's comment that only mentions them ("# Public tests for rmsnorm pass") is not."""

SETUP_CELL = "setup"
SETUP_MARKERS = (
    "# Setup for the public tests. Run this cell first; do not edit it.",
    "# Preparação dos testes públicos. Rode esta célula primeiro; não a edite.",
)
"""The release's setup cell, by grade id or by its first line."""

_MAGIC_OR_HELP = r"^[ \t]*[%!]|\?[ \t]*$|=[ \t]*[%!]"
_ESCAPED = r"^[ \t]*[?/,;]"
"""IPython's other escapes at a line's start: ``?obj`` (help), ``/f x`` (``f(x)``), ``,f a b``
(``f("a b")``), ``;f a b`` (``f("a", "b")``); never valid Python there, outside brackets."""
_IPYTHON_LINE = re.compile(f"{_MAGIC_OR_HELP}|{_ESCAPED}", re.MULTILINE)
r"""A line IPython may read as its own syntax. Spaces and tabs only: ``\s`` spans newlines,
and a cell of blank lines made the search quadratic."""
_HELP_LINE_WHOLE = re.compile(rf"^.*(?:{_MAGIC_OR_HELP}).*$", re.MULTILINE)
_PROMPT = re.compile(r"\s*(?:>>>|\.{3,}:)|(?:(?:\[nav\]|\[ins\])? )?In \[\d+\]: ")
"""A pasted prompt (``>>> ``, ``In [3]: ``, ``...: ``): IPython may strip the prompts of every
line (its ``classic_prompt`` and ``ipython_prompt`` cleanups, whose rules change between
versions), so such a cell is read by IPython's own transformer, valid Python or not. Matched at
the start of each line as IPython splits them (``str.splitlines``), after any whitespace (a
non-breaking space pasted from a web page too)."""


def _prompted(source: str) -> bool:
    if ">>>" not in source and "...:" not in source and "In [" not in source:
        return False
    return any(_PROMPT.match(line) for line in source.splitlines())


_INDENTED_START = re.compile(r"(?:[ \t]*\r?\n)*[ \t]+\S")
MAX_IPYTHON_LINE_CHARS = 2000
"""The longest line of IPython syntax read: IPython's help syntax (``obj?``) reads a line in
time that grows with its square (a 30 KB line took 38 s); a cell with a longer one is not run."""
_IPYTHON_STATEMENT = re.compile(r"^[ \t]*[%!?/,;]|=[ \t]*[%!]")
"""A line of IPython syntax that is a statement of its own (a magic, a shell command)."""
MAX_IPYTHON_LINES = 400
"""Lines of IPython syntax a notebook may hold in all: IPython's transformer reads the whole cell
again for each one, so a cell of thousands cost minutes of the grader's time. Past this budget
a cell that needs the transformer is not run (no notebook of this lab needs that many)."""
MAX_CELL_IPYTHON_LINES = 60
"""The same in one cell (the cost grows with the square of a cell's count)."""
MAX_TRANSFORMED_CHARS = 300_000
"""Characters IPython's transformer may read in a whole cell, in all, a cell counted once per
line of IPython syntax in it: one ``%lsmagic`` over a 100 KB line cost a second, and a notebook
of such cells minutes of the grader's CPU before any sandbox. Most cells never get there: their
IPython lines are turned into Python one by one (:func:`_line_by_line`)."""
MAX_EXAMINED_CHARS = 1 << 20
"""Characters of cells with IPython-looking lines parsed in a notebook, to tell Python from
IPython syntax (three times for a cell turned line by line): a parse and a walk of its tree
cost up to ~9 µs a character, and a notebook may be 32 MiB."""


class OverAllowance(Exception):
    """Reading this cell's IPython syntax would pass the notebook's allowance: it is not run."""


@dataclass
class Allowance:
    """What reading a notebook's IPython syntax may still cost (see the limits above): one per
    notebook, or one for all the notebooks of an upload the work is chosen among."""

    lines: int = MAX_IPYTHON_LINES
    chars: int = MAX_TRANSFORMED_CHARS
    examined: int = MAX_EXAMINED_CHARS

    def examine(self, size: int) -> None:
        if size > self.examined:
            raise OverAllowance
        self.examined -= size

    def transform(self, lines: int, size: int) -> None:
        """``lines`` lines of IPython syntax read in a cell of ``size`` characters (``size``
        0: each line read alone)."""
        most = self.lines if size == 0 else min(MAX_CELL_IPYTHON_LINES, self.lines)  # 0: no square
        if lines > most or lines * size > self.chars:
            raise OverAllowance
        self.lines, self.chars = self.lines - lines, self.chars - lines * size


RUN_LINE_MAGICS = frozenset({"time", "run", "cd", "env", "xdel", "reset", "reset_selective"})
"""Line magics the worker runs (``%time stmt`` runs the statement, ``%run file.py`` the file;
``%cd``, ``%env``, ``%xdel``, ``%reset -f`` and ``%reset_selective -f`` do what IPython's do, see
``inside/magics.py``): a cell holding them gets no note that its magics were not run."""
_CELL_MAGIC = re.compile(r"\Aget_ipython\(\)\.run_cell_magic\('(\w+)'")
_LINE_MAGIC = re.compile(r"get_ipython\(\)\.(?:run_line_magic\('(\w+)'|system\(|getoutput\()")


@dataclass(frozen=True)
class Cell:
    """One cell of a student's notebook, whatever shape the file gave it."""

    number: int
    """Its position among all cells, from 1."""
    kind: str
    """``code``, ``markdown``, ``raw``, or ``other`` for anything unexpected."""
    source: str
    nbgrader: dict[str, Any]
    """The cell's nbgrader metadata when it is a mapping, else empty."""

    @functools.cached_property
    def first_line(self) -> str:
        """How a person finds the cell: its first line that is not blank, shortened. Worked out
        once per cell (notes and the worker's cells ask for it), and only its first 61
        characters are made printable: ``one_line`` keeps a text's length."""
        line = next((ln.strip() for ln in self.source.splitlines() if ln.strip()), "")[:61]
        line = one_line(line)
        return line if len(line) <= 60 else line[:57] + "..."


@dataclass(frozen=True)
class CodeCell:
    """A code cell the worker runs."""

    number: int
    first_line: str
    code: str
    """Plain Python: IPython syntax already turned into calls of ``get_ipython()``."""


@dataclass
class Notebook:
    """What a notebook gives the worker to run, and what reading it found."""

    cells: list[CodeCell]
    notes: list[Message] = field(default_factory=list)


class NotebookUnreadable(Exception):
    """The file is not a notebook we can read; carries the message for the student."""

    def __init__(self, message: Message) -> None:
        super().__init__(message.id)
        self.message = message


def cell_source(cell: dict[str, Any]) -> str:
    """A cell's source as one string (nbformat allows a string or a list of lines)."""
    src = cell.get("source", "")
    if isinstance(src, list):
        src = "".join(map(str, src))
    return str(src)


def first_line(node: ast.stmt) -> int:
    """The line a statement starts on, its decorators included."""
    decorators: list[ast.expr] = getattr(node, "decorator_list", [])
    return min([node.lineno] + [d.lineno for d in decorators])


def statement_text(lines: list[str], node: ast.stmt) -> str:
    """The source of one top-level statement, decorators included, from its module's lines."""
    return "\n".join(lines[first_line(node) - 1 : node.end_lineno])


def cells(nb: object) -> list[Cell]:
    """The cells of a parsed notebook. A malformed cell (metadata that is a list, a source that
    is a number) is read as far as it makes sense; nothing here raises on a student's file."""
    raw = nb.get("cells") if isinstance(nb, dict) else None
    out = []
    # Past MAX_CELLS, cells are not looked at: 900,000 empty cells cost seconds of grader CPU.
    for number, cell in enumerate(raw[:MAX_CELLS] if isinstance(raw, list) else [], start=1):
        if not isinstance(cell, dict):
            out.append(Cell(number, "other", "", {}))
            continue
        kind = cell.get("cell_type")
        metadata = cell.get("metadata")
        nbgrader = metadata.get("nbgrader") if isinstance(metadata, dict) else None
        nbgrader = nbgrader if isinstance(nbgrader, dict) else {}
        if kind in ("code", "raw") and _is_written_answer(nbgrader):
            kind = "markdown"  # its type changed by a key press ("y" in Jupyter): nbgrader restores it
        out.append(Cell(number, kind if kind in ("code", "markdown", "raw") else "other", cell_source(cell), nbgrader))
    return out


def _is_written_answer(nbgrader: dict[str, Any]) -> bool:
    """The metadata of a written answer's cell as the release makes it (``<question>-answer``,
    graded by hand): a markdown cell, whatever type the student's editor left it."""
    grade_id = nbgrader.get("grade_id")
    answer = isinstance(grade_id, str) and grade_id.endswith("-answer")
    return answer and nbgrader.get("solution") is True and nbgrader.get("grade") is True


def is_test_cell(cell: Cell) -> bool:
    """nbgrader's autograder test cells, and the release's setup cell for them (it imports the
    public checks, which a student's code never needs): never the student's code."""
    if cell.nbgrader.get("solution") is True:
        return False  # the student's own cell, whatever its first line says
    marked = cell.nbgrader.get("grade") is True
    setup = cell.nbgrader.get("grade_id") == SETUP_CELL or cell.source.lstrip().startswith(SETUP_MARKERS)
    released = _TEST_CELL_START.match(cell.source) or _HIDDEN_BLOCK.search(cell.source)
    return marked or setup or released is not None


_RELEASE_MODULES = frozenset({"grader", "normlab_public"})
"""What the release's setup cell imports the public checks from: never run for a student."""


def _test_cell_imports(cell: Cell) -> CodeCell | None:
    """A test cell's top-level imports, run where the cell stands: in Jupyter, and in nbgrader
    autograde, a public test cell's ``import numpy as np`` binds ``np`` for every later cell, so a
    notebook whose own imports cell was deleted passes there (trial 64: 242/287 here, 287 under
    nbgrader). The tests themselves never run."""
    tree = parsed(cell.source) if len(cell.source) <= CELL_CAP else None
    kept = [node for node in (tree.body if tree is not None else []) if _imported_packages(node) - _RELEASE_MODULES]
    if not kept:
        return None
    return CodeCell(cell.number, cell.first_line, "\n".join(ast.unparse(node) for node in kept) + "\n")


def _imported_packages(node: ast.stmt) -> set[str]:
    """The top-level packages an ``import`` statement imports (none for anything else, and for
    a relative import); one that also imports the public checks counts as those only."""
    if isinstance(node, ast.Import):
        packages = {alias.name.split(".")[0] for alias in node.names}
    elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
        packages = {node.module.split(".")[0]}
    else:
        return set()
    return packages if not packages & _RELEASE_MODULES else set(_RELEASE_MODULES)


_TOP_LEVEL_DEF = re.compile(r"^(?:async[ \t]+)?def[ \t]+(\w+)", re.MULTILINE)


def _test_cell_note(cell: Cell) -> list[Message]:
    """A note when a cell skipped as one of the release's test cells by its text alone (no
    nbgrader metadata says so) defines graded functions: they would be missing without a word."""
    from grader.course import MODULE_OF

    if cell.nbgrader.get("grade") is True or cell.nbgrader.get("grade_id") == SETUP_CELL:
        return []  # the release's own cell, as its metadata says
    graded = sorted({name for name in _TOP_LEVEL_DEF.findall(cell.source) if name in MODULE_OF})
    if not graded:
        return []
    place = {"cell": cell.number, "first_line": cell.first_line}
    return [Message("submission.test_cell_skipped", place | {"functions": ", ".join(graded)})]


MAGIC_NESTING = 8
"""Cell magics inside cell magics (``%%time`` over ``%%capture``) turned into Python; deeper
ones are left as IPython wrote them."""


def python_of(source: str, depth: int = 0, allowance: Allowance | None = None) -> str:
    """The cell as a kernel runs it: IPython syntax turned into plain Python. Raises
    :class:`OverAllowance` when that would cost more than what is left of ``allowance``."""
    allowance = Allowance() if allowance is None else allowance
    prompted = _prompted(source)
    if not prompted and not _IPYTHON_LINE.search(source) and not _INDENTED_START.match(source):
        return source  # an indented first line is IPython's to dedent (code pasted from a body)
    if any(len(line) > MAX_IPYTHON_LINE_CHARS for line in _HELP_LINE_WHOLE.findall(source)):
        raise OverAllowance  # IPython's help syntax reads a long line in quadratic time
    allowance.examine(len(source))
    valid = _is_python(source)
    if valid and not prompted:
        return source  # IPython runs valid Python as it is (a '?' in a docstring is not help)
    cell_magic = source.lstrip().startswith("%%")
    lines = 1 if valid else len(_IPYTHON_LINE.findall(source))  # valid Python: its prompts, read once
    if not cell_magic and not prompted:
        allowance.examine(2 * len(source))  # parsed again, and its strings' spans walked
        spliced = _line_by_line(source, allowance)
        if spliced is not None:
            return spliced
    # A cell magic is read once (its body is a string, read below if it runs as Python).
    allowance.transform(1 if cell_magic else max(lines, 1), len(source))
    try:
        code = str(_transformer().transform_cell(source))
    except Exception:  # what IPython cannot transform, a kernel cannot run: the cell will fail
        return source
    return _body_as_python(code, depth, allowance)


def _transformer() -> Any:
    from IPython.core.inputtransformer2 import TransformerManager  # only for cells that need it

    return TransformerManager()


def _line_by_line(source: str, allowance: Allowance | None = None) -> str | None:
    """The cell with each line of IPython syntax turned into Python alone, as IPython's
    transformer turns it within the cell, when those lines are whole statements (each can be
    replaced by ``pass`` and the cell parses, none inside a string spanning lines); None when
    they are not, for the whole-cell transformer. IPython reads the whole cell again for each
    such line: a Colab header over the whole lab cost it 0.4 s, and an attacker minutes."""
    if len(source.splitlines()) != source.count("\n") + (not source.endswith("\n")):
        return None  # a lone CR, a form feed, a \u2028: IPython and Python's parser split lines apart
    lines = source.splitlines(keepends=True)
    special = [i for i, line in enumerate(lines) if _IPYTHON_LINE.search(line)]
    # A line continued by "\\" (IPython joins it to the next), or a cell magic after the first
    # line (IPython reads it as a line magic): only the whole cell is read as IPython reads it.
    if any(line.rstrip("\r\n").endswith("\\") for line in lines) or any(
        lines[i].lstrip(" \t").startswith("%%") for i in special
    ):
        return None
    placeholder = list(lines)
    for i in special:
        if _IPYTHON_STATEMENT.search(lines[i]):
            placeholder[i] = _indent(lines[i]) + "pass\n"
        else:  # only a '?' at its end: help (``obj?``), or the end of a comment (``def f():  # why?``)
            placeholder[i] = lines[i].rstrip().rstrip("?") + "\n"
    try:
        tree = ast.parse("".join(placeholder))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    # A line inside a string that spans lines is the string's (IPython reads tokens): left as it
    # is, unless it was replaced by `pass` and its quotes may have ended the string.
    inside = set(special) & inside_strings(tree)
    replaced = [lines[i] for i in inside if _IPYTHON_STATEMENT.search(lines[i])]  # by `pass`
    if any("'" in line or '"' in line for line in replaced):
        return None
    # A comment ending in '?' is no help request: IPython leaves it, so it is not read at all.
    read = [i for i in special if i not in inside and (_IPYTHON_STATEMENT.search(lines[i]) or "#" not in lines[i])]
    (allowance or Allowance()).transform(len(read), 0)
    transformer = _transformer()
    for i in read:
        indent = _indent(lines[i])
        try:
            code = str(transformer.transform_cell(lines[i].lstrip(" \t")))
        except Exception:
            return None
        if code.count("\n") > 1:
            return None
        ending = lines[i][len(lines[i].rstrip("\r\n")) :]
        lines[i] = indent + code.rstrip("\r\n") + ending
    return "".join(lines)


def inside_strings(tree: ast.Module) -> set[int]:
    """The lines (counted from 0) that continue a string begun on an earlier line."""
    return {
        line - 1
        for node in ast.walk(tree)
        if isinstance(node, (ast.Constant, ast.JoinedStr)) and (node.end_lineno or node.lineno) > node.lineno
        for line in range(node.lineno + 1, (node.end_lineno or node.lineno) + 1)
    }


def one_line(text: str) -> str:
    """A student's text as one printable line in a note: a line break, an escape sequence or a
    bidi override would draw lines of its own (a fake "Total: 278/278") in a report."""
    if text.isprintable():  # nearly every line: nothing to replace
        return text
    return "".join(ch if ch.isprintable() else " " if ch.isspace() else "?" for ch in text)


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip(" \t"))]


def parsed(code: str) -> ast.Module | None:
    """``code``'s syntax tree; None when it is no Python (or too deep, or too large, to parse)."""
    try:
        return ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _is_python(source: str) -> bool:
    return parsed(source) is not None


def _body_as_python(code: str, depth: int, allowance: Allowance) -> str:
    """A ``%%time`` or ``%%capture`` cell with its body turned into Python too: IPython runs
    such a body through its own transformers when the magic runs it (``%%capture`` over
    ``!pip install ...`` is how Colab notebooks install quietly); the worker has no IPython."""
    from grader.sandbox.inside.cells import RUN_BODY  # the magics whose body the worker runs

    allowance.examine(len(code))
    magic = _cell_magic_call(code)
    if magic is None or magic[0] not in RUN_BODY or depth >= MAGIC_NESTING:
        return code
    name, line, body = magic
    return f"get_ipython().run_cell_magic({name!r}, {line!r}, {python_of(body, depth + 1, allowance)!r})\n"


def magic_call(node: ast.stmt, kind: str) -> list[str] | None:
    """The arguments of a statement that is one ``get_ipython().run_<kind>_magic(...)`` call
    with constant strings only (``kind``: "line" or "cell"), as IPython writes a magic."""
    call = node.value if isinstance(node, ast.Expr) else None
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)):
        return None
    if call.func.attr != f"run_{kind}_magic" or call.keywords:
        return None
    args = [a.value for a in call.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
    return args if len(args) == len(call.args) == (3 if kind == "cell" else 2) else None


def _cell_magic_call(code: str) -> tuple[str, str, str] | None:
    """(name, line, body) of a cell that is one ``get_ipython().run_cell_magic(...)`` call."""
    tree = parsed(code)
    if tree is None:
        return None
    args = magic_call(tree.body[0], "cell") if len(tree.body) == 1 else None
    return (args[0], args[1], args[2]) if args else None


def code_as_run(source: str, allowance: Allowance) -> str:
    """The Python a kernel runs for a cell: its IPython syntax turned into Python, and of a
    ``%%time`` or ``%%capture`` cell the body (run in the notebook's namespace, its lines
    counted from its own first, as the worker reports them). The source itself when reading it
    would pass the ``allowance``."""
    from grader.sandbox.inside.cells import RUN_BODY

    try:
        code = python_of(source, allowance=allowance)
    except OverAllowance:
        return source
    for _ in range(MAGIC_NESTING):
        magic = _cell_magic_call(code) if code.startswith("get_ipython().run_cell_magic(") else None
        if magic is None or magic[0] not in RUN_BODY:
            break
        code = magic[2]
    return code


def _prepare(cell: Cell, allowance: Allowance) -> tuple[CodeCell | None, list[Message]]:
    """The cell to run (None: skipped) and the notes about it; what IPython's transformer read
    in it is spent from the notebook's ``allowance``, whatever came of it."""
    place = {"cell": cell.number, "first_line": cell.first_line}
    if len(cell.source) > CELL_CAP:
        return None, [Message("submission.cell_too_large", place | {"limit": CELL_CAP})]
    try:
        code = python_of(cell.source, allowance=allowance)
    except OverAllowance:
        return None, [Message("submission.cell_too_many_magics", place | {"limit": MAX_CELL_IPYTHON_LINES})]
    magic = _CELL_MAGIC.match(code)
    if magic and magic.group(1) in LANGUAGE_MAGICS:
        return None, [Message("submission.cell_other_language", place | {"magic": f"%%{magic.group(1)}"})]
    if magic and magic.group(1) in SUBPROCESS_MAGICS:
        return None, [Message("submission.cell_subprocess", place | {"magic": f"%%{magic.group(1)}"})]
    if magic and magic.group(1) == "timeit":
        return None, [Message("submission.cell_timeit", place)]
    notes = []
    if any(match.group(1) not in RUN_LINE_MAGICS for match in _LINE_MAGIC.finditer(code)):
        only = _only_magics(code)
        notes.append(Message("submission.cell_magic_only" if only else "submission.cell_magic_removed", place))
    return CodeCell(cell.number, cell.first_line, code), notes


_NOT_RUN = frozenset({"run_line_magic", "system", "getoutput"})


def _only_magics(code: str) -> bool:
    """Every statement of the cell is a line magic, a shell command or a ``?`` help line (as
    IPython writes them: ``get_ipython().system(...)``, ``x = !ls``): nothing else to run."""
    try:
        body = ast.parse(code).body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False

    def not_run(statement: ast.stmt) -> bool:
        call = statement.value if isinstance(statement, (ast.Expr, ast.Assign)) else None
        return (
            isinstance(call, ast.Call)
            and isinstance(call.func, ast.Attribute)
            and call.func.attr in _NOT_RUN
            and isinstance(call.func.value, ast.Call)
            and isinstance(call.func.value.func, ast.Name)
            and call.func.value.func.id == "get_ipython"
        )

    return bool(body) and all(map(not_run, body))


MAX_JSON_CONTAINERS = 1_000_000
"""Brackets and braces a notebook file may hold (inside its strings too): a Jupyter notebook has
a few per cell and output. 32 MB of nested empty lists in its metadata made 16 million Python
lists, 1.6 GB and 14 s of the grader's, for a file within the size cap."""
MAX_JSON_SEPARATORS = 3_000_000
"""Commas and colons a notebook file may hold (inside its strings too): one a value, the rest
of what parsing it makes. The lab's notebook has one in 20 bytes; 6.7 million short strings in
a flat list (32 MB) took the grading process 611 MB, and the class's publishing process 670 MB."""


def parse(raw: bytes) -> dict[str, Any]:
    """The notebook file as JSON data. Raises :class:`NotebookUnreadable`."""
    if len(raw) > MAX_NOTEBOOK_BYTES:
        raise NotebookUnreadable(Message("submission.notebook_too_large", {"limit": MAX_NOTEBOOK_BYTES}))
    if raw.count(b"[") + raw.count(b"{") > MAX_JSON_CONTAINERS:  # counted in C, before any is made
        raise NotebookUnreadable(Message("submission.notebook_too_many_values", {"limit": MAX_JSON_CONTAINERS}))
    if raw.count(b",") + raw.count(b":") > MAX_JSON_SEPARATORS:
        raise NotebookUnreadable(Message("submission.notebook_too_many_items", {"limit": MAX_JSON_SEPARATORS}))
    if not raw.strip():
        raise NotebookUnreadable(Message("submission.notebook_empty"))
    try:
        nb = json.loads(raw.decode("utf-8-sig"))  # a byte-order mark some Windows editors add
    except json.JSONDecodeError as exc:  # where, in the student's words: the parser's own are English
        raise NotebookUnreadable(
            Message("submission.notebook_not_json", {"line": str(exc.lineno), "column": str(exc.colno)})
        ) from None
    except (UnicodeDecodeError, ValueError, RecursionError):  # not UTF-8, or nested past reason
        raise NotebookUnreadable(Message("submission.notebook_not_json", {"line": "?", "column": "?"})) from None
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        raise NotebookUnreadable(Message("submission.notebook_no_cells"))
    return nb


def read(raw: bytes, allowance: Allowance | None = None) -> Notebook:
    """The code cells to run, in order. Raises :class:`NotebookUnreadable`. ``allowance``:
    what reading IPython syntax may cost (default: a notebook's own)."""
    notebook = Notebook(cells=[])
    allowance = Allowance() if allowance is None else allowance
    for cell in cells(parse(raw)):
        if cell.kind != "code":
            continue
        if is_test_cell(cell):
            notebook.notes += _test_cell_note(cell)
            imports = _test_cell_imports(cell)
            if imports is not None and len(notebook.cells) < MAX_CODE_CELLS:
                notebook.cells.append(imports)
            continue
        if len(notebook.cells) == MAX_CODE_CELLS:
            notebook.notes.append(Message("submission.too_many_cells", {"limit": MAX_CODE_CELLS}))
            break
        prepared, notes = _prepare(cell, allowance)
        notebook.notes += notes
        if prepared is not None:
            notebook.cells.append(prepared)
    notebook.notes += _stubs_defined_last(notebook.cells)
    return notebook


def _stubs_defined_last(cells: list[CodeCell]) -> list[Message]:
    """A note for each graded function whose last definition is a stub (its body only raises or
    passes) after a cell that implemented it: the notebook ends with the stub, and the grading
    takes the notebook as it ends, where nbgrader's test cell, run just below the implementation,
    passed (trial 64: a scratch stub in the last cell, 163/287 here and 287 under nbgrader)."""
    from grader.course import MODULE_OF

    where: dict[str, list[int]] = {}
    for index, cell in enumerate(cells):
        for name in set(_TOP_LEVEL_DEF.findall(cell.code)) & set(MODULE_OF):
            where.setdefault(name, []).append(index)
    notes = []
    for name, places in sorted(where.items()):
        if len(places) < 2:
            continue
        stubs = [_defines_a_stub(cells[i].code, name) for i in places]
        if stubs[-1] is True and False in stubs:
            implemented = cells[places[len(stubs) - 1 - stubs[::-1].index(False)]]
            said = {"function": name, "cell": cells[places[-1]].number, "implemented": implemented.number}
            notes.append(Message("submission.stub_defined_last", said))
    return notes


def _defines_a_stub(code: str, name: str) -> bool | None:
    """Whether the cell's last top-level definition of ``name`` is a stub; None: no Python."""
    tree = parsed(code)
    found = [n for n in (tree.body if tree else []) if isinstance(n, ast.FunctionDef) and n.name == name]
    return is_stub(found[-1]) if found else None


def is_stub(node: ast.FunctionDef) -> bool:
    """A definition that implements nothing: besides its docstring, it only raises or passes."""
    body = [s for s in node.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    return all(isinstance(s, ast.Raise | ast.Pass) for s in body)


_MODULE_NAME = r"[A-Za-z0-9_.]+"


def _top_package(module: str) -> str | None:
    """The package of a module name the worker reported (``scipy`` for ``scipy.special``)."""
    return module.split(".")[0] if re.fullmatch(_MODULE_NAME, module) else None


def _package(message: str) -> str | None:
    """The package a ``ModuleNotFoundError``'s message names."""
    match = re.match(rf"No module named '({_MODULE_NAME})'", message)
    return _top_package(match.group(1)) if match else None


def _outcome_note(
    cell: CodeCell, outcome: dict[str, Any], available: tuple[str, ...], seconds: float
) -> Message | None:
    """The note on one cell's outcome as the worker reported it (its values checked here)."""
    place = {"cell": cell.number, "first_line": cell.first_line}
    line = outcome.get("line") if type(outcome.get("line")) is int else "?"
    if outcome.get("status") == "syntax":
        if outcome.get("top_level_await") is True:
            return Message("submission.cell_top_level_await", place | {"line": line})
        return Message("submission.cell_syntax_error", place | {"line": line})
    if outcome.get("status") == "imports_skipped":
        absent = outcome.get("absent")
        names = [_top_package(str(m)) for m in absent[:5]] if isinstance(absent, list) else []
        packages = ", ".join(sorted({n for n in names if n})) or "?"
        params = place | {"package": packages, "available": ", ".join(available)}
        return Message("submission.cell_imports_skipped", params)
    if outcome.get("status") == "stopped":
        return Message("submission.cell_stopped", place | {"line": line, "seconds": seconds})
    if outcome.get("status") != "raised":
        return None
    message = one_line(clean_text(str(outcome.get("message", "")))[:300]).rstrip(".")  # the note ends the sentence
    package = _package(message) if outcome.get("builtin_type") in ("ImportError", "ModuleNotFoundError") else None
    if package is not None:
        return Message(
            "submission.cell_missing_package", place | {"package": package, "available": ", ".join(available)}
        )
    exc_type = one_line(clean_text(str(outcome.get("exc_type", "an exception")))[:100])
    if not message.strip():  # raise NotImplementedError(): no message to quote after a colon
        return Message("submission.cell_failed_silent", place | {"exc_type": exc_type, "line": line})
    return Message("submission.cell_failed", place | {"exc_type": exc_type, "line": line, "message": message})


def outcome_notes(
    cells_run: list[CodeCell], outcomes: object, skipped: dict[int, str], available: tuple[str, ...], seconds: float
) -> list[Message]:
    """Notes on what happened to the cells when the worker ran them: the cells that raised, did
    not compile, ran past their time or stopped the process. Reported by the worker before
    any test's input reached it; read here as untrusted data, in bounds."""
    by_number = {cell.number: cell for cell in cells_run}
    notes = []
    for number, reason in sorted(skipped.items()):
        place = {"cell": number, "first_line": by_number[number].first_line}
        if reason == "timeout":
            notes.append(Message("submission.cell_timeout", place | {"seconds": seconds}))
        elif reason == "channel":
            notes.append(Message("submission.cell_channel", place))
        else:
            notes.append(Message("submission.cell_crashed", place))
    for outcome in outcomes[:MAX_CODE_CELLS] if isinstance(outcomes, list) else []:
        reported = outcome.get("number") if isinstance(outcome, dict) else None
        if type(reported) is int and reported in by_number:
            note = _outcome_note(by_number[reported], outcome, available, seconds)
            notes += [note] if note else []
    return notes


def in_cell_order(notes: list[Message]) -> list[Message]:
    """Notes about the submission first, then notes about cells by cell number (a cell's notes
    from reading it before those from running it)."""
    return sorted(notes, key=lambda note: note.params.get("cell", 0) if type(note.params.get("cell")) is int else 0)


_BINDINGS = (
    re.compile(r"[ \t]*(?:async[ \t]+)?def[ \t]+(\w+)"),
    re.compile(r"[ \t]*class[ \t]+(\w+)"),
    re.compile(r"import[ \t]+\w[\w.]*[ \t]+as[ \t]+(\w+)"),
    re.compile(r"import[ \t]+(\w+)"),
    re.compile(r"(\w+)[ \t]*(?::[^=]+)?=(?!=)"),
)
"""Each matched at the start of one line: no pattern spans lines (``\\s`` does), so a cell of
thousands of lines costs linear time, not minutes."""
_FROM_IMPORT = re.compile(r"from[ \t]+[\w.]+[ \t]+import[ \t]+\(?([\w \t,]+)\)?")


def _names_bound(code: str) -> set[str]:
    """Names a cell binds at its top level, read from its text line by line (never parsed: it
    may not parse)."""
    names: set[str] = set()
    for line in code.splitlines():
        names |= {match.group(1) for pattern in _BINDINGS if (match := pattern.match(line))}
        imported = _FROM_IMPORT.match(line)
        if imported:
            names |= {part.split(" as ")[-1].strip() for part in imported.group(1).split(",") if part.strip()}
    return {name for name in names if name.isidentifier()}


def stopped_lines(outcomes: object, skipped: dict[int, str]) -> dict[int, int]:
    """Cell number -> the line each unfinished cell stopped at (0: nothing of it ran), from the
    worker's report: what a cell would have bound after that line, the kernel never has."""
    stopped = dict.fromkeys(skipped, 0)
    for outcome in outcomes if isinstance(outcomes, list) else []:
        number = outcome.get("number") if isinstance(outcome, dict) else None
        if type(number) is not int or outcome.get("status") not in ("raised", "stopped", "syntax"):
            continue
        line = outcome.get("line") if outcome.get("status") in ("raised", "stopped") else 0
        stopped[number] = line if type(line) is int and line > 0 else 0
    return stopped


def failed_names(cells_run: list[CodeCell], outcomes: object, skipped: dict[int, str]) -> dict[str, CodeCell]:
    """The names that cells which failed (raised, did not compile, were skipped) would have
    bound: a function that later finds one of them missing can point to the cell."""
    failed = stopped_lines(outcomes, skipped)
    found: dict[str, CodeCell] = {}
    for cell in cells_run:
        if cell.number in failed:
            found |= dict.fromkeys(_names_bound(cell.code), cell)
    return found
