"""The corpus's ground truth: run every notebook in a real Jupyter kernel and record what happened.

    .venv/bin/python tests/corpus/run_in_jupyter.py            # every notebook -> expected.json
    .venv/bin/python tests/corpus/run_in_jupyter.py NAME.ipynb # only these (others kept as they are)

Each notebook runs top to bottom, as "Restart kernel and run all" does, with nbclient and
ipykernel (``allow_errors=True``, a per-cell timeout) in the ``grading`` environment of
``kernels.py``: numpy and matplotlib only, ``MPLBACKEND=Agg``, scipy / pandas / tqdm /
google.colab not importable, and the config bank in ``configs/`` next to the notebook.

Recorded per notebook, in ``expected.json`` (no timings, no outputs, so a re-run writes the
same file):

* one entry per code cell: ``index`` (0-based among all cells), ``code_index`` (0-based among
  code cells), ``status`` (``ok`` or ``error``); for an error its ``ename`` (and ``module`` for
  an import error) and ``evalue``; ``defines``: the graded function names the cell bound or
  re-bound in the kernel's namespace; ``nbgrader_test``: the grade id of a cell that nbgrader's
  metadata marks as an autograder test cell (not student code);
* ``defined`` / ``missing``: which graded function names are ``callable(globals().get(name))``
  at the end.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parents[1]))

from kernels import NOT_IMPORTABLE_WHEN_GRADING, notebook_client, versions  # noqa: E402

from grader.course import EXERCISES  # noqa: E402

NOTEBOOKS = HERE / "notebooks"
EXPECTED = HERE / "expected.json"
GRADED = [fn for fns in EXERCISES.values() for fn in fns]
CELL_TIMEOUT = 60

# Run between cells with store_history=False: prints, binds nothing in the student's namespace.
_PROBE = (
    "print('\\n@@probe ' + __import__('json').dumps({n: id(globals()[n]) for n in %r if callable(globals().get(n))}))"
)
_CHECK_ENV = (
    "print('\\n@@env ' + __import__('json').dumps("
    "{m: __import__('importlib.util').util.find_spec(m.split('.')[0]) is not None for m in %r}))"
)


def _marked(cell: nbformat.NotebookNode, marker: str) -> dict:
    text = "".join(o.get("text", "") for o in cell.outputs if o.get("output_type") == "stream")
    lines = [line for line in text.splitlines() if line.startswith(marker)]
    if not lines:
        raise RuntimeError(f"the probe printed nothing: {cell.outputs!r}")
    return json.loads(lines[-1][len(marker) :])


def _run_aside(client: NotebookClient, code: str, marker: str) -> dict:
    """Run ``code`` outside the notebook (nbclient would store it in the notebook's cell 0)."""
    cell = nbformat.v4.new_code_cell(code)
    keep = client.nb.cells[0]
    try:
        client.execute_cell(cell, 0, store_history=False)
    finally:
        client.nb.cells[0] = keep
    return _marked(cell, marker)


def _error(cell: nbformat.NotebookNode) -> dict | None:
    errors = [o for o in cell.outputs if o.get("output_type") == "error"]
    if not errors:
        return None
    ename, evalue = errors[-1]["ename"], errors[-1]["evalue"]
    # ipykernel names a cell's code after a hash of it: keep the line, drop the file name
    evalue = re.sub(r"\(\s*(?:\d+|<[^>]+>)\.py, line (\d+)\)", r"(line \1)", evalue)
    out = {"ename": ename, "evalue": evalue[:300]}
    module = re.match(r"No module named '([^']+)'", evalue)
    if module and ename in ("ModuleNotFoundError", "ImportError"):
        out["module"] = module.group(1)
    return out


def run_notebook(path: Path) -> dict:
    nb = nbformat.read(str(path), as_version=4)
    record: dict = {"cells": []}
    with notebook_client(nb, "grading", timeout=CELL_TIMEOUT) as client:
        found = _run_aside(client, _CHECK_ENV % (NOT_IMPORTABLE_WHEN_GRADING,), "@@env ")
        leaked = [m for m, importable in found.items() if importable]
        if leaked:
            raise RuntimeError(f"the grading kernel can import {leaked}: it must not")
        before: dict = {}
        code_index = 0
        for index, cell in enumerate(nb.cells):
            if cell.cell_type != "code":
                continue
            client.execute_cell(cell, index)
            after = _run_aside(client, _PROBE % (GRADED,), "@@probe ")
            entry: dict = {"index": index, "code_index": code_index}
            error = _error(cell)
            entry["status"] = "error" if error else "ok"
            entry.update(error or {})
            entry["defines"] = [n for n in GRADED if n in after and before.get(n) != after[n]]
            meta = cell.metadata.get("nbgrader", {})
            if meta.get("grade") and not meta.get("solution"):
                entry["nbgrader_test"] = meta.get("grade_id", True)  # an autograder test cell
            record["cells"].append(entry)
            before = after
            code_index += 1
    record["defined"] = [n for n in GRADED if n in before]
    record["missing"] = [n for n in GRADED if n not in before]
    return record


def main(argv: list[str]) -> int:
    names = argv or sorted(p.name for p in NOTEBOOKS.glob("*.ipynb"))
    data = json.loads(EXPECTED.read_text()) if argv and EXPECTED.exists() else {}
    notebooks = data.get("notebooks", {})
    for name in names:
        print(f"running {name} ...", file=sys.stderr)
        notebooks[name] = run_notebook(NOTEBOOKS / name)
    present = {p.name for p in NOTEBOOKS.glob("*.ipynb")}
    data = {
        "about": "Ground truth written by tests/corpus/run_in_jupyter.py: what a real Jupyter kernel does "
        "with each corpus notebook. Cell indexes are 0-based (index: among all cells; code_index: among "
        "code cells).",
        "kernel": {"environment": "grading", "packages": versions("grading"), "cell_timeout_s": CELL_TIMEOUT},
        "graded_functions": GRADED,
        "notebooks": {k: notebooks[k] for k in sorted(notebooks) if k in present},
    }
    EXPECTED.write_text(json.dumps(data, indent=1) + "\n")
    for name, rec in data["notebooks"].items():
        failed = [c["index"] for c in rec["cells"] if c["status"] == "error"]
        print(f"{name}: failed cells {failed}, missing {rec['missing']}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
