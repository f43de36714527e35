"""A student's answers to the verification questions: found, read as data, scored.

Answers come from ``verification.toml`` beside the exercises (a directory, a ``.py`` file, the
student zip, Gradescope) or, in a notebook, from ``answers_q1 = {...}`` assignments in code
cells (read with ``ast.literal_eval``, never run) and the written-answer markdown cells. Nothing
here runs student code: the answers are parsed on the trusted side as data, size-capped.

Scoring is trusted-side only and needs the full bank (the keys); a student's copy of the grader
can still say which answers are blank (:func:`blanks`). Every problem with the answers (a
malformed file, a letter that is not an option, a word where a number is expected) is a scored
result with a message, never a grader fault.
"""

from __future__ import annotations

import ast
import dataclasses
import enum
import functools
import json
import math
import re
import tomllib
import unicodedata
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from grader import notebook, script
from grader.messages import Message
from grader.model import CheckResult, ManualPart, Status, Visibility
from grader.questions import (
    ANSWERS_FILE,
    NOTEBOOK_PREFIX,
    WRITTEN,
    Bank,
    Part,
    Question,
    answers_beside,
    part_name,
)
from grader.questions import load as load_bank

MAX_ANSWERS_BYTES = 256 << 10
"""No honest answers file comes near this; a bigger one is not read."""
MAX_LITERAL_CHARS = 20_000
"""Characters of one notebook answer assignment that are read."""
BLANK_WRITTEN = ("", "YOUR ANSWER HERE")
"""What a written part holds before the student writes in it (the file's, nbgrader's stub)."""


@dataclass(frozen=True)
class Answers:
    """What a student answered, as plain data: ``{question id: {part id: value}}``."""

    values: dict[str, dict[str, Any]]
    where: str
    """Where the answers were read: the file name, or ``notebook``."""
    problem: Message | None = None
    """Why no answer could be read (a missing or malformed file); every part scores 0."""
    notes: tuple[Message, ...] = ()
    """Where the answers came from, or how they were read, when the student may not expect
    it (nothing is lost)."""


def _read_capped(path: Path, limit: int = MAX_ANSWERS_BYTES) -> bytes | None:
    from grader.submission import _read_regular

    return _read_regular(path, limit)


def from_toml(data: bytes | None, where: str = ANSWERS_FILE) -> Answers:
    """The answers in a ``verification.toml``'s bytes (None: there is no such file)."""
    if data is None:
        return Answers({}, where, Message("question.file_missing", {"file": where}))
    if len(data) > MAX_ANSWERS_BYTES:
        return Answers({}, where, Message("question.file_too_large", {"file": where, "limit": MAX_ANSWERS_BYTES}))
    try:
        text = data.decode("utf-8-sig")
        if (long_key := _long_key_line(text)) is not None:
            return Answers({}, where, Message("question.file_unreadable", {"file": where, "line": str(long_key)}))
        parsed, quoted = _toml(text)
    except tomllib.TOMLDecodeError as exc:
        found = re.search(r"line (\d+)", str(exc))  # "... (at line 3, column 5)"; some messages have none
        line = found.group(1) if found else "?"
        return Answers({}, where, Message("question.file_unreadable", {"file": where, "line": line[:6]}))
    except (ValueError, RecursionError, MemoryError):
        # Not text (UnicodeDecodeError), nested past reason, or an integer of more digits than
        # Python converts (sys.get_int_max_str_digits): a ValueError raised inside tomllib.
        return Answers({}, where, Message("question.file_unreadable", {"file": where, "line": "?"}))
    values = {k: v for k, v in parsed.items() if isinstance(v, dict)}
    lines = ", ".join(str(n) for n in quoted[:10])
    note = Message("question.comma_numbers_read", {"file": where, "lines": lines}) if quoted else None
    return Answers(_folded(_as_written(values, text)), where, notes=() if note is None else (note,))


_TOML_KEY = r"""(?:[A-Za-z0-9_-]+|"[^"\n]*"|'[^'\n]*')"""
DASHES = "\u2010\u2011\u2012\u2013\u2212"
"""Dashes typed for a minus sign (a word processor's "–1,22", the typeset "−1,22")."""
_SIGN = "+\\-" + DASHES
_NUMBER_CHAR = f"[\\d.,eE{_SIGN}\u00d7\u00b7*^\u207b\u2070\u00b9\u00b2\u00b3\u2074-\u2079]"
_BLANKS = "[ \\t\u00a0\u202f]+"
_TOML_HUMAN_NUMBER = re.compile(
    rf"^([ \t]*{_TOML_KEY}(?:[ \t]*\.[ \t]*{_TOML_KEY})*[ \t]*=[ \t]*)"
    rf"((?:[{_SIGN}](?:{_BLANKS})?)?\d(?:{_NUMBER_CHAR}|{_BLANKS}(?=[\d{_SIGN}\u00d7\u00b7*]))*)([ \t]*(?:#.*)?)$"
)
"""A number as a person writes it, where TOML reads none: ``b = 3,54`` (also ``q6.b = 0,302``,
``b = 1,0e-6``, ``b = - 1,22``), ``b = \u22121,22`` (a typeset minus), ``a = 266 240`` or ``a =
266,240.0``. A blank inside the number is followed by more of it, so it never meets the
blanks after it (a long line of them is read in one pass)."""


def _toml(text: str) -> tuple[dict[str, Any], list[int]]:
    """The file's TOML, and the lines whose numbers were read as if in quotes: a file that is
    not TOML only because of numbers TOML cannot read as written (``b = 3,54``, ``b = \u22121,22``)
    is read with those numbers as text (trial 47: one such line cost all 23 points; trial 55:
    a typeset minus sign did the same). A file with another error as well is reported at that
    error."""
    try:
        return tomllib.loads(text), []
    except tomllib.TOMLDecodeError:
        repaired, quoted = _numbers_quoted(text)
        if not quoted:
            raise
        return tomllib.loads(repaired), quoted  # still not TOML: its error is what is left to fix


def _toml_lines(lines: list[str]) -> Iterator[tuple[int, str]]:
    """Each line's index and text, but for the lines inside a multi-line string (a written
    answer: the student's text, never TOML's syntax)."""
    inside = ""
    for index, line in enumerate(lines):
        if not inside:
            yield index, line
        for delimiter in ('"""', "'''"):
            if (not inside or inside == delimiter) and line.count(delimiter) % 2:
                inside = "" if inside else delimiter


def _numbers_quoted(text: str) -> tuple[str, list[int]]:
    """The text with such numbers in quotes, and their lines; a number TOML reads (``3.54``)
    and a written answer's text stay as they are."""
    lines = text.split("\n")
    quoted = []
    for index, line in list(_toml_lines(lines)):
        if (found := _TOML_HUMAN_NUMBER.match(line.rstrip("\r"))) and not _toml_value(found[2]):
            lines[index] = f'{found[1]}"{found[2]}"{found[3]}'
            quoted.append(index + 1)
    return "\n".join(lines), quoted


def _toml_value(text: str) -> bool:
    """Whether TOML reads ``text`` as a value by itself."""
    try:
        tomllib.loads(f"v = {text}")
    except tomllib.TOMLDecodeError:
        return False
    return True


MAX_KEY_PARTS = 16
"""More parts than any answer file's dotted key or table name needs (``q1.a`` has two)."""
_LONG_KEY = re.compile(rf"^[ \t]*(?:\[[ \t]*)*(?:{_TOML_KEY}[ \t]*\.[ \t]*){{{MAX_KEY_PARTS}}}")
"""(No two runs of blanks meet without a character between them: a line of 250 KB of tabs must
not cost the square of its length.)"""


def _long_key_line(text: str) -> int | None:
    """The first line whose key or table name has more than ``MAX_KEY_PARTS`` parts. tomllib
    reads such a key in a time that grows with the square of its parts: one 250 KB line of
    ``a.a.a...`` held the grader for a minute, so a file with one is refused before it is read."""
    return next((index + 1 for index, line in _toml_lines(text.split("\n")) if _LONG_KEY.match(line)), None)


def _lower_keys(mapping: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key in sorted(mapping, key=lambda k: k != k.lower()):  # a key already in lower case wins
        out.setdefault(key.lower(), mapping[key])
    return out


def _folded(values: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Question and part ids as the bank writes them, in lower case: ``[Q1]`` and ``A = "b"``
    are q1's part a (red team 33: read as not answered)."""
    return {qid: _lower_keys(parts) for qid, parts in _lower_keys(values).items() if isinstance(parts, dict)}


_TOML_SECTION = re.compile(r"^[ \t]*\[[ \t]*([A-Za-z0-9_-]+)[ \t]*\][ \t]*(?:#.*)?$")
AMBIGUOUS_NUMBER = re.compile(r"[+-]?[1-9]\d{0,2}[.,]\d{3}")
"""One separator before exactly three digits: ``1.250`` is 1250 to a Brazilian reader and
1.25 to a Python one (as ``1,250`` is 1250 to an English one): a whole-number part reads it as
the first, every other number part as the second."""
THOUSANDS = re.compile(r"[+-]?[1-9]\d{0,2}(?:([.,])\d{3})(?:\1\d{3})*")
"""A whole number with its thousands grouped by one kind of separator: ``131.072``, ``1,000,000``."""

COMMA_DECIMAL = re.compile(r"[+-]?\d+,\d+")
"""Two whole numbers joined by a comma with no space: how pt-BR writes one number."""
_TOML_AMBIGUOUS = re.compile(
    rf"^[ \t]*(?:({_TOML_KEY})[ \t]*\.[ \t]*)?({_TOML_KEY})[ \t]*=[ \t]*("
    + AMBIGUOUS_NUMBER.pattern.replace("[.,]", r"\.")
    + r")[ \t]*(?:#.*)?$"
)  # a TOML float has a point only


def _as_written(values: dict[str, dict[str, Any]], text: str) -> dict[str, dict[str, Any]]:
    """``a = 1.250`` as the student wrote it: a float that reads two ways keeps its text, so
    that a whole-number part reads it as 1250 (any other reads it as the float it is). Also a
    dotted key before any table (``q9.a = 266.240``) and a quoted one (``"a" = 266.240``)."""
    section = None
    for line in text.splitlines():
        if found := _TOML_SECTION.match(line):
            section = found.group(1)
        elif found := _TOML_AMBIGUOUS.match(line):
            dotted, key, written = found[1], found[2].strip("\"'"), found[3]
            if dotted is not None and section is not None:
                continue  # a key inside the table's own table: no answer's
            question = dotted.strip("\"'") if dotted is not None else section
            parts = values.get(question) if question is not None else None
            if isinstance(parts, dict) and isinstance(parts.get(key), float) and parts[key] == float(written):
                parts[key] = written
    return values


@dataclass(frozen=True)
class NotPython:
    """The parts of a question whose answer cell is not valid Python (``"b": 3,54`` inside a
    dict, a quote left open): the kernel never ran it, and the parts say why, not "blank"."""

    cell: int
    line: int


class Computed:
    """A notebook answer written as code (``2 * 32``, ``report["n_norms"]``): never run, so
    scored with a message saying to write the value itself."""

    def __repr__(self) -> str:
        return "Computed()"


def _literal(node: ast.expr, text: Callable[[ast.expr], str]) -> Any:
    """The value of an answer's literal; a float that reads two ways (``1.250``) as its
    ``text``, as :func:`_as_written` keeps it in an answers file (a whole-number part reads it
    as 1250, any other as the float)."""
    try:
        value = ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
        return Computed()
    if isinstance(value, float) and AMBIGUOUS_NUMBER.fullmatch(written := text(node)) and float(written) == value:
        return written
    if isinstance(value, tuple) and isinstance(node, ast.Tuple) and COMMA_DECIMAL.fullmatch(written := text(node)):
        return written  # "0,302": a decimal comma to the student, a tuple (0, 302) to Python (trial 47)
    return value


def _parts(node: ast.expr, text: Callable[[ast.expr], str]) -> dict[str, Any]:
    """A question's answers from a dict display (or ``dict(a="b", ...)``), part by part: a
    computed part does not cost the literal ones beside it. Anything else reads as no answer."""
    if isinstance(node, ast.Call) and _is_dict_call(node):
        return {word.arg: _literal(word.value, text) for word in node.keywords if word.arg is not None}
    if not isinstance(node, ast.Dict):
        return {}
    parts: dict[str, Any] = {}
    for key, value in zip(node.keys, node.values, strict=True):
        if isinstance(key, ast.Constant) and isinstance(key.value, str):
            parts[key.value] = _literal(value, text)
    return parts


def _is_dict_call(node: ast.Call) -> bool:
    """``dict(a="b", b=3.54)``: keywords only, as a kernel builds the same dict."""
    return (
        isinstance(node.func, ast.Name)
        and node.func.id == "dict"
        and not node.args
        and all(word.arg is not None for word in node.keywords)
    )


def _targets(node: ast.stmt) -> tuple[list[tuple[str, str | None]], ast.expr] | None:
    """([(question id, part id or None for the whole dict)], value) of ``answers_q1 = {...}``
    or ``answers_q1["a"] = ...``, also annotated (``answers_q1: dict = {...}``) or chained
    (``answers_q1 = answers_q2 = {...}``: each, left to right, as the kernel assigns them);
    None for any other statement."""
    targets: list[ast.expr]
    if isinstance(node, ast.AnnAssign) and node.value is not None:
        targets, value = [node.target], node.value
    elif isinstance(node, ast.Assign):
        targets, value = node.targets, node.value
    else:
        return None
    named = [found for target in targets if (found := _answer_name(target)) is not None]
    return (named, value) if named else None


def _answer_name(target: ast.expr) -> tuple[str, str | None] | None:
    """(question id, part id or None) that ``answers_q1`` or ``answers_q1["a"]`` names."""
    if isinstance(target, ast.Name) and target.id.startswith(NOTEBOOK_PREFIX):
        return target.id.removeprefix(NOTEBOOK_PREFIX), None
    if (
        isinstance(target, ast.Subscript)
        and isinstance(target.value, ast.Name)
        and target.value.id.startswith(NOTEBOOK_PREFIX)
        and isinstance(target.slice, ast.Constant)
        and isinstance(target.slice.value, str)
    ):
        return target.value.id.removeprefix(NOTEBOOK_PREFIX), target.slice.value
    return None


def _timed_statement(node: ast.stmt) -> str | None:
    """The statement of ``%time statement``, as the cell's code holds it
    (``get_ipython().run_line_magic('time', 'statement')``), which runs it."""
    args = notebook.magic_call(node, "line")
    if args is None or args[0] != "time":
        return None
    return args[1].strip()  # "%time  answers_q1 = ...": the statement, dedented as IPython runs it


class ByCode(enum.Enum):
    """What :func:`_literal_assignments` reports, in the part's place, for a statement that
    changes ``answers_<id>`` by code: ``.update(...)`` or ``|=`` (the parts are no longer the
    written values), or ``del``. Not a string: a part may be named anything."""

    MUTATED = "mutated"
    DELETED = "deleted"


def _changed_by_code(node: ast.stmt) -> tuple[str, ByCode] | None:
    """(question id, how) for ``answers_q1.update(...)``, ``answers_q1 |= ...`` or ``del answers_q1``."""
    names: list[ast.expr] = []
    how = ByCode.MUTATED
    if isinstance(node, ast.AugAssign):
        names = [node.target]
    elif isinstance(node, ast.Delete):
        names, how = node.targets, ByCode.DELETED
    elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Attribute):
        names = [node.value.func.value]
    for name in names:
        if isinstance(name, ast.Name) and name.id.startswith(NOTEBOOK_PREFIX):
            return name.id.removeprefix(NOTEBOOK_PREFIX), how
    return None


def _literal_assignments(
    code: str, tree: ast.Module | None, stop: int | None = None
) -> list[tuple[str, str | ByCode | None, Any]]:
    """``answers_<id> = {...}`` and ``answers_<id>["a"] = ...`` at the top level of one cell
    (``code``, parsed as ``tree``; None: it does not parse), in order, their values read as
    literals only: (question id, part id or None, value). A change by code gives (question id, a
    :class:`ByCode`, None). ``stop``: the line the cell stopped at when it ran (it raised there);
    what comes from there on never ran."""
    if tree is None:
        return []
    found: list[tuple[str, str | ByCode | None, Any]] = []
    # Where each line starts, found once: ast.get_source_segment scans the cell from its start
    # for every assignment, so a cell of many assignments cost minutes. In UTF-8 bytes and at
    # the line breaks ast counts, as its column offsets are.
    data = code.encode("utf-8", "surrogatepass")
    starts = [0, *(match.end() for match in re.finditer(rb"\r\n|\r|\n", data))]

    def span(node: ast.expr) -> tuple[int, int]:
        end = starts[min((node.end_lineno or node.lineno) - 1, len(starts) - 1)] + (node.end_col_offset or 0)
        return starts[node.lineno - 1] + node.col_offset, end

    def text(node: ast.expr) -> str:
        start, end = span(node)
        return data[start:end].decode("utf-8", "replace") if end - start <= MAX_LITERAL_CHARS else ""

    for node in tree.body:
        if stop is not None and node.lineno >= stop:
            break  # the kernel never got past the line that raised
        if isinstance(node, ast.AugAssign) and (named := _answer_name(node.target)) and named[1] is not None:
            found.append((named[0], named[1], Computed()))  # answers_q2["a"] += [...]: changed by code
            continue
        changed = _changed_by_code(node)
        if changed is not None:
            found.append((changed[0], changed[1], None))
            continue
        timed = _timed_statement(node)
        if timed is not None:  # %time answers_q1 = {...}: the kernel runs the statement
            found += _literal_assignments(timed, notebook.parsed(timed))
            continue
        assigned = _targets(node)
        if assigned is None:
            continue
        names, value_node = assigned
        start, end = span(value_node)
        if end - start > MAX_LITERAL_CHARS:
            continue
        for qid, part in names:
            found.append((qid, part, _parts(value_node, text) if part is None else _literal(value_node, text)))
    return found


MAX_ANSWER_CODE = 1 << 20
"""Characters of code cells read for answers, in all: answer cells are a few lines each, and
parsing megabytes of them cost the grader seconds."""


def from_notebook(raw: bytes | None, stopped: dict[int, int] | None = None) -> Answers:
    """A notebook's answers: the last ``answers_<id>`` assignment of each question (cells in
    order, as a kernel would leave them) and the written-answer cells by their grade id.
    ``stopped``: cell number -> the line that cell stopped at when it ran (0: it did not run);
    an assignment the kernel never reached is not an answer."""
    try:
        nb = notebook.parse(raw) if raw is not None else {}  # its caps, as grading reads it
    except notebook.NotebookUnreadable:
        nb = {}
    values: dict[str, dict[str, Any]] = {}
    not_python: dict[str, NotPython] = {}
    budget, allowance = MAX_ANSWER_CODE, notebook.Allowance()
    nested: Message | None = None
    cells = notebook.cells(nb)
    for cell in cells:
        if cell.kind == "code" and NOTEBOOK_PREFIX in cell.source and budget > 0:
            source = cell.source[: min(notebook.CELL_CAP, budget)]
            budget -= len(source)
            code = notebook.code_as_run(source, allowance)  # %matplotlib above the answers, as run
            tree = notebook.parsed(code)  # once: parsing is most of reading a cell's answers
            for qid, part, value in _literal_assignments(code, tree, (stopped or {}).get(cell.number)):
                _assign(values, qid, part, value)
            if tree is None and len(source) == len(cell.source):  # a cut cell proves nothing
                not_python |= {qid: v for qid, v in _not_python(code, cell.number).items() if qid not in not_python}
            nested = nested or _in_a_block(tree, cell.number)
        grade_id = str(cell.nbgrader.get("grade_id", ""))
        if cell.kind == "markdown" and cell.nbgrader.get("solution") is True and grade_id.endswith("-answer"):
            values.setdefault(grade_id.removesuffix("-answer"), {})[WRITTEN] = cell.source
    for qid, text in written_by_position(cells).items():
        values.setdefault(qid, {}).setdefault(WRITTEN, text)  # its answer cell's metadata was lost
    _mark_not_python(values, not_python)
    return Answers(_folded(values), "notebook", notes=() if nested is None else (nested,))


ANSWER_STATEMENT = re.compile(rf"^[ \t]*{NOTEBOOK_PREFIX}(\w+)\s*(?:\[|=)", re.MULTILINE)


def _not_python(code: str, cell: int) -> dict[str, NotPython]:
    """The questions a cell that does not parse answers, and where it fails."""
    try:
        ast.parse(code)
        line = 0
    except SyntaxError as exc:
        line = exc.lineno or 0
    except (ValueError, RecursionError, MemoryError):
        line = 0
    return {qid.lower(): NotPython(cell, line) for qid in ANSWER_STATEMENT.findall(code)}


def _mark_not_python(values: dict[str, dict[str, Any]], not_python: dict[str, NotPython]) -> None:
    """The parts of a question that only cells which do not parse answer (the kernel ran none of
    them, and a later ``answers_q1["a"] = ...`` raised NameError there): each says so."""
    for question in load_bank().questions:
        found = not_python.get(question.id)
        parts = values.get(question.id, {})
        if found is not None and not any(k != WRITTEN for k in parts):
            values.setdefault(question.id, {}).update({part.id: found for part in question.parts})


def written_by_position(cells: list[notebook.Cell]) -> dict[str, str]:
    """Each written answer found where the release put it, for a notebook whose answer cells
    lost their nbgrader metadata (Colab drops it; a cell deleted and made again has none): every
    text cell after the question's cell, up to the next question's, joined (notes and an answer
    in two cells are all the person grading reads). The question is known by its grade id or
    its first line, the first time only; a cell that carries a grade id is nobody's answer."""
    found: dict[str, list[str]] = {}
    current: str | None = None  # the question the text cells belong to
    for cell in cells:
        if cell.kind != "markdown":
            continue
        grade_id = str(cell.nbgrader.get("grade_id", ""))
        question = grade_id.removesuffix("-question") if grade_id.endswith("-question") else None
        if question is None and not grade_id:
            question = question_by_heading(cell)
        if question is not None and question not in found:
            current = question
            found[current] = []
        elif grade_id:
            current = None
        elif current is not None and not is_blank(cell.source):
            found[current].append(cell.source)
    return {qid: "\n\n".join(texts) for qid, texts in found.items() if texts}


def question_by_heading(cell: notebook.Cell) -> str | None:
    """The question whose released cell ``cell`` is, known by its first line (its metadata lost)."""
    if cell.kind != "markdown":
        return None
    return _headings().get(cell.source.strip().split("\n", 1)[0].strip())


@functools.cache
def _headings() -> dict[str, str]:
    return load_bank().by_heading()


def _answers_variable(target: ast.expr) -> str | None:
    """The ``answers_<id>`` an assignment's target is, or sets a part of (any key)."""
    base = target.value if isinstance(target, ast.Subscript) else target
    return base.id if isinstance(base, ast.Name) and base.id.startswith(NOTEBOOK_PREFIX) else None


def _in_a_block(tree: ast.Module | None, cell: int) -> Message | None:
    """A note when ``answers_<id>`` (or one of its parts, ``answers_q3["c"]``) is assigned
    inside a block (``if``, ``try``, a loop, a function): answers are read from a cell's top
    level only, and such a one would be lost without a word (trial 65: a part set in a loop)."""
    if tree is None:
        return None
    top = set(map(id, tree.body))
    names = sorted(
        {
            name
            for node in ast.walk(tree)
            if isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign) and id(node) not in top
            for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
            if (name := _answers_variable(target)) is not None
        }
    )
    return Message("question.answers_in_block", {"cell": cell, "names": ", ".join(names[:9])}) if names else None


def _assign(values: dict[str, dict[str, Any]], qid: str, part: str | ByCode | None, value: Any) -> None:
    """One answer statement, as the kernel would apply it: a dict replaces the question's
    answers, an item assignment changes one part (only once the dict exists: before, it raised
    NameError), a change by code makes every part computed, ``del`` leaves none. The written part
    comes from its markdown cell."""
    written = {WRITTEN: values[qid][WRITTEN]} if WRITTEN in values.get(qid, {}) else {}
    if part is None:
        values[qid] = {k: v for k, v in value.items() if k != WRITTEN} | written
    elif part is ByCode.MUTATED and qid in values:
        values[qid] = {k: Computed() for k in values[qid] if k != WRITTEN} | written
    elif part is ByCode.DELETED:
        values[qid] = written
    elif isinstance(part, str) and part != WRITTEN and qid in values:
        values[qid][part] = value


def find(
    path: str | Path,
    *,
    beside_lone_file: bool = True,
    stopped: dict[int, int] | None = None,
    elsewhere: Path | None = None,
) -> Answers:
    """The answers of a submission: its notebook, or the answers file beside its exercises.
    ``beside_lone_file=False``: a lone ``.py`` file (or notebook) has no answers file (in a
    class folder the file beside it would be the whole class's, not this student's).
    ``stopped``: see :func:`from_notebook`. ``elsewhere``: the answers file to read when none
    lies beside the work (the one file of a Gradescope upload, in another folder)."""
    origin = Path(path)
    beside = answers_beside(origin)
    downloaded = _downloaded_notebook(origin)
    if origin.suffix == ".ipynb" or downloaded is not None:
        # read whole, as it is graded: plots make 256 KiB notebooks common
        raw = downloaded if downloaded is not None else _read_capped(origin, notebook.MAX_NOTEBOOK_BYTES)
        answers = from_notebook(raw, stopped)
        if not beside_lone_file:
            return answers
        if beside.is_file():
            return _or_beside_notebook(answers, beside, "question.file_read_for_notebook")
        return _or_beside_notebook(answers, elsewhere, "question.file_elsewhere")
    if not origin.is_dir() and not beside_lone_file:
        return Answers({}, ANSWERS_FILE, Message("question.lone_file", {"file": ANSWERS_FILE}))
    note = None
    if not beside.exists() and elsewhere is not None:
        beside, note = elsewhere, Message("question.file_elsewhere", {"file": ANSWERS_FILE})
    if _hard_linked(beside):  # it may be someone else's file: never read through it
        return Answers({}, ANSWERS_FILE, Message("question.file_linked", {"file": ANSWERS_FILE}))
    answers = from_toml(_read_capped(beside))
    if answers.problem is not None or note is None:
        return answers
    return dataclasses.replace(answers, notes=(note, *answers.notes))


def _downloaded_notebook(origin: Path) -> bytes | None:
    """A ``.py`` file that is a notebook's download (see :mod:`grader.script`) as a one-cell
    notebook, for its answers; None for any other file."""
    from grader.submission import MAX_MODULE_BYTES, downloaded_module

    if origin.suffix != ".py" or origin.is_dir():
        return None
    module = downloaded_module(_read_capped(origin, MAX_MODULE_BYTES))
    return None if module is None else script.as_notebook(module)


def _or_beside_notebook(answers: Answers, file: Path | None, said: str) -> Answers:
    """A notebook's answers, or, when its answer cells are all blank, those of the answers file
    handed in beside it (a student who filled in verification.toml); either way said."""
    if file is None or not file.is_file() or _hard_linked(file):
        return answers
    if any(not is_blank(v) for parts in answers.values.values() for k, v in parts.items() if k != WRITTEN):
        return dataclasses.replace(
            answers, notes=(*answers.notes, Message("question.file_not_read", {"file": ANSWERS_FILE}))
        )
    from_file = from_toml(_read_capped(file))
    if from_file.problem is not None:  # a file the student filled in, that we cannot read: said
        return dataclasses.replace(answers, notes=(*answers.notes, from_file.problem))
    values = {qid: dict(parts) for qid, parts in from_file.values.items()}
    for qid, parts in answers.values.items():  # a written answer in the notebook's cell still counts
        if not is_blank(parts.get(WRITTEN)):
            values.setdefault(qid, {})[WRITTEN] = parts[WRITTEN]
    return Answers(values, ANSWERS_FILE, notes=(Message(said, {"file": ANSWERS_FILE}), *from_file.notes))


def _hard_linked(path: Path) -> bool:
    try:
        return path.lstat().st_nlink > 1
    except OSError:
        return False


# -- judging one value ------------------------------------------------------------------------


def written_text(value: Any) -> str:
    """A written answer as the person grading reads it: an answers file may hold a number, a
    list of lines or a table where text was asked for (``written = 42``); it counts as
    answered, so it must not read as "(no answer)"."""
    if value is None or isinstance(value, str):
        return value or ""
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return "\n".join(value)
    return json.dumps(value, ensure_ascii=False, default=str)


def is_blank(value: Any) -> bool:
    return value is None or value == [] or (isinstance(value, str) and value.strip() in BLANK_WRITTEN)


def unanswered(part: Part, value: Any) -> bool:
    """Nothing answered: blank, or no option ticked where several may be. An empty selection
    cannot be told from a part left alone, and scoring it would give points for nothing."""
    return is_blank(value) or (part.kind == "multiple" and _letters(value, True, part.letters) == [])


def _as_number(value: Any, whole: bool = False) -> float | None:
    """``value`` as a number, or None. ``whole``: the part asks for a whole number, so a separator
    before three digits groups thousands, as the student's language writes them."""
    if whole and isinstance(value, str) and THOUSANDS.fullmatch(text := _number_text(value)):
        return float(re.sub(r"[.,]", "", text))
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        try:
            return float(value)
        except OverflowError:  # an int past float's range: no answer we could compare
            return None
    if isinstance(value, str):
        text = _number_text(value)
        if (power := _power_of_ten(text)) is not None:
            return power
        if (both := BOTH_SEPARATORS.fullmatch(text)) is not None:  # "266.240,0", "266,240.0"
            decimal = "," if both["group"] == "." else "."
            text = text.replace(both["group"], "").replace(decimal, ".")
        if SPACE_GROUPED.fullmatch(text):  # "131 072": thousands set apart by spaces, as SI writes them
            text = re.sub(r"[ \u00a0\u202f]", "", text)
        try:
            return float(text.replace(",", "."))  # "0,5" is how pt-BR writes it
        except ValueError:
            return None
    return None


def _plain(text: str) -> str:
    """Text as its reader sees it: accents composed (an "ç" typed as "c" and a combining mark)
    and full-width letters and digits as their ASCII selves (trial 47)."""
    return unicodedata.normalize("NFC", text).translate(FULLWIDTH)


def _number_text(value: str) -> str:
    """A number's text without what only typesets it (a typeset minus sign or dash, a leading
    "~" or "about", a final full stop) or names what it counts ("64 updates", "-0.5774
    (rounded)"). Any other word after the number ("64 thousand", "6 dezenas", "6 or seven", "64
    per layer") leaves it unread: a word may change the number in ways no list of such words
    foresees (red team 41, trials 47 and 48), and ``normlab check`` names an unread answer
    before the hand-in, where a misread one would lose its point in silence."""
    text = _plain(value).strip().translate(MINUS_SIGNS)
    text = FULL_STOP.sub("", SIGN_APART.sub(r"\1", APPROXIMATELY.sub("", ELLIPSIS.sub("", text))))
    words = WORDS_AFTER.search(text)
    if words is not None and _only_names(re.findall(r"[^\W\d]+", words.group().lower())):
        text = text[: words.start()]
    return text


def _only_names(words: list[str]) -> bool:
    """Whether words after a number only name what it counts or remark on it: the lesson's
    nouns, "rounded", a config key; "e"/"and" between them ("atenção e FFN"), not first."""
    if not words or words[0] in ("e", "and"):
        return False
    return all(word in REMARK_WORDS or ("_" in word and word.strip("_")) for word in words)


def _power_of_ten(text: str) -> float | None:
    """ "10^-6", "10**-6", "10⁻⁶", "1.5 × 10^(-6)": a number written with a power of ten."""
    raised = SUPERSCRIPT_POWER.fullmatch(text)
    if raised is not None:
        text = f"{raised[1]}^{raised[2].translate(SUPERSCRIPTS)}"
    found = POWER_OF_TEN.fullmatch(text)
    if found is None or abs(int(found[2])) > 300 or AMBIGUOUS_NUMBER.fullmatch(found[1] or ""):
        return None  # "1,000 × 10^-6" is 1e-3 to one reader and 1e-6 to another
    return float((found[1] or "1").replace(",", ".")) * 10.0 ** int(found[2])


APPROXIMATELY = re.compile(
    r"^(?:[~\u2248\u223c]\s*|(?:cerca de|aprox\.?|aproximadamente|approx\.?|approximately|about|around|roughly"
    r"|em torno de|por volta de)\s+)",
    re.IGNORECASE,
)
""""~3.54", "≈ 3.54", "cerca de 64", "about 128": the student's number, said to be rounded."""
SIGN_APART = re.compile(r"^([+-])\s+(?=\d)")
ELLIPSIS = re.compile(r"(?<=\d)\s*(?:\.\.\.|\u2026)$")
""""2,7182..." and "2.7182…": the digits of a longer number, the rest left out (trial 52)."""
FULL_STOP = re.compile(r"(?<=[\w)])\.$")
"""The full stop that ends a sentence ("3,54."); "128." reads the same without it."""
FULLWIDTH = {0xFF01 + i: 0x21 + i for i in range(94)} | {0x3000: 0x20}
WORDS_AFTER = re.compile(
    r"(?<=[\d\u00b2\u00b3\u00b9\u2070\u2074-\u2079])(?:\s*,)?\s+\(?[^\W\d]+(?:[\s,;]+[^\W\d]+)*\.?\)?\s*$"
)
"""Words after a number (letters, and underscores for a config key): what it counts, or a
remark. Another number among them leaves the answer unread ("64 or 65")."""
REMARK_WORDS = frozenset(
    """
    update updates parameter parameters param params norm norms normalization normalizations
    token tokens layer layers sublayer sublayers block blocks bit bits byte bytes flop flops op ops
    operation operations step steps channel channels dimension dimensions dim dims element elements
    value values head heads residual residuals addition additions add adds sum sums call calls
    weight weights entry entries position positions row rows column columns rounded approx
    approximately exactly total in the of from config model stack stream attention ffn mlp and
    atualização atualizações atualizacao atualizacoes parâmetro parâmetros parametro parametros
    norma normas normalização normalizações normalizacao normalizacoes camada camadas subcamada
    subcamadas bloco blocos operação operações operacao operacoes passo passos canal canais
    dimensão dimensões dimensao dimensoes elemento elementos valor valores cabeça cabeças cabeca
    cabecas soma somas adição adições adicao adicoes chamada chamadas peso pesos posição posições
    posicao posicoes linha linhas coluna colunas arredondado arredondada aprox aproximadamente
    exatamente no na em de da do das dos o a os as modelo pilha atenção atencao e
    delta deltas write writes escrita escritas rmsnorm rmsnorms layernorm layernorms gain gains
    ganho ganhos
    """.split()
)
"""Words that may follow a number without changing it: what the lesson's answers count, and
remarks on rounding or where a value comes from. Any other word leaves the answer unread."""
MINUS_SIGNS = str.maketrans(dict.fromkeys(DASHES, "-"))
BOTH_SEPARATORS = re.compile(r"[+-]?[1-9]\d{0,2}(?:(?P<group>[.,])\d{3})(?:(?P=group)\d{3})*(?!(?P=group))[.,]\d+")
"""Thousands grouped and a decimal part, with the other separator: "266.240,0" and "266,240.0"
are one number to every reader."""
POWER_OF_TEN = re.compile(
    r"(?:([+-]?\d+(?:[.,]\d+)?)\s*[x\u00d7*\u00b7]\s*)?10\s*(?:\^|\*\*)\s*\(?\s*([+-]?\d{1,3})\s*\)?"
)
SUPERSCRIPTS = str.maketrans("\u2070\u00b9\u00b2\u00b3\u2074\u2075\u2076\u2077\u2078\u2079\u207b\u207a", "0123456789-+")
SUPERSCRIPT_POWER = re.compile(r"(.*10)([\u2070\u00b9\u00b2\u00b3\u2074-\u2079\u207b\u207a]+)")
SPACE_GROUPED = re.compile(r"[+-]?\d{1,3}(?:[ \u00a0\u202f]\d{3})+(?:[.,]\d+)?")


OPTION_WORDS = re.compile(
    r"\b(?:letras?|alternativas?|op[çc](?:ão|ao|ões|oes)|options?|letters?|answers?|respostas?)\b\s*:?\s*",
    re.IGNORECASE,
)
""""letra B", "alternativas a, c", "option a and option c": words that only introduce letters."""
E_BETWEEN_LETTERS = r"(?<=[\w)])\s+e\s+(?=[\w(])"
"""Portuguese "e" (and) between two letters, "a e c" (also "a) e c)", "(a) e (c)"); "a, c, e"
ends with an e that is ticked."""


def _letters(value: Any, several: bool = False, options: tuple[str, ...] = ()) -> list[str] | None:
    """A choice's letters, lower-cased; None when it is not a letter or a list of letters.
    Where several may be ticked, a string of letters separated by commas, spaces, ";", "&",
    "and" or "e" ("a, c", "a and c", "a e c") counts as their list: it is what a student means
    ("e" only where no option is called e)."""
    items = list(value) if isinstance(value, list | tuple | set | frozenset) else [value]
    if not all(isinstance(v, str) for v in items):
        return None
    items = [OPTION_WORDS.sub("", _plain(v).strip()) for v in items]
    if several:  # ["a, c"] too: a list of one string that lists them
        joiners = ("" if "e" in options else E_BETWEEN_LETTERS + "|") + r"[,;&\s]+|\band\b"
        items = [piece for v in items for piece in re.split(joiners, v) if piece]
    # "b", "B", "b)", "(b)" and "b." all mean option b.
    return sorted({v.strip().lower().strip("().") for v in items})


def _option_feedback(part: Part, letter: str) -> Message:
    option = next(o for o in part.options if o.id == letter)
    feedback = option.feedback or {}
    return Message(
        "question.option_feedback",
        {"choice": letter, "feedback_en": feedback.get("en", ""), "feedback_pt": feedback.get("pt-BR", "")},
    )


def form_problem(part: Part, value: Any) -> Message | None:
    """Why a non-blank answer is not of the part's form (a number, one letter, a list of
    letters among the options), or None. Says nothing of the key: ``check`` shows it too."""
    if isinstance(value, NotPython):
        return Message("question.cell_not_python", {"part": part.id, "cell": value.cell, "line": value.line})
    if isinstance(value, Computed):
        return Message("question.computed", {"part": part.id})
    allowed = ", ".join(part.letters)
    if part.kind == "number":
        return Message("question.not_a_number", {"part": part.id}) if _as_number(value, part.whole) is None else None
    letters = _letters(value, part.kind == "multiple", part.letters)
    if part.kind == "choice":
        listed = isinstance(value, list | tuple | set | frozenset)  # ["b"] is b; ["b", "d"] is no choice
        if letters is None or (listed and len(value) != 1) or len(letters) != 1 or letters[0] not in part.letters:
            return Message("question.bad_choice", {"part": part.id, "allowed": allowed})
        return None
    if letters is None or not set(letters) <= set(part.letters):
        return Message("question.bad_choices", {"part": part.id, "allowed": allowed})
    return None


def form_problems(bank: Bank, answers: Answers) -> list[tuple[str, Message]]:
    """(question id, why) for every answered part not of its part's form."""
    out = []
    for question in bank.questions:
        given = answers.values.get(question.id, {})
        given = given if isinstance(given, dict) else {}
        for part in question.parts:
            value = given.get(part.id)
            problem = None if unanswered(part, value) else form_problem(part, value)
            if problem is not None:
                out.append((question.id, problem))
    return out


def _judge_number(part: Part, value: Any) -> tuple[float, list[Message]]:
    number = _as_number(value, part.whole)
    if number is None:  # judge checked its form first
        raise ValueError(f"part {part.id}: not a number")
    if part.answer is None or part.tolerance is None:
        raise ValueError(f"part {part.id} has no key: scoring needs the full bank")
    if math.isfinite(number) and abs(number - part.answer) <= part.tolerance + 1e-12 * abs(part.answer):
        return part.points, []
    return 0.0, [Message("question.wrong_number", {"part": part.id})]


def _judge_choice(part: Part, value: Any) -> tuple[float, list[Message]]:
    letters = _letters(value, part.kind == "multiple", part.letters) or []
    if part.kind == "choice":
        if next(o for o in part.options if o.id == letters[0]).correct:
            return part.points, []
        return 0.0, [Message("question.wrong_choice", {"part": part.id}), _option_feedback(part, letters[0])]
    wrong = [o for o in part.options if bool(o.correct) != (o.id in letters)]
    if not wrong:
        return part.points, []
    share = part.points * _ticked_share(part, letters)
    if len(letters) == len(part.options):
        # Every option ticked: which ones are false, or how many, would be the key (or half of it).
        return round(share, 6), [Message("question.all_ticked", {"part": part.id})]
    # Not how many are wrong: with the options named below, the count gave the whole key.
    messages = [Message("question.wrong_choices", {"part": part.id})]
    if len(letters) >= len(part.options) - 1:
        # All but one ticked: the ticked options named false, with the score, tell the last one
        # too (red team 33), so the whole key would come from one submission.
        return round(share, 6), messages
    # Feedback only on options ticked wrongly: the feedback of one left out would reveal the key.
    messages += [_option_feedback(part, o.id) for o in wrong if o.id in letters]
    return round(share, 6), messages


def _ticked_share(part: Part, letters: list[str]) -> float:
    """The share of the true statements ticked, less the share of the false ones ticked (never
    below 0): ticking every option, or none, earns nothing whatever the key."""
    true = [o for o in part.options if o.correct]
    false = [o for o in part.options if not o.correct]
    found = sum(o.id in letters for o in true) / len(true) if true else 1.0
    fooled = sum(o.id in letters for o in false) / len(false) if false else 0.0
    return max(0.0, found - fooled)


def judge(part: Part, value: Any) -> tuple[Status, float, list[Message]]:
    """One auto-graded part's status, points and messages for the student's ``value``."""
    if unanswered(part, value):
        return Status.FAILED, 0.0, [Message("question.blank", {"part": part.id})]
    problem = form_problem(part, value)
    if problem is not None:
        return Status.FAILED, 0.0, [problem]
    if part.kind == "number":
        score, messages = _judge_number(part, value)
    else:
        score, messages = _judge_choice(part, value)
    return (Status.PASSED if score == part.points else Status.FAILED), score, messages


# -- a whole submission -------------------------------------------------------------------------


def _result(question: Question, part: Part, status: Status, score: float, messages: list[Message]) -> CheckResult:
    return CheckResult(
        name=part_name(question.id, part.id),
        exercise=question.id,
        description=part.prompt["en"],
        visibility=Visibility.HIDDEN,
        status=status,
        score=score,
        max_score=part.points,
        messages=tuple(messages),
    )


def score(bank: Bank, answers: Answers) -> tuple[list[CheckResult], list[ManualPart]]:
    """The auto-graded parts' results and the written parts left for a person."""
    if not bank.hidden:
        raise ValueError("scoring needs the full question bank (the keys); this is a student's copy")
    results, manual = [], []
    for question in bank.questions:
        given = answers.values.get(question.id, {})
        given = given if isinstance(given, dict) else {}
        for part in question.parts:
            if answers.problem is not None:
                results.append(_result(question, part, Status.ERROR, 0.0, [answers.problem]))
            else:
                results.append(_result(question, part, *judge(part, given.get(part.id))))
        if question.written is not None:
            manual.append(ManualPart(question.id, question.written.points, not is_blank(given.get(WRITTEN))))
    return results, manual


def blanks(bank: Bank, answers: Answers) -> list[tuple[str, str]]:
    """(question id, part id) of every answer still blank, the written parts included."""
    out = []
    for question in bank.questions:
        given = answers.values.get(question.id, {})
        given = given if isinstance(given, dict) else {}
        out += [(question.id, p.id) for p in question.parts if unanswered(p, given.get(p.id))]
        if question.written is not None and is_blank(given.get(WRITTEN)):
            out.append((question.id, WRITTEN))
    return out


__all__ = ["Answers", "blanks", "find", "from_notebook", "from_toml", "judge", "score"]
