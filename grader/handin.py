"""What to grade in a folder a student handed in: a Gradescope upload, or a student's folder in
a ``grade-class`` class. The work may be a folder of module files, a notebook or a ``.py``
file, at any depth (a zip of the student's folder keeps it, a repository has its own layout),
beside copies, stubs and tools: the candidate that implements the most graded functions is
the work, and a note names it when there was a choice.
"""

from __future__ import annotations

import ast
import itertools
import os
from dataclasses import dataclass
from pathlib import Path

from grader import course, notebook
from grader.course import MODULES, PLAIN_CHECKS
from grader.messages import Message, listed
from grader.questions import ANSWERS_FILE, answers_beside
from grader.submission import MAX_MODULE_BYTES


def find_submission(submission: Path) -> tuple[Path, Message | None]:
    """What to grade in Gradescope's ``submission/``: a folder of module files, a notebook or a
    ``.py`` file, whichever implements the most graded functions (a solved notebook beside the
    released ``exercises/`` folder, a notebook and its untouched copy), with a note naming the
    choice when there were several. The work may sit in a folder: a zip of the student's
    folder, or a GitHub repository, keeps it."""
    files = upload_files(submission)
    modules = {f"{m}.py" for m in MODULES}
    folders: dict[Path, list[Path]] = {}
    for path in files:
        if path.name in modules:
            folders.setdefault(path.parent, []).append(path)
    candidates: dict[Path, list[Path]] = dict(folders)
    shipped = modules | {PLAIN_CHECKS}  # the public tests' helper is never the work
    candidates |= {path: [path] for path in files if path.suffix in (".ipynb", ".py") and path.name not in shipped}
    if len(candidates) <= 1:
        return (next(iter(candidates), submission)), None
    budget = _Budget()
    magics = notebook.Allowance()  # the IPython syntax of all the upload's notebooks, together
    # Counted shallowest first: the budget goes to the work at the top, not to a deep tree.
    order = sorted(candidates, key=lambda c: (len(c.parts), str(c)))
    done = {c: len(set().union(*(_implemented(f, budget, magics) for f in candidates[c]))) for c in order}

    def rank(c: Path) -> tuple[int, int, int, float, int, str]:
        kind = 0 if c in folders else 1 if c.suffix == ".ipynb" else 2  # ties: modules, a notebook, a file
        return (-done[c], -len(candidates[c]), kind, -_saved(c), len(c.parts), str(c))

    ranked = sorted(candidates, key=rank)
    chosen, others = ranked[0], [_shown(c, submission) for c in ranked[1:]]
    said = "submission.several_candidates_tied" if done[ranked[1]] == done[chosen] else "submission.several_candidates"
    return chosen, Message(said, {"graded": _shown(chosen, submission), "others": listed(others)})


def _saved(path: Path) -> float:
    """When a file was last saved (a copy of a notebook and the one worked on implement the
    same: the last saved is the student's), 0 if unknown."""
    try:
        return path.lstat().st_mtime
    except OSError:
        return 0.0


PARSED_CHARS = 2 << 20
"""Characters of code parsed, in all, to count what each candidate implements, and at most
``notebook.MAX_PARSED_CHARS`` of them in one file or cell: a real lab is a few dozen kilobytes,
and an upload made to be slow to parse must not hold the grader or its memory."""
READ_BYTES = 32 << 20
"""Bytes of files read, in all, for the same count. A notebook's code is a small part of its
bytes, so the characters above never bounded what was read: 60 code-free notebooks of 2 MB
each (a zip of a few hundred kilobytes) cost the grader 16 s."""
FILE_BYTES = 4096
"""What reading a file costs the budget at least, however small: opening, reading and parsing
it. 200,000 empty files in one folder took the class's grading process 11 s."""


def _shown(path: Path, submission: Path) -> str:
    """A file's name in the upload as a note shows it: printable, and not too long."""
    name = "".join(ch if ch.isprintable() else "?" for ch in str(path.relative_to(submission)) or ".")
    return name if len(name) <= 80 else name[:77] + "..."


@dataclass
class _Budget:
    """What counting the candidates' functions may still spend, in all."""

    chars: int = PARSED_CHARS
    """Characters of code parsed."""
    bytes: int = READ_BYTES
    """Bytes of files read (a notebook's JSON, its outputs too)."""


def _implemented(path: Path, budget: _Budget, magics: notebook.Allowance) -> set[str]:
    """The graded functions ``path`` defines with a body of its own (a stub's is only a
    docstring and ``raise NotImplementedError``), read as grading reads it: a notebook's cells
    with IPython syntax made Python. Files past their size limit, or past what is left of the
    ``budget``, count as none."""
    limit = notebook.MAX_NOTEBOOK_BYTES if path.suffix == ".ipynb" else MAX_MODULE_BYTES
    try:
        size = path.stat().st_size
        if size > min(limit, budget.bytes) or (path.suffix != ".ipynb" and size > budget.chars):
            return set()
        budget.bytes -= max(size, FILE_BYTES)
        raw = path.read_bytes()
        if path.suffix == ".ipynb":
            sources = [cell.code for cell in notebook.read(raw, magics).cells]
        else:
            sources = [raw.decode("utf-8", "replace")]
    except (OSError, notebook.NotebookUnreadable):
        return set()
    names: set[str] = set()
    for source in sources:
        if len(source) > notebook.MAX_PARSED_CHARS:
            continue
        budget.chars -= len(source)
        if budget.chars < 0:
            break
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        names |= {
            n.name
            for n in tree.body
            if isinstance(n, ast.FunctionDef) and n.name in course.MODULE_OF and not notebook.is_stub(n)
        }
    return names


SEARCHED_DEPTH = 8
SEARCHED_ENTRIES = 10_000
"""How deep and how widely an upload is searched: a zip can hold a thousand nested folders
(``Path.rglob`` recursed once a level and raised RecursionError) or a million files."""


NOT_WORK = {"__MACOSX", "__pycache__", "site-packages", "dist-packages", "node_modules"}
"""Folders that are never a student's work: a zip tool's copies, caches, installed packages (a
committed virtual environment holds a matplotlib/testing/compare.py)."""


def upload_files(submission: Path) -> list[Path]:
    """The upload's regular files, sorted, walked without following a symlink (a linked folder
    could lead to the reference solution in the bundle) and without what a zip tool or an
    editor leaves beside the work (macOS's ``__MACOSX/``, hidden entries such as
    ``.ipynb_checkpoints/``)."""
    found: list[Path] = []
    pending, seen = [(submission, 0)], 0
    while pending and seen < SEARCHED_ENTRIES:
        folder, depth = pending.pop()
        try:
            with os.scandir(folder) as listing:  # one folder may hold a million files: no more than the bound
                entries = list(itertools.islice(listing, SEARCHED_ENTRIES - seen))
        except OSError:
            continue
        for entry in entries:
            seen += 1
            if entry.name in NOT_WORK or entry.name.startswith(".") or entry.is_symlink():
                continue
            if entry.name == "pyvenv.cfg":  # this folder is a virtual environment: none of it is work
                found = [f for f in found if folder not in f.parents]
                pending = [(d, n) for d, n in pending if folder not in d.parents]
                break
            if entry.is_dir(follow_symlinks=False) and depth < SEARCHED_DEPTH:
                pending.append((Path(entry.path), depth + 1))
            elif entry.is_file(follow_symlinks=False):
                found.append(Path(entry.path))
    return sorted(found)


def upload_answers(upload: Path | None, work: Path) -> tuple[Path | None, Message | None]:
    """The answers file to read when none lies beside ``work``: the ``upload``'s one
    ``verification.toml`` at any depth searched. Of several, none (which one is the student's
    would be a guess), with a note naming them when none lies beside the work either."""
    if upload is None:
        return None, None
    found = [path for path in upload_files(upload) if path.name == ANSWERS_FILE]
    if len(found) > 1:  # the released blank template beside the student's own is not a choice
        budget = [BLANK_CHECKED_BYTES]
        found = [path for path in found if not _blank_answers(path, budget)] or found
    if len(found) == 1:
        return found[0], None
    if len(found) > 1 and not answers_beside(work).is_file():
        names = listed([_shown(path, upload) for path in found])
        return None, Message("question.several_files", {"file": ANSWERS_FILE, "files": names})
    return None, None


BLANK_CHECKED_BYTES = 512 << 10
"""Bytes of answers files parsed, in all, to tell the released blank template from a student's
own: a file can be made slow to parse (0.6 s for 250 KB), and an upload may hold hundreds. A file
past this budget counts as filled in."""


def _blank_answers(path: Path, budget: list[int]) -> bool:
    """An answers file with no answer in it (the released template), or none readable; its
    size is spent from ``budget``, and a file it cannot pay for is not blank."""
    from grader import verification

    try:
        size = path.lstat().st_size
    except OSError:
        return True
    if size > budget[0]:
        return False
    budget[0] -= size
    answers = verification.from_toml(verification._read_capped(path))
    return all(verification.is_blank(v) for given in answers.values.values() for v in given.values())


def class_upload(work: Path, class_root: Path) -> tuple[bool, Path | None]:
    """How the answers of ``work``, a class member's hand-in, are read: ``(beside_lone_file,
    upload)`` (see :func:`grader.verification.find`, :func:`upload_answers`). A lone
    ``<student>.py`` or notebook in the class folder has no answers file (the one beside it is
    the whole class's); work found inside a ``<student>/`` folder reads the file beside it,
    else the one answers file of that folder, as a Gradescope upload is read."""
    try:
        parts = work.relative_to(class_root).parts
    except ValueError:
        return True, None
    if len(parts) <= 1:
        return work.is_dir(), None
    return True, class_root / parts[0]


def class_answers(work: Path, class_root: Path) -> tuple[bool, Path | None]:
    """``(beside_lone_file, elsewhere)`` for :func:`grader.verification.find`, as grading reads them."""
    beside, upload = class_upload(work, class_root)
    return beside, upload_answers(upload, work)[0]


__all__ = ["class_answers", "class_upload", "find_submission", "upload_answers", "upload_files"]
