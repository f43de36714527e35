"""``normlab checklist``: the artifact checklist (lesson §15) on a complete and an incomplete sample."""

import shutil
import subprocess
import sys

import pytest
from helpers import copy_solutions, ends_within

from grader import checklist, course
from grader.course import MODULES
from grader.questions import ANSWERS_FILE

DIAGRAM = """# The residual stream

```mermaid
flowchart LR
    E[embedding] --> S0((stream))
    S0 --> N1[RMSNorm] --> A[attention]
    A --> P1((+))
    S0 --> P1
    P1 --> N2[RMSNorm] --> F[FFN] --> P2((+))
    P1 --> P2
    P2 --> NF[final norm] --> L[logits]
```
"""
NOTES = " ".join(
    ["The residual stream is one vector per token that every sublayer reads through a norm and adds to."] * 10
)


def _normlab(*args, cwd=None):
    return subprocess.run(
        [sys.executable, "-m", "grader", *map(str, args)], capture_output=True, text=True, timeout=900, cwd=cwd
    )


def test_a_complete_sample_passes(tmp_path):
    work = copy_solutions(tmp_path / "work")
    shutil.copy(course.solutions_dir() / ANSWERS_FILE, work / ANSWERS_FILE)
    (work / "notes.md").write_text(NOTES)
    (work / "diagram.md").write_text(DIAGRAM)
    out = _normlab("checklist", work)
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.count("✓") == 5 and "✗" not in out.stdout


def test_an_incomplete_sample_names_each_missing_artifact(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    for module in MODULES:
        shutil.copy(course.exercises_dir() / f"{module}.py", work / f"{module}.py")
    shutil.copy(course.exercises_dir() / ANSWERS_FILE, work / ANSWERS_FILE)
    out = _normlab("checklist", work, "--lang", "en")
    assert out.returncode == 1, out.stdout + out.stderr
    rows = {line.split()[1]: line.split()[0] for line in out.stdout.splitlines() if line.strip()[:1] in "✓✗"}
    assert rows == {"code": "✗", "demonstration": "✗", "config": "✗", "notes": "✗", "diagram": "✗"}
    assert "notes.md" in out.stdout and "config_note" in out.stdout and "mermaid" in out.stdout


def test_an_image_is_a_diagram_and_short_notes_are_not_notes(tmp_path):
    (tmp_path / "diagram.png").write_bytes(b"\x89PNG\r\n")
    assert checklist.diagram_item(tmp_path).ok
    (tmp_path / "notes.md").write_text("The stream. " * 20)
    assert not checklist.notes_item(tmp_path).ok


@pytest.mark.parametrize(
    ("block", "problem"),
    [
        ("sequenceDiagram\n A->>B: hi\n", "flowchart"),
        ("flowchart LR\n A --> B\n", "edges"),
        ("flowchart LR\n A --> B --> C --> D --> E((+))\n", "norm"),
        ("flowchart LR\n A --> N[norm] --> C --> D --> E\n", "addition"),
        (DIAGRAM.split("```mermaid\n")[1].split("```")[0], None),
    ],
)
def test_a_mermaid_diagram_needs_its_basic_structure(block, problem):
    assert checklist.mermaid_problem(block) == problem


@pytest.mark.parametrize("run", ["-" * 400_000, "=" * 400_000], ids=["dashes", "equals"])
def test_a_diagram_of_a_long_run_of_arrow_characters_is_read_in_one_pass(run):
    block = "flowchart LR\n A --> B ---> C -.-> D ==> E((+)) norm\n" + run
    assert ends_within(30, lambda: checklist.mermaid_problem(block))
    assert checklist.mermaid_problem(block) is None  # the four arrows before it still count


GEMMA_AS_LLAMA = """Gemma-2-9B (configs/gemma-2-9b.json): RMSNorm with rms_norm_eps = 1e-05, pre-norm, two norms
per layer over 42 layers plus a final norm (85). A server must use RMSNorm with that eps before each
sublayer and before the head; LayerNorm, another eps or post-norm would degrade every output token.
"""


def _note(work, text):
    (work / ANSWERS_FILE).write_text(f'[config_note]\nwritten = """\n{text}"""\n')


def test_the_config_note_is_checked_against_the_config_it_names(tmp_path):
    """On the grader's side the reference reads the named config: a note that describes Gemma-2
    with Llama's facts misses its norm type (1 + weight), eps, placement (sandwich) and count."""
    work = tmp_path / "work"
    work.mkdir()
    _note(work, GEMMA_AS_LLAMA)
    item = checklist.config_note_item(work)
    assert not item.ok and item.detail.id == "checklist.config_note_lacks"
    assert item.detail.params["config"] == "gemma-2-9b.json"
    assert item.detail.params["facts"] == "norm type, eps, placement, number of norms"
    answers = (course.solutions_dir() / ANSWERS_FILE).read_text()
    note = answers.split("[config_note]")[1].split('"""')[1]
    _note(work, note)
    assert checklist.config_note_item(work).detail.id == "checklist.config_note_ok"
    _note(work, note.replace("pre-norm", "post-norm").replace("(65)", "(64)"))
    assert checklist.config_note_item(work).detail.params["facts"] == "placement, number of norms"


@pytest.mark.parametrize(
    ("facts", "text", "missing"),
    [
        (
            {"norm_type": "gemma_rmsnorm", "eps": 1e-6, "placement": "sandwich", "n_norms": 169},
            "RMSNorm scaled by (1 + weight), eps 1e-06, a norm before and after each sublayer: 169 norms.",
            [],
        ),
        (
            {"norm_type": "gemma_rmsnorm", "eps": 1e-6, "placement": "sandwich", "n_norms": 169},
            "RMSNorm, eps 0.000001, sandwich placement, 169 norms.",
            ["norm type"],
        ),
        (
            {"norm_type": "layernorm", "eps": 1e-5, "placement": "parallel", "n_norms": 33},
            "GPT-J: LayerNorm with layer_norm_epsilon 1e-05; attention and MLP run in parallel; 33 norms.",
            [],
        ),
    ],
)
def test_the_facts_a_note_must_state(facts, text, missing):
    assert checklist.missing_facts(text, facts) == missing


def test_a_note_of_a_quarter_megabyte_of_name_characters_is_checked_not_hung_on(tmp_path):
    """Config names were looked for from every position inside a run of name characters: a
    note of 250 KB of them took hours. Now it is one pass; a name in the note still counts."""
    work = tmp_path / "work"
    work.mkdir()
    words = " ".join(["The note names rms_norm_eps and the config it read."] * 20)
    _note(work, words + " " + "_" * 250_000 + " gemma-2-9b.json")
    assert ends_within(30, lambda: checklist.config_note_item(work))
    assert checklist.CONFIG_NAMED.findall("see configs/gemma-2-9b.json, not x.json.") == ["gemma-2-9b.json", "x.json"]
