"""Read a student's notebook as data and pull out the code that defines their functions.

Nothing in the notebook is trusted or executed here. Cell ids, nbgrader metadata (points,
grade ids, locked flags, checksums), the kernelspec and stored outputs are all ignored: the
student's code is found by *what it defines*. From every code cell, in order, we keep only
the top-level statements that define things (``import``, ``def``, ``class``, and assignments
to names those definitions use). Test calls, demo prints, asserts, IPython magics and shell
escapes are dropped, so deleting, duplicating, reordering or retyping cells cannot break
grading, and no cell can run a test inside the student's own process.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from grader.messages import Message

MAX_NOTEBOOK_BYTES = 8 << 20
PARSED_CELL_CAP = 100_000
"""Characters of one code cell the trusted side parses: a syntax tree costs many times its
source in memory, and no honest cell of this lab comes near this size."""

_DEFINITIONS = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


@dataclass
class Extracted:
    """The module source built from a notebook, and what was left out on the way."""

    source: str
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
        src = "".join(str(s) for s in src)
    return str(src)


@dataclass(frozen=True)
class Cell:
    """One cell of a student's notebook, whatever shape the file gave it."""

    number: int
    """Its position among all cells, from 1 (how Jupyter's own numbering of cells counts)."""
    kind: str
    """``code``, ``markdown``, ``raw``, or ``other`` for anything unexpected."""
    source: str
    nbgrader: dict[str, Any]
    """The cell's nbgrader metadata when it is a mapping, else empty."""


def cells(nb: object) -> list[Cell]:
    """The cells of a parsed notebook. A malformed cell (metadata that is a list, a source that
    is a number) is read as far as it makes sense; nothing here raises on a student's file."""
    raw = nb.get("cells") if isinstance(nb, dict) else None
    out = []
    for number, cell in enumerate(raw if isinstance(raw, list) else [], start=1):
        if not isinstance(cell, dict):
            out.append(Cell(number, "other", "", {}))
            continue
        kind = cell.get("cell_type")
        metadata = cell.get("metadata")
        nbgrader = metadata.get("nbgrader") if isinstance(metadata, dict) else None
        out.append(
            Cell(
                number,
                kind if kind in ("code", "markdown", "raw") else "other",
                cell_source(cell),
                nbgrader if isinstance(nbgrader, dict) else {},
            )
        )
    return out


def first_line(node: ast.stmt) -> int:
    """The line a statement starts on, its decorators included."""
    decorators: list[ast.expr] = getattr(node, "decorator_list", [])
    return min([node.lineno] + [d.lineno for d in decorators])


def statement_text(lines: list[str], node: ast.stmt) -> str:
    """The source of one top-level statement, decorators included, from its module's lines."""
    return "\n".join(lines[first_line(node) - 1 : node.end_lineno])


def _strip_ipython(source: str) -> tuple[str, bool]:
    """Blank out magics (``%``, ``%%``) and shell escapes (``!``); keep line numbers."""
    lines = source.split("\n")
    if lines and lines[0].lstrip().startswith("%%"):
        return "", True
    kept, dropped = [], False
    for line in lines:
        stripped = line.lstrip()
        if stripped.startswith(("%", "!")) or "get_ipython(" in stripped:
            kept.append("")
            dropped = True
        else:
            kept.append(line)
    return "\n".join(kept), dropped


def _names_loaded(nodes: Sequence[ast.stmt]) -> set[str]:
    return {n.id for node in nodes for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _assigned(node: ast.stmt) -> set[str]:
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]  # type: ignore[attr-defined]
    return {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}


def extract(raw: bytes) -> Extracted:
    """Build a module from a notebook's code cells. Raises :class:`NotebookUnreadable`."""
    if len(raw) > MAX_NOTEBOOK_BYTES:
        raise NotebookUnreadable(Message("submission.notebook_too_large", {"limit": MAX_NOTEBOOK_BYTES}))
    try:
        nb = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise NotebookUnreadable(Message("submission.notebook_not_json", {"detail": str(exc)[:200]})) from None
    cells = nb.get("cells") if isinstance(nb, dict) else None
    if not isinstance(cells, list):
        raise NotebookUnreadable(Message("submission.notebook_no_cells"))

    notes: list[Message] = []
    # Per cell, only what is needed later is kept (the syntax tree is dropped at once: it
    # costs many times the source in memory).
    segments: list[tuple[int, str, set[str] | None]] = []
    needed: set[str] = set()
    for number, cell in enumerate(cells, start=1):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        source, had_magic = _strip_ipython(cell_source(cell))
        if had_magic:
            notes.append(Message("submission.cell_magic_removed", {"cell": number}))
        if len(source) > PARSED_CELL_CAP:
            notes.append(Message("submission.cell_too_large", {"cell": number, "limit": PARSED_CELL_CAP}))
            continue
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:  # a nesting bomb is a bad cell
            line = getattr(exc, "lineno", None) or "?"
            notes.append(Message("submission.cell_syntax_error", {"cell": number, "line": line}))
            continue
        lines = source.split("\n")
        for node in tree.body:
            if isinstance(node, _DEFINITIONS):
                needed |= _names_loaded([node])
                segments.append((number, statement_text(lines, node), None))
            elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                segments.append((number, statement_text(lines, node), _assigned(node)))
        del tree
    kept = [
        f"# --- cell {number}\n{segment}"
        for number, segment, assigned in segments
        if assigned is None or assigned & needed
    ]
    return Extracted(source="\n\n".join(kept) + "\n", notes=notes)
