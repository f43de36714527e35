"""Red team, class 3: a student's value becomes a grader fault.

Principle (issue 9): an exception raised while handling a student's value is that student's
outcome (a zero on that test, with a message), never a grader fault; every writer (text, JSON,
Gradescope, CSV, to stdout or to a file) survives any Python string and any file name. So each
attack below must leave ``normlab grade`` with exit status 0 and a complete report in every
format, whatever the attack did. The reference, graded the same way, gets full marks.

Today: an integer beyond float's range and a sublayer called with a list stop the grading
(exit 3, no score); a lone UTF-16 surrogate printed or raised by the student, or a submission
file name that is not UTF-8, make the writers raise UnicodeEncodeError (exit 3, no report).
"""

from __future__ import annotations

import json
import os
import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from redteam_helpers import ATTACKS, NORMLAB, SOLUTIONS, internal, normlab, run, with_module

pytestmark = pytest.mark.slow

FORMATS = ("text", "json", "gradescope", "csv")
ATTACKS_3 = (
    ("compare_overflow_about_zero.py", "compare", "test_shift_response"),
    ("residual_sublayer_called_with_a_list.py", "residual", "test_block_sublayer_reads_the_normalized_stream"),
    ("rmsnorm_print_surrogate.py", "rmsnorm", "test_rmsnorm"),
    ("rmsnorm_exception_surrogate.py", "rmsnorm", "test_rmsnorm"),
)


GRADING_FAULTS = {"compare_overflow_about_zero.py", "residual_sublayer_called_with_a_list.py"}
"""These stop the grading itself, whatever the format: one format is enough to show it."""


def _cases() -> list[tuple[str, str, bool]]:
    return [
        (attack, fmt, to_file)
        for attack, _, _ in ATTACKS_3
        for fmt in (("json",) if attack in GRADING_FAULTS else FORMATS)
        for to_file in ((False,) if attack in GRADING_FAULTS else (False, True))
    ]


def _check_output(fmt: str, text: str) -> None:
    """The report is complete: it parses and carries a score."""
    if fmt == "json":
        data = json.loads(text)
        assert data["max_score"] > 0 and data["tests"], "an empty JSON report"
    elif fmt == "gradescope":
        data = json.loads(text)
        assert data["tests"] and "score" in data, "an empty results.json"
    elif fmt == "csv":
        assert text.splitlines()[-1].startswith("TOTAL,"), text[-300:]
    else:
        assert "Total:" in text or "Total" in text.splitlines()[-1], text[-300:]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str, bool], tuple]:
    root = tmp_path_factory.mktemp("faults")
    submissions = {}
    for attack, module, _ in ATTACKS_3:
        submissions[attack] = with_module(root / Path(attack).stem, module, (ATTACKS / attack).read_text())
    selects = {attack: test for attack, _, test in ATTACKS_3}

    def one(case: tuple[str, str, bool]) -> tuple:
        attack, fmt, to_file = case
        out_file = root / f"{Path(attack).stem}.{fmt}.out"
        args = ["grade", submissions[attack], "--format", fmt, "-k", selects[attack]]
        result = normlab(*args, *(["-o", out_file] if to_file else []))
        text = out_file.read_bytes().decode("utf-8", "backslashreplace") if to_file and out_file.exists() else ""
        return result, (text if to_file else result.stdout)

    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(zip(_cases(), pool.map(one, _cases()), strict=True))


@pytest.mark.parametrize(("attack", "fmt", "to_file"), _cases(), ids=lambda v: str(v))
def test_a_student_value_never_stops_grading_or_writing(
    attack: str, fmt: str, to_file: bool, runs: dict[tuple[str, str, bool], tuple]
) -> None:
    result, text = runs[(attack, fmt, to_file)]
    assert result.returncode == 0, f"{attack}, --format {fmt}{' -o FILE' if to_file else ''}:\n{result.describe()}"
    _check_output(fmt, text)


def test_the_same_runs_give_the_reference_full_marks(tmp_path: Path) -> None:
    for fmt in FORMATS:
        out = normlab(
            "grade", SOLUTIONS, "--format", fmt, "-k", "test_shift_response or test_rmsnorm", "-o", tmp_path / fmt
        )
        assert out.returncode == 0, out.describe()
        _check_output(fmt, (tmp_path / fmt).read_text())
    ran = [t for t in json.loads((tmp_path / "json").read_text())["tests"] if t["status"] != "skipped"]
    assert ran and all(t["score"] == t["max_score"] for t in ran)


# -- file names that are not UTF-8 ---------------------------------------------------------------------


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_submission_file_name_that_is_not_utf8(fmt: str, tmp_path: Path) -> None:
    folder = os.fsencode(tmp_path)
    name = os.path.join(folder, b"student-\xff\xfe.py")
    shutil.copy(SOLUTIONS / "rmsnorm.py", name)
    target = tmp_path / f"report.{fmt}"
    for extra in ([], ["-o", target]):
        out = run([*NORMLAB, "grade", name, "--format", fmt, "-k", "test_sequence_of_tokens", *extra])
        assert out.returncode == 0, f"--format {fmt} {' '.join(map(str, extra))}:\n{out.describe()}"
    _check_output(fmt, target.read_bytes().decode("utf-8", "backslashreplace"))


# -- the Gradescope entry point -------------------------------------------------------------------------


def test_gradescope_results_json_survives_a_surrogate(tmp_path: Path) -> None:
    """``run_autograder`` grades ``submission/`` and must always leave a results.json."""
    root = tmp_path / "autograder"
    submission = with_module(root / "submission", "rmsnorm", (ATTACKS / "rmsnorm_print_surrogate.py").read_text())
    assert submission.is_dir()
    entry = internal("gradescope_entry")
    out = run([*entry, root], timeout=600)
    results = root / "results" / "results.json"
    assert out.returncode == 0, out.describe()
    data = json.loads(results.read_text())
    assert data["tests"] and 0 < data["score"] < sum(t["max_score"] for t in data["tests"])


def test_a_notebook_with_a_surrogate_in_its_code_is_graded() -> None:
    """Held today (the cell is skipped with a note): kept so that a fix elsewhere keeps it."""
    out = normlab("grade", ATTACKS / "nb_surrogate_in_code.ipynb", "--json", "-k", "test_rmsnorm_small_example")
    assert out.returncode == 0, out.describe()
    _check_output("json", out.stdout)
