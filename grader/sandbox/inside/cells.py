"""Run a notebook's cells the way Jupyter does: in order, in one namespace, each on its own.

A cell that raises stops where it raised, and what it bound before that stays bound (as in a
kernel); a cell that runs past its time is stopped where it is, as an interrupted kernel stops
(what it bound before stays); a cell with a syntax error runs not at all; the next cell runs
regardless. The cells arrive as plain Python (the trusted side has already turned IPython
syntax into calls of ``get_ipython()``), and :class:`Shell` answers those calls the way they
matter for grading:

* ``%%time``, ``%%capture``, ``%%prun`` run their body in the notebook's namespace;
* ``%%writefile`` writes its file in the working directory (a later cell may import it);
* line magics, ``!`` commands and ``x = !cmd`` do nothing (``%time stmt`` runs ``stmt``,
  ``%run file.py`` runs the file, as IPython does), except those whose effect later cells see:
  ``%cd``, ``%env``, ``%xdel``, ``%reset -f`` and ``%reset_selective -f`` do what IPython's do
  (``inside/magics.py``; ``x = !cmd`` binds an empty list with ``.n``, ``.s``, ``.l``, as
  IPython's ``SList`` has them);
* a cell magic nobody knows raises, as in Jupyter;
* ``display(...)`` and ``IPython.display`` exist, as in every kernel (they show nothing here:
  a cell's output is dropped), unless the environment has IPython itself.

Cells in another language (``%%bash``, ``%%html``...), ``%%timeit`` cells (IPython runs them
in a scope of their own: nothing they define survives) and nbgrader's test cells never get
here: the trusted side skips them. Standard library only.
"""

from __future__ import annotations
import __future__

import ast
import functools
import io
import linecache
import os
import shlex
import signal
import sys
import traceback
import types
from collections.abc import Callable
from typing import Any

from . import magics
from .calling import CappedText, exception_report
from .magics import UsageError

RUN_BODY = frozenset({"time", "capture", "prun"})
WRITE_FILE = frozenset({"writefile", "file"})
LINE_RUNS_STATEMENT = frozenset({"time"})


class Captured:
    """What ``%%capture name`` binds: the cell's printed output."""

    def __init__(self, stdout: str, stderr: str) -> None:
        self.stdout, self.stderr = stdout, stderr
        self.outputs: list[Any] = []

    def show(self) -> None:
        print(self.stdout, end="")

    def __call__(self) -> None:
        self.show()


class Events:
    """``get_ipython().events``: libraries register callbacks on it (matplotlib's pyplot, to
    redraw figures after each cell). Cells run here have no "after execution" moment to call
    them at, and a figure has no screen to go to, so they are kept and never called."""

    def __init__(self) -> None:
        self.callbacks: dict[str, list[Any]] = {}

    def register(self, event: str, function: Any) -> None:
        self.callbacks.setdefault(event, []).append(function)

    def unregister(self, event: str, function: Any) -> None:
        if function in self.callbacks.get(event, []):
            self.callbacks[event].remove(function)


class Shell:
    """The part of IPython's ``get_ipython()`` that notebook code calls."""

    def __init__(self, namespace: dict[str, Any]) -> None:
        self.user_ns = namespace
        self.filename = "<cell>"
        """The cell being run, for the line numbers of what its magics run."""
        self.events = Events()
        self.future_flags = 0
        """The ``from __future__`` imports of the cells run so far: IPython's compiler keeps
        them for every later cell, as an interactive interpreter does."""
        self.own_names: frozenset[str] = frozenset()
        """Names the namespace holds before any cell runs: what ``%reset -f`` keeps."""
        self.previous_dir = os.getcwd()

    def compile(self, source: str | ast.Module, filename: str) -> types.CodeType:
        """Notebook code compiled as a kernel compiles it: with the future imports of earlier
        cells and none of this module's own (compile() would otherwise inherit this file's
        ``from __future__ import annotations``, and an undefined annotation would not fail)."""
        code: types.CodeType = compile(source, filename, "exec", flags=self.future_flags, dont_inherit=True)
        self.future_flags |= code.co_flags & FUTURE_FLAGS
        return code

    def enable_gui(self, gui: str | None = None) -> None:
        """An event loop for a GUI backend's windows: there is no screen here."""
        return None

    def _run(self, source: str) -> None:
        exec(self.compile(source, self.filename), self.user_ns)

    def run_line_magic(self, name: str, line: str, _stack_depth: int = 1) -> Any:
        if name.startswith("%"):  # "%%time" below a cell's first line: IPython has no such line magic
            raise UsageError(f"Line magic function `%{name}` not found.")
        if name in LINE_RUNS_STATEMENT and line.strip():
            self._run(line.strip())  # "%time  x = 1": IPython dedents the statement it times
        elif name == "run":
            self._run_file(line)
        elif name in magics.EFFECT_MAGICS:
            return magics.run(self, name, line)
        return None

    def _run_file(self, line: str) -> None:
        """``%run [-i] file.py [args]`` as IPython runs a script: as ``__main__`` with ``sys.argv``
        set, in a namespace of its own whose names then join the notebook's (``-i``: in the
        notebook's namespace itself). A file written by ``%%writefile`` earlier is found."""
        words = shlex.split(line)
        interactive = "-i" in words
        rest = [w for w in words if not (w.startswith("-") and len(w) == 2)]
        if not rest:
            raise UsageError("%run needs a file name")
        path, argv = os.path.expanduser(rest[0]), rest[1:]
        with open(path, encoding="utf-8") as handle:
            source = handle.read()
        namespace = self.user_ns if interactive else {"__name__": "__main__", "__file__": path}
        saved = sys.argv
        sys.argv = [path, *argv]
        try:
            exec(compile(source, path, "exec", dont_inherit=True), namespace)
        finally:
            sys.argv = saved
            if not interactive:
                self.user_ns.update({k: v for k, v in namespace.items() if not k.startswith("__")})

    def run_cell_magic(self, name: str, line: str, body: str) -> Any:
        if name in RUN_BODY:
            if name == "capture" and line.split():
                self._capture(line.split()[-1], body)
            else:
                self._run(body)
        elif name in WRITE_FILE:
            self._write(line, body)
        else:
            raise UsageError(f"Cell magic `%%{name}` not found.")
        return None

    def _capture(self, target: str, body: str) -> None:
        out, err = io.StringIO(), io.StringIO()
        saved = sys.stdout, sys.stderr
        sys.stdout, sys.stderr = out, err
        try:
            self._run(body)
        finally:
            sys.stdout, sys.stderr = saved
        self.user_ns[target] = Captured(out.getvalue(), err.getvalue())

    @staticmethod
    def _write(line: str, body: str) -> None:
        words = line.split()
        append = "-a" in words or "--append" in words
        names = [w for w in words if not w.startswith("-")]
        if not names:
            raise UsageError("%%writefile needs a file name")
        with open(os.path.expanduser(names[-1].strip("'\"")), "a" if append else "w", encoding="utf-8") as handle:
            handle.write(body)

    def system(self, command: str) -> None:
        return None

    def getoutput(self, command: str, split: bool = True) -> list[str]:
        return SList()

    def run_cell(self, source: str, *args: Any, **kwargs: Any) -> None:
        self._run(source)


class SList(list):  # type: ignore[type-arg]
    """What ``x = !cmd`` binds in IPython: the output's lines, with ``.n`` (joined by newlines),
    ``.s`` (by spaces), ``.l`` and ``.p`` (the list); no command runs here, so it is empty."""

    @property
    def n(self) -> str:
        return "\n".join(self)

    @property
    def s(self) -> str:
        return " ".join(self)

    @property
    def l(self) -> list[str]:  # noqa: E743 - IPython's name
        return list(self)

    p = l

    def grep(self, *args: Any, **kwargs: Any) -> SList:
        return SList()

    def fields(self, *args: Any) -> SList:
        return SList()


def _error_line(exc: BaseException, filename: str) -> int | None:
    """The line of the cell's top-level statement that raised (of a ``%%time`` or ``%%capture``
    body, the body's), not of a function the cell defined and called: the kernel ran every
    statement before it, answers included."""
    line, body = None, True
    for frame in traceback.extract_tb(exc.__traceback__):
        if frame.filename == filename and body:
            line, body = frame.lineno, False
        elif frame.filename == __file__ and frame.name == "run_cell_magic":
            body = True  # the body's own statements count from its first line
    return line


class Shown:
    """What ``IPython.display``'s rich objects (``Markdown``, ``HTML``, ``Image``...) stand for:
    kept, never shown."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.args, self.kwargs = args, kwargs


def display(*objs: Any, **kwargs: Any) -> None:
    """A kernel's ``display``: shows its arguments; here output is dropped."""
    return None


DISPLAY_NAMES = ("Markdown", "HTML", "Image", "Math", "Latex", "JSON", "SVG", "Audio", "Video", "IFrame", "Code")


def _ipython_standin(shell: Shell) -> None:
    """``import IPython`` / ``from IPython.display import ...`` as a kernel has them, when the
    environment has no IPython (a kernel always does)."""
    import importlib.util

    if "IPython" in sys.modules or importlib.util.find_spec("IPython") is not None:
        return
    package, shown = types.ModuleType("IPython"), types.ModuleType("IPython.display")
    shown.__dict__.update({name: type(name, (Shown,), {}) for name in DISPLAY_NAMES})
    shown.__dict__.update(display=display, clear_output=lambda wait=False: None, Shown=Shown)
    # matplotlib asks which IPython it talks to before it registers its redraw hook: the
    # stand-in answers as a current one (8.24 or later), for which matplotlib needs nothing
    # more of IPython than ``get_ipython().events``.
    package.__dict__.update(display=shown, get_ipython=lambda: shell, version_info=(9, 0, 0, ""))
    package.__path__ = []  # a package, so ``import IPython.display`` finds its submodule
    sys.modules["IPython"], sys.modules["IPython.display"] = package, shown


DOWNLOAD_SHELL = "__import__('inside.cells').cells.downloaded_shell(globals())"
"""What ``grader/script.py`` writes in place of ``get_ipython()`` (see :class:`DownloadShell`)."""


class DownloadShell(Shell):
    """``get_ipython()`` for one ``%%time``, ``%%capture`` or ``%%prun`` cell of a notebook
    downloaded as ``.py``. Colab's download writes such a cell as one line,
    ``get_ipython().run_cell_magic('time', '', '<the cell>')``; ``grader/script.py`` writes
    :data:`DOWNLOAD_SHELL` in place of ``get_ipython()`` there, so the body runs in the module's
    namespace as the kernel ran it (the functions it defines exist). Every statement of the body
    is placed on that one line, the line of the student's file that holds the cell, and a
    traceback shows that line as the file has it."""

    def __init__(self, namespace: dict[str, Any], filename: str, line: int) -> None:
        super().__init__(namespace)
        self.filename, self.line = filename, line
        lines = list(linecache.getlines(filename))
        if 0 < line <= len(lines) and lines[line - 1].startswith(DOWNLOAD_SHELL):
            lines[line - 1] = "get_ipython()" + lines[line - 1][len(DOWNLOAD_SHELL) :]
            # No modification time: linecache then never reloads the prepared file over it.
            linecache.cache[filename] = (sum(map(len, lines)), None, lines, filename)
        self.width = len(lines[line - 1].rstrip().encode()) if 0 < line <= len(lines) else 0

    def compile(self, source: str | ast.Module, filename: str) -> types.CodeType:
        tree = ast.parse(source) if isinstance(source, str) else source
        for node in ast.walk(tree):
            if "lineno" in node._attributes:
                node.lineno = node.end_lineno = self.line  # type: ignore[attr-defined]
                # The whole line: a traceback then draws no carets under part of it.
                node.col_offset, node.end_col_offset = 0, self.width  # type: ignore[attr-defined]
        return super().compile(tree, filename)


def downloaded_shell(namespace: dict[str, Any]) -> DownloadShell:
    """The shell for the cell magic on the caller's line (see :class:`DownloadShell`)."""
    caller = sys._getframe(1)
    return DownloadShell(namespace, caller.f_code.co_filename, caller.f_lineno)


def notebook_module(name: str) -> types.ModuleType:
    """The namespace cells run in: ``__name__`` is ``"__main__"``, as in a kernel, so a cell's
    ``if __name__ == "__main__":`` block runs; ``get_ipython()`` answers magics and ``display``
    is there, as a kernel puts it among the builtins."""
    module = types.ModuleType(name)
    module.__dict__["__name__"] = "__main__"
    shell = Shell(module.__dict__)
    module.__dict__["get_ipython"] = lambda: shell
    module.__dict__["display"] = display
    _ipython_standin(shell)
    shell.own_names = frozenset(module.__dict__)
    return module


def cells_done(namespace: dict[str, Any]) -> None:
    """After the last cell: a magic run later, inside a graded function (``%time`` in its body),
    is no cell's code; its traceback must not name the last cell that ran."""
    namespace["get_ipython"]().filename = "<magic>"


class Absent:
    """What a name imported from a package the grading environment does not have stands for,
    so that the rest of its cell runs as it did on the student's machine (``drive.mount(...)``
    after ``from google.colab import drive``, ``import numpy as np`` after it): each attribute
    and call gives another one, it is false and empty, and a function that really computes
    with it gives back no array."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attr: str) -> Absent:
        if attr.startswith("__"):
            raise AttributeError(attr)
        return Absent(f"{self._name}.{attr}")

    def __call__(self, *args: Any, **kwargs: Any) -> Absent:
        return Absent(f"{self._name}(...)")

    def __bool__(self) -> bool:
        return False

    def __iter__(self) -> Any:
        return iter(())

    # ``df["col"] = ...`` and ``with tqdm(...) as bar:`` on what a missing package returned.
    def __getitem__(self, key: Any) -> Absent:
        return Absent(f"{self._name}[...]")

    def __setitem__(self, key: Any, value: Any) -> None:
        return None

    def __enter__(self) -> Absent:
        return self

    def __exit__(self, *exc: Any) -> None:
        return None

    def __repr__(self) -> str:
        return f"<{self._name}: not installed where notebooks are graded>"


def _absent_result(self: Absent, *args: Any) -> Absent:
    return Absent(f"{self._name}(...)")


for _operator in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul"):
    # df["a"] * 2 on what a missing package returned: another stand-in, as a call gives
    setattr(Absent, f"__{_operator}__", _absent_result)
    setattr(Absent, f"__r{_operator}__", _absent_result)
for _operator in ("neg", "pos", "abs"):
    setattr(Absent, f"__{_operator}__", _absent_result)


FUTURE_FLAGS = sum(getattr(__future__, name).compiler_flag for name in __future__.all_feature_names)
MISSING_IMPORTS = 20
"""Top-level imports of missing packages skipped in one cell, at most."""


def _absent_names(statement: ast.stmt) -> dict[str, Any]:
    """The names an import statement binds, each bound to what it imported where the import
    got that far (``import math, missing`` imports math first) and to :class:`Absent` where
    it did not."""
    found: dict[str, Any] = {}
    if isinstance(statement, ast.Import):
        for alias in statement.names:
            top = alias.name.split(".")[0]
            name, target = (alias.asname, alias.name) if alias.asname else (top, top)
            found[name] = sys.modules[target] if alias.name in sys.modules else Absent(target)
        return found
    assert isinstance(statement, ast.ImportFrom)
    source = "." * statement.level + (statement.module or "")
    module = sys.modules.get(source)
    for alias in statement.names:
        if alias.name != "*":
            real = getattr(module, alias.name, None) if module is not None else None
            found[alias.asname or alias.name] = real if real is not None else Absent(f"{source}.{alias.name}")
    return found


def _import_at(tree: ast.Module, line: int | None) -> int | None:
    """The index of the top-level import statement that spans ``line``, if one does."""
    for index, statement in enumerate(tree.body):
        end = statement.end_lineno or statement.lineno
        if isinstance(statement, (ast.Import, ast.ImportFrom)) and line is not None and statement.lineno <= line <= end:
            return index
    return None


class CellStopped(BaseException):
    """Raised in a cell's code once it has run past its time: the cell stops there, as Jupyter's
    "Interrupt" stops it, and what it bound before stays (a cell that defines a function and
    then runs a long experiment keeps the function). Code that swallows it, or blocks in one
    long C call, is killed by the trusted side a little later, and the cell skipped."""


_running = [False]
"""Whether a cell's own code is running: the timer stops nothing else."""


_expired = [False]
"""The cell's time ran out between two of its statements (run one at a time): the next does not start."""


def _stop(signum: int, frame: Any) -> None:
    _expired[0] = True
    if _running[0]:
        raise CellStopped


def _exec(code: types.CodeType, namespace: dict[str, Any]) -> None:
    _running[0] = True
    try:
        exec(code, namespace)
    finally:
        _running[0] = False


def _timed(running: Callable[[], dict[str, Any]], seconds: float | None) -> dict[str, Any]:
    """``running()`` (a cell's code) with ``seconds`` of wall-clock time (none: no limit of its own)."""
    if not seconds or seconds <= 0:
        return running()
    _expired[0] = False
    previous = signal.signal(signal.SIGALRM, _stop)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        return running()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        _expired[0] = False


def _run_code(
    cell: dict[str, Any], code: types.CodeType, tree: ast.Module, namespace: dict[str, Any]
) -> dict[str, Any]:
    """Run a cell compiled whole (``code``, from ``tree``). A top-level import of a package this
    environment lacks is skipped, its names bound to :class:`Absent`, and the statements after
    it run, as :func:`_run_statements` runs them: on the student's machine that import worked (a
    Colab notebook's ``from google.colab import drive``), and stopping the cell there would lose
    every line after it."""
    filename = code.co_filename
    try:
        _exec(code, namespace)
    except CellStopped as exc:
        return {"number": cell["number"], "status": "stopped", "line": _error_line(exc, filename)}
    except ModuleNotFoundError as exc:
        index = _import_at(tree, _error_line(exc, filename))
        if index is None:
            return _raised(cell, exc, filename)
        namespace.update(_absent_names(tree.body[index]))
        rest = ast.Module(body=tree.body[index + 1 :], type_ignores=[])
        return _run_statements(cell, rest, namespace, [str(exc.name or "?")[:100]])
    except BaseException as exc:  # a cell may raise anything, SystemExit included: it is one cell
        return _raised(cell, exc, filename)
    return {"number": cell["number"], "status": "ok"}


def _run_statements(
    cell: dict[str, Any], tree: ast.Module, namespace: dict[str, Any], skipped: list[str] | None = None
) -> dict[str, Any]:
    """Run a cell's top-level statements one at a time, each compiled just before it runs, as
    IPython's ``run_ast_nodes`` does: the statements before one that does not compile (a
    ``return`` or ``break`` outside any function) run, and that one stops the cell with its
    SyntaxError; a ``from __future__`` import below the first line holds for the statements
    after it. A top-level import of a missing package is skipped (see :func:`_run_code`, whose
    already ``skipped`` packages are counted on)."""
    shell = namespace["get_ipython"]()
    filename, skipped = shell.filename, list(skipped or [])
    for node in tree.body:
        if _expired[0]:
            return {"number": cell["number"], "status": "stopped", "line": node.lineno}
        try:
            code = shell.compile(ast.Module(body=[node], type_ignores=[]), filename)
        except (SyntaxError, ValueError) as exc:
            return {**_raised(cell, exc, filename), "line": getattr(exc, "lineno", None) or node.lineno}
        try:
            _exec(code, namespace)
        except CellStopped:
            return {"number": cell["number"], "status": "stopped", "line": node.lineno}
        except ModuleNotFoundError as exc:
            if not isinstance(node, (ast.Import, ast.ImportFrom)) or len(skipped) >= MISSING_IMPORTS:
                return _raised(cell, exc, filename)
            skipped.append(str(exc.name or "?")[:100])
            namespace.update(_absent_names(node))
        except BaseException as exc:  # a cell may raise anything, SystemExit included: it is one cell
            return _raised(cell, exc, filename)
    if skipped:
        return {"number": cell["number"], "status": "imports_skipped", "absent": skipped}
    return {"number": cell["number"], "status": "ok"}


def _raised(cell: dict[str, Any], exc: BaseException, filename: str) -> dict[str, Any]:
    report = exception_report(exc, filename)
    return {"number": cell["number"], "status": "raised", "line": _error_line(exc, filename), **report}


def run(cell: dict[str, Any], module: types.ModuleType, seconds: float | None = None) -> dict[str, Any]:
    """Run one cell in ``module``'s namespace, stopped after ``seconds``; its outcome as data
    (its output is dropped)."""
    filename = f"<cell {cell['number']}>"
    shell = module.__dict__["get_ipython"]()
    shell.filename = filename
    # A traceback through the cell shows its lines, as IPython's does (no mtime: never reloaded).
    linecache.cache[filename] = (len(cell["code"]), None, cell["code"].splitlines(True), filename)
    namespace = module.__dict__
    try:
        # Parsed whole first, as IPython does: a cell that does not parse runs not at all.
        tree = _keeping_last_value(ast.parse(cell["code"], filename), cell["code"])
    except (SyntaxError, ValueError) as exc:
        return {"number": cell["number"], "status": "syntax", "line": getattr(exc, "lineno", None)}
    running: Callable[[], dict[str, Any]]
    try:  # compiled whole: what IPython's statement-by-statement compiling comes to, for almost every cell
        running = functools.partial(_run_code, cell, shell.compile(tree, filename), tree, namespace)
    except (SyntaxError, ValueError) as exc:
        message = str(getattr(exc, "msg", ""))
        if "outside function" in message and "await" in message:  # Jupyter runs it (autoawait); Python does not
            line = getattr(exc, "lineno", None)
            return {"number": cell["number"], "status": "syntax", "line": line, "top_level_await": True}
        running = functools.partial(_run_statements, cell, tree, namespace)
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = CappedText(0), CappedText(0)
    try:
        return _timed(running, seconds)
    finally:
        sys.stdout, sys.stderr = saved
        _shift_output_history(module.__dict__)


LAST_VALUE = "__normlab_last_value__"


def _keeping_last_value(tree: ast.Module, source: str) -> ast.Module:
    """The cell's tree, its last expression's value kept as IPython's displayhook keeps it in
    ``_`` (not when a ``;`` ends the cell); unchanged when it ends otherwise."""
    if not tree.body or not isinstance(tree.body[-1], ast.Expr) or source.rstrip().endswith(";"):
        return tree
    last = tree.body[-1]
    tree.body[-1] = ast.copy_location(ast.Assign([ast.Name(LAST_VALUE, ast.Store())], last.value), last)
    return ast.fix_missing_locations(tree)


def _shift_output_history(namespace: dict[str, Any]) -> None:
    """``_``, ``__`` and ``___``: the last three values cells ended with, None not counted."""
    value = namespace.pop(LAST_VALUE, None)
    if value is not None:
        namespace["___"], namespace["__"] = namespace.get("__"), namespace.get("_")
        namespace["_"] = value
