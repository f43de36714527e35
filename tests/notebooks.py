"""Build student notebooks from the released one, as a student (or an attacker) would."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

from helpers import notebook_answer_cell, reference_answers

from grader.stubs import BEGIN, END

ANSWERS = re.compile(r"^answers_(\w+) = \{", re.MULTILINE)


def load(path: Path) -> dict:
    return json.loads(path.read_text())


def solution_code(source_nb: dict) -> dict[str, str]:
    """The reference code of each solution cell (markers removed), by grade id."""
    out = {}
    for cell in source_nb["cells"]:
        meta = cell["metadata"].get("nbgrader", {})
        if meta.get("solution") and cell["cell_type"] == "code":
            text = "".join(cell["source"])
            out[meta["grade_id"]] = "\n".join(
                line for line in text.split("\n") if BEGIN not in line and END not in line
            )
    return out


def filled(released: dict, source_nb: dict, overrides: dict[str, str] | None = None, answers: bool = True) -> dict:
    """The released notebook with every solution cell answered (``overrides`` by grade id) and
    the questions' auto-graded parts answered as the reference answers them."""
    code = solution_code(source_nb) | (overrides or {})
    nb = copy.deepcopy(released)
    for cell in nb["cells"]:
        meta = cell["metadata"].get("nbgrader", {})
        if meta.get("solution") and cell["cell_type"] == "code":
            cell["source"] = code[meta["grade_id"]]
        elif cell["cell_type"] == "code" and not meta and ANSWERS.search("".join(cell["source"])):
            qid = ANSWERS.search("".join(cell["source"])).group(1)
            cell["source"] = notebook_answer_cell({qid: reference_answers()[qid]})
        elif meta.get("solution") and answers:
            cell["source"] = (
                "Residual connections add each sublayer's update to the stream; norms rescale what it reads."
            )
    return nb


def cell_index(nb: dict, grade_id: str) -> int:
    return next(i for i, c in enumerate(nb["cells"]) if c["metadata"].get("nbgrader", {}).get("grade_id") == grade_id)


def save(nb: dict, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(nb))
    return path
