"""``normlab checklist``: the lesson's artifact checklist (§15), checked on a student's work.

Five artifacts, each a row of ✓ or ✗ with what was found:

* **code**: the public tests of ``rmsnorm.py``, ``layernorm.py`` and ``residual.py`` pass;
* **demonstration**: the lab's demonstrations, computed by the student's own functions in the
  worker (values, never printed text): RMSNorm brings any scale to RMS ~1, the pre-norm block
  keeps the signal, and the gradient-path experiment runs;
* **config note**: the ``config_note`` written part of ``verification.toml`` names a config's
  eps key and is a paragraph (``CONFIG_NOTE_WORDS`` words or more); where the reference is (the
  grader's copy), it is also checked against the config it names (``configs/<file>.json``): the
  norm type, eps, placement and number of norms the reference reads from that config;
* **notes**: ``notes.md`` holds the residual-stream notes (``NOTES_WORDS`` words or more);
* **diagram**: an image (``diagram.png``, ``.svg``, ``.jpg``, ``.pdf``) or a Mermaid flowchart
  in ``diagram.md`` or ``notes.md`` with the basic structure (a flowchart, edges, a norm and an
  addition).

A student's copy checks what can be checked without the reference (presence, structure, the
public tests) and says what the grader will check as well; the hidden tests and the written
parts are graded by ``normlab grade`` and by a person.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from grader.messages import Message
from grader.model import Report, Status
from grader.questions import ANSWERS_FILE
from grader.verification import find

NOTES_FILE = "notes.md"
DIAGRAM_MARKDOWN = "diagram.md"
DIAGRAM_IMAGES = ("diagram.png", "diagram.svg", "diagram.jpg", "diagram.jpeg", "diagram.pdf")
NOTES_WORDS = 150
"""The documented minimum length of the residual-stream notes."""
CONFIG_NOTE_WORDS = 40
"""The documented minimum length of the config note's paragraph."""
EPS_KEYS = ("rms_norm_eps", "layer_norm_eps", "layer_norm_epsilon", "norm_eps", "norm_epsilon")
CODE_EXERCISES = ("rmsnorm", "layernorm", "residual")
DEMONSTRATIONS = (
    "rmsnorm/public/test_rmsnorm_brings_any_scale_to_unit_rms",
    "residual/public/test_block_keeps_the_signal",
    "gradient_path/public/test_gradient_path_of_a_small_stack",
)
MERMAID = re.compile(r"```mermaid\s*\n(.*?)```", re.DOTALL)
MAX_TEXT_BYTES = 1 << 20


@dataclass(frozen=True)
class Item:
    """One artifact: whether it is there, and what was found (or is missing)."""

    artifact: str
    """``code``, ``demonstration``, ``config_note``, ``notes`` or ``diagram``."""
    ok: bool
    detail: Message


def _text(path: Path) -> str | None:
    from grader.submission import _read_regular

    data = _read_regular(path, MAX_TEXT_BYTES)
    return None if data is None else data[:MAX_TEXT_BYTES].decode("utf-8", "replace")


def _words(text: str) -> int:
    return len(re.findall(r"\w+", text))


def code_item(report: Report) -> Item:
    rows = [r for r in report.results if r.exercise in CODE_EXERCISES]
    failing = sorted({r.exercise for r in rows if r.status is not Status.PASSED})
    if rows and not failing:
        return Item("code", True, Message("checklist.code_ok", {"count": len(rows)}))
    return Item("code", False, Message("checklist.code_failing", {"exercises": ", ".join(failing) or "-"}))


def demonstration_item(report: Report) -> Item:
    passed = {r.name for r in report.results if r.status is Status.PASSED}
    missing = [name.rsplit("/", 1)[-1] for name in DEMONSTRATIONS if name not in passed]
    if not missing:
        return Item("demonstration", True, Message("checklist.demonstration_ok"))
    return Item("demonstration", False, Message("checklist.demonstration_failing", {"tests": ", ".join(missing)}))


def config_note_item(folder: Path) -> Item:
    answers = find(folder)
    note = answers.values.get("config_note", {})
    text = note.get("written", "") if isinstance(note, dict) else ""
    text = text if isinstance(text, str) else ""
    keys = [k for k in EPS_KEYS if k in text]
    if answers.problem is not None or _words(text) < CONFIG_NOTE_WORDS or not keys:
        params = {"file": ANSWERS_FILE, "words": _words(text), "minimum": CONFIG_NOTE_WORDS}
        return Item("config_note", False, Message("checklist.config_note_missing", params))
    found = {"words": _words(text), "key": keys[0]}
    contract = reference_contract(text)
    if contract is None:  # a student's copy: no reference to compare with
        return Item("config_note", True, Message("checklist.config_note_ok_here", found))
    config, facts = contract
    missing = missing_facts(text, facts)
    if missing:
        return Item(
            "config_note",
            False,
            Message("checklist.config_note_lacks", {"config": config, "facts": ", ".join(missing)}),
        )
    return Item("config_note", True, Message("checklist.config_note_ok", {**found, "config": config}))


CONFIG_NAMED = re.compile(r"(?<![\w.\-])([\w.\-]+\.json)")
"""A config's file name, from where a name starts: tried inside a run of name characters as well,
a note of 250 KB of them took hours."""
NORM_WORDS = {
    "rmsnorm": re.compile(r"\brms\s*-?norm", re.IGNORECASE),
    "layernorm": re.compile(r"\blayer\s*-?norm", re.IGNORECASE),
    "gemma_rmsnorm": re.compile(r"1\s*\+\s*(the\s+)?weight", re.IGNORECASE),
}
PLACEMENT_WORDS = {
    "pre": re.compile(r"\bpre[\s-]*(norm|ln|layer\s*norm)|before (each|every) sublayer", re.IGNORECASE),
    "post": re.compile(r"\bpost[\s-]*(norm|ln|layer\s*norm)|after the (residual|sum|addition)", re.IGNORECASE),
    "sandwich": re.compile(r"sandwich|before and after", re.IGNORECASE),
    "post_sublayer": re.compile(r"post[\s_-]*sublayer|(sublayer|its) outputs? (is )?normali[sz]ed", re.IGNORECASE),
    "parallel": re.compile(r"parallel", re.IGNORECASE),
}


def reference_contract(text: str) -> tuple[str, dict[str, object]] | None:
    """The config the note names (a file of ``configs/``) and what the reference reads from it;
    None without the reference (a student's copy) or when the note names no config of the bank."""
    from grader import course

    solution = course.solutions_dir() / "inspect_config.py"
    configs = course.exercises_dir() / "configs"
    named = [name for name in CONFIG_NAMED.findall(text) if (configs / Path(name).name).is_file()]
    if not solution.is_file() or not named:
        return None
    from grader.reference import Reference

    reference = Reference(course.solutions_dir())
    try:
        return named[0], dict(reference.inspect_config(str(configs / Path(named[0]).name)))
    finally:
        reference.close()


def missing_facts(text: str, facts: dict[str, object]) -> list[str]:
    """Which of the config's facts (norm type, eps, placement, number of norms) the note omits."""
    missing = []
    norm = str(facts["norm_type"])
    if not NORM_WORDS["rmsnorm" if norm == "gemma_rmsnorm" else norm].search(text) or (
        norm == "gemma_rmsnorm" and not NORM_WORDS[norm].search(text)
    ):
        missing.append("norm type")
    numbers = [float(n) for n in re.findall(r"(?<![\w.])\d+(?:\.\d+)?(?:[eE][-+]?\d+)?", text)]
    if not any(abs(n - float(str(facts["eps"]))) <= 1e-9 * abs(float(str(facts["eps"]))) for n in numbers):
        missing.append("eps")
    pattern = PLACEMENT_WORDS.get(str(facts["placement"]))
    if pattern is not None and not pattern.search(text):
        missing.append("placement")
    if float(str(facts["n_norms"])) not in numbers:
        missing.append("number of norms")
    return missing


def notes_item(folder: Path) -> Item:
    text = _text(folder / NOTES_FILE) or ""
    words = _words(MERMAID.sub("", text))
    params = {"file": NOTES_FILE, "words": words, "minimum": NOTES_WORDS}
    return Item(
        "notes",
        words >= NOTES_WORDS,
        Message("checklist.notes_ok" if words >= NOTES_WORDS else "checklist.notes_missing", params),
    )


EDGES = re.compile(r"(?<!-)--+>|-\.+->|(?<!=)==+>")
"""Mermaid's arrows, each from where it starts: tried from inside a run of dashes too, a diagram
of 1 MB of them cost the square of its length."""


def mermaid_problem(block: str) -> str | None:
    """What a Mermaid residual-stream diagram lacks, or None when its basic structure is there."""
    lines = [ln.strip() for ln in block.splitlines() if ln.strip() and not ln.strip().startswith("%%")]
    if not lines or not re.match(r"(flowchart|graph)\b", lines[0]):
        return "flowchart"
    if len(EDGES.findall(block)) < 4:
        return "edges"
    if not re.search(r"norm", block, re.IGNORECASE):
        return "norm"
    if not re.search(r"\+|\badd\b|\bsum\b|\bsoma\b", block, re.IGNORECASE):
        return "addition"
    return None


def diagram_item(folder: Path) -> Item:
    for name in DIAGRAM_IMAGES:
        path = folder / name
        if path.is_file() and not path.is_symlink() and path.stat().st_size > 0:
            return Item("diagram", True, Message("checklist.diagram_image", {"file": name}))
    problems = []
    for name in (DIAGRAM_MARKDOWN, NOTES_FILE):
        for block in MERMAID.findall(_text(folder / name) or ""):
            problem = mermaid_problem(block)
            if problem is None:
                return Item("diagram", True, Message("checklist.diagram_mermaid", {"file": name}))
            problems.append(problem)
    if problems:
        return Item("diagram", False, Message(f"checklist.diagram_lacks_{problems[0]}"))
    return Item("diagram", False, Message("checklist.diagram_missing", {"file": DIAGRAM_MARKDOWN}))


def check(folder: Path, report: Report) -> list[Item]:
    """Every artifact of the checklist, from the student's folder and a public-tests report."""
    checks: list[Callable[[], Item]] = [
        lambda: code_item(report),
        lambda: demonstration_item(report),
        lambda: config_note_item(folder),
        lambda: notes_item(folder),
        lambda: diagram_item(folder),
    ]
    return [item() for item in checks]


__all__ = ["Item", "check", "mermaid_problem"]
