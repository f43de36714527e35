"""Red team, class 4: amplification on the trusted side.

Principle (issue 9): memory and output on the trusted side are bounded whatever the student
sends: sizes and shapes are checked before anything is decoded, parsing is iterative with depth
limits, what is not needed is dropped, and tracebacks, notes and reports are capped. Each test
grades one attack with the real CLI and bounds two things:

* the peak resident memory of the grading process itself (``VmHWM`` of ``python -m grader``,
  polled while it runs; the sandboxed worker is a separate process and is not counted):
  ``PEAK_MB``;
* the size of the report it prints: ``REPORT_BYTES``.

The reference, graded the same way, stays within both bounds (so they are not vacuous), and
every attack still gets a report (exit 0).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from redteam_helpers import ATTACKS, SOLUTIONS, normlab, with_module

from grader.notebook import MAX_NOTEBOOK_BYTES

pytestmark = pytest.mark.slow

PEAK_MB = 500
REPORT_BYTES = 2_000_000


def _check(out, what: str) -> None:
    assert out.returncode == 0, f"{what}: no report\n{out.describe()}"
    problems = []
    if out.peak_rss_mb > PEAK_MB:
        problems.append(f"the grading process peaked at {out.peak_rss_mb:.0f} MB (bound {PEAK_MB} MB)")
    if len(out.stdout.encode()) > REPORT_BYTES:
        problems.append(f"the report is {len(out.stdout.encode()):,} bytes (bound {REPORT_BYTES:,})")
    assert not problems, f"{what}: " + "; ".join(problems) + f"\n$ {' '.join(out.args)} ({out.seconds:.1f} s)"


def _code(source: str) -> dict:
    return {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": source}


def statement_flood_notebook(path: Path) -> Path:
    """A 1.8 MB notebook: the reference rmsnorm, then one cell of 600,000 one-name statements.

    Nothing in that cell is a definition, so the extractor drops all of it, but only after
    parsing it and keeping every statement's syntax tree (and source) until the end: about
    1.1 GB in the grading process, from a file a fifth of the notebook size limit."""
    cells = [_code((SOLUTIONS / "rmsnorm.py").read_text()), _code("a\n" * 600_000)]
    path.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    return path


def note_flood_notebook(path: Path) -> Path:
    """A 6.8 MB notebook: the reference rmsnorm, then 200,000 cells holding only ``%``.

    Each is an IPython magic, removed with a note: 200,000 notes, each rendered into every
    report (about 20 MB of text or JSON)."""
    cells = [_code((SOLUTIONS / "rmsnorm.py").read_text())] + [{"cell_type": "code", "source": "%"}] * 200_000
    path.write_text(
        json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, separators=(",", ":"))
    )
    return path


def nested_lists_notebook(path: Path) -> Path:
    """A 20 MB notebook: the reference rmsnorm, and metadata of nested empty lists (trial 51).

    Within the size cap, yet 10 million Python lists once parsed, and the grader parsed it twice:
    1.6 GB and 14 s at 32 MB."""
    return _padded_notebook(path, "[" * 400 + "]" * 400, 25_000)


def _padded_notebook(path: Path, item: str, count: int) -> Path:
    """The reference rmsnorm in one cell, and ``count`` copies of the JSON ``item`` in a list in
    the notebook's metadata (written as text: a list that large is slow to build as objects)."""
    cells = json.dumps([_code((SOLUTIONS / "rmsnorm.py").read_text())])
    pad = ",".join([item] * count)
    path.write_text(f'{{"cells": {cells}, "metadata": {{"pad": [{pad}]}}, "nbformat": 4, "nbformat_minor": 5}}')
    return path


def flood_module(path: Path, first: str = "") -> Path:
    """Trial 51: a 2 MiB ``.py`` file (the module size limit), the reference rmsnorm and then
    one name a line. Parsed whole to tell it from a notebook's download: 1.9 GB and 11 s; with
    ``first`` a magic, to turn it into a module: 2 GB."""
    text = first + (SOLUTIONS / "rmsnorm.py").read_text()
    path.write_text(text + "a\n" * (((2 << 20) - len(text)) // 2))
    return path


def flood_upload(folder: Path) -> Path:
    """A student's folder: the reference in one file, and 512 KB of one-name lines beside it,
    which choosing between the two parsed whole (499 MB, at this suite's bound)."""
    folder.mkdir()
    (folder / "work.py").write_text((SOLUTIONS / "rmsnorm.py").read_text())
    (folder / "scratch.py").write_text("a\n" * 262_000)
    return folder


def flat_list_notebook(path: Path) -> Path:
    """Trial 52: a 32 MB notebook, the reference rmsnorm and 6.7 million two-letter strings in one
    flat list in its metadata: within the size cap and the brackets' count, yet 611 MB of the
    grading process (670 MB of the class's publishing process) once parsed."""
    return _padded_notebook(path, '"ab"', 6_500_000)


MANY_KEYS = """

_reference_report = inspect_config


def inspect_config(config):
    report = _reference_report(config)
    report.update({f"k{i:05d}" + "x" * 32: 0 for i in range(18_000)})
    return report
"""
"""Trial 51: the report plus 18,000 to 21,000 unexpected keys of 40 characters. Each public test named
every one of them: 8 MB of report text, 24 MB as JSON."""


RMSNORM_EXAMPLE = ["--json", "-k", "test_rmsnorm_small_example"]
"""One small public test: enough to show the grading ends, and its report's size."""


def _notebook(build: Callable[[Path], Path]) -> Callable[[Path], Path]:
    """A case's builder that writes its notebook at the case's path, as ``.ipynb``."""
    return lambda tmp: build(tmp.with_suffix(".ipynb"))


# case -> (how to build the submission, CLI arguments after the path)
CASES = {
    "reference --json": (lambda tmp: SOLUTIONS, ["--json"]),
    "reference text": (lambda tmp: SOLUTIONS, []),
    "rmsnorm_forged_huge_traceback.py": (
        lambda tmp: with_module(tmp, "rmsnorm", (ATTACKS / "rmsnorm_forged_huge_traceback.py").read_text()),
        ["--json", "-k", "test_rmsnorm_small_example or test_rmsnorm_brings"],
    ),
    "rmsnorm_forged_nested_frame.py": (
        lambda tmp: with_module(tmp, "rmsnorm", (ATTACKS / "rmsnorm_forged_nested_frame.py").read_text()),
        RMSNORM_EXAMPLE,
    ),
    "statement_flood_notebook": (_notebook(statement_flood_notebook), RMSNORM_EXAMPLE),
    "note_flood_notebook --json": (_notebook(note_flood_notebook), RMSNORM_EXAMPLE),
    "nested_lists_notebook": (_notebook(nested_lists_notebook), RMSNORM_EXAMPLE),
    "flat_list_notebook": (_notebook(flat_list_notebook), RMSNORM_EXAMPLE),
    "inspect_config many extra keys": (
        lambda tmp: with_module(tmp, "inspect_config", (SOLUTIONS / "inspect_config.py").read_text() + MANY_KEYS),
        ["--json", "-k", "test_gpt2 or test_llama_2 or test_note_says_what_the_report_says"],
    ),
    "flood_module": (lambda tmp: flood_module(tmp.with_suffix(".py")), RMSNORM_EXAMPLE),
    "flood_module download": (
        lambda tmp: flood_module(tmp.with_suffix(".py"), "%matplotlib inline\n"),
        RMSNORM_EXAMPLE,
    ),
    "flood_upload": (flood_upload, RMSNORM_EXAMPLE),
    "note_flood_notebook text": (
        _notebook(note_flood_notebook),
        ["-k", "test_rmsnorm_small_example"],
    ),
}


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> dict:
    root = tmp_path_factory.mktemp("amplification")

    def one(item):  # type: ignore[no-untyped-def]
        index, (_name, (build, args)) = item
        path = build(root / f"case{index}")
        if path.suffix == ".ipynb":
            assert path.stat().st_size < MAX_NOTEBOOK_BYTES, "under the notebook size limit"
        return normlab("grade", path, *args)

    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(zip(CASES, pool.map(one, enumerate(CASES.items())), strict=True))


@pytest.mark.parametrize("case", list(CASES))
def test_memory_and_report_stay_bounded(case: str, outcomes: dict) -> None:
    out = outcomes[case]
    _check(out, case)
    if case.startswith("reference"):
        return
    if "--json" in out.args:
        ran = [t for t in json.loads(out.stdout)["tests"] if t["status"] != "skipped"]
        said = {m["id"] for t in ran for m in t["messages"]}
        noted = [m["id"] for m in json.loads(out.stdout)["notes"]]
        if case == "nested_lists_notebook":  # refused before parsing, and said so once, at the top
            assert said == {"fault.submission_unreadable"} and noted[:1] == ["submission.notebook_too_many_values"]
        if case == "flat_list_notebook":
            assert said == {"fault.submission_unreadable"} and noted[:1] == ["submission.notebook_too_many_items"]
        if case == "flood_module download":  # imported as it is, and said why
            notes = [m["id"] for m in json.loads(out.stdout)["notes"]]
            assert notes == ["submission.notebook_script_too_large"], notes
        if case == "inspect_config many extra keys":  # still told which keys are unexpected, some of them
            extra = [m["params"]["extra"] for t in ran for m in t["messages"] if m["id"] == "check.keys"]
            assert len(extra) == 3 and all(e.endswith(", ... (+17990)") for e in extra), extra
        assert ran and all(t["score"] == 0 for t in ran if t["exercise"] == "rmsnorm" and "forged" in case)
