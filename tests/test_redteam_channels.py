"""Red team, class 2: student-controlled values echoed in hidden feedback.

Principle (ARCHITECTURE.md, Decision 2; issue 9): the feedback of a hidden test is made only
of the grader's fixed vocabulary and of facts the student already knows. Nothing the worker
reports (names of modified arguments, call counts, numbers of keys, lists of keys, dtype
strings, the index or size of an error, exception types beyond a short fixed list, the way
the process died) may reach it, because a student's code chooses those values and can make
them spell out a hidden input.

The test is differential: each attack in ``tests/attacks_trusted/*_channel_*.py`` encodes a
hidden input together with a constant ``SALT``; it is graded twice, with ``SALT = 0`` and
``SALT = 1``, which differ only in what the student chose to encode. Every hidden test must
give both runs the same feedback, rendered in every language, and must never show ``LEAK``.

A second test uses an oracle for the hidden inputs (the hidden suites run against spy
functions in the in-kernel runner) and requires that no hidden feedback states a hidden
input's shape or numbers, which the grader currently does on its own.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from redteam_helpers import (
    ATTACKS,
    attack_text,
    copy_reference,
    exercises,
    feedback_of,
    grade_many_api,
    hidden_inputs,
    hidden_results,
    with_module,
)

pytestmark = pytest.mark.slow

CHANNELS = sorted(p.name for p in ATTACKS.glob("*_channel_*.py"))
SALTS = (0, 1)
NOT_EXERCISED = {
    "fault.not_implemented",
    "fault.missing",
    "fault.module_missing",
    "fault.import_error",
    "fault.not_callable",
}


def module_of(attack: str) -> str:
    return next(m for m in sorted(exercises(), key=len, reverse=True) if attack.startswith(m + "_"))


@pytest.fixture(scope="module")
def channel_reports(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, int], dict]:
    root = tmp_path_factory.mktemp("channels")
    jobs, keys, selects = [], [], []
    for attack in CHANNELS:
        module = module_of(attack)
        for salt in SALTS:
            path = with_module(root / f"{Path(attack).stem}-salt{salt}", module, attack_text(attack, SALT=salt))
            jobs.append(path)
            keys.append((attack, salt))
            selects.append(f"test_{module}")
    return dict(zip(keys, grade_many_api(jobs, suites="hidden", selects=selects, call_seconds=3.0), strict=True))


def test_every_channel_attack_is_here() -> None:
    assert len(CHANNELS) >= 10, CHANNELS  # the crash-reason attack is measured only (README)


@pytest.mark.parametrize("attack", CHANNELS)
def test_hidden_feedback_does_not_depend_on_what_the_student_encodes(
    attack: str, channel_reports: dict[tuple[str, int], dict]
) -> None:
    runs = [channel_reports[(attack, salt)] for salt in SALTS]
    for report in runs:
        assert "error" not in report, report.get("error")
    exercise = module_of(attack)
    tests = [[r for r in hidden_results(report) if r["exercise"] == exercise] for report in runs]
    assert tests[0] and [r["name"] for r in tests[0]] == [r["name"] for r in tests[1]]
    # Not vacuous: the attack's code ran and was judged (not "not implemented", not missing).
    judged = [r for r in tests[0] if r["messages"] and r["messages"][0]["id"] not in NOT_EXERCISED]
    assert judged, f"{attack}: no hidden test of {exercise} judged the attack's answers"
    problems = []
    for first, second in zip(*tests, strict=True):
        if (first["status"] == "passed") != (second["status"] == "passed"):
            # Pass or fail is the one bit every test gives (security.md, catalog #37): a student
            # who steers how wrong an answer is can flip it, but nothing more.
            continue
        a, b = feedback_of(first), feedback_of(second)
        if a != b:
            problems.append(f"{first['name']}:\n      SALT=0: {a[:300]!r}\n      SALT=1: {b[:300]!r}")
        elif "LEAK" in a:
            problems.append(f"{first['name']}: shows LEAK: {a[:300]!r}")
    assert not problems, (
        f"{attack}: the student's chosen values reach {len(problems)} hidden test(s):\n  " + "\n  ".join(problems[:8])
    )


# -- the grader's own echo of hidden inputs -----------------------------------------------------------


def _patterns(calls: list[dict], description: str) -> set[str]:
    """How a hidden input would read in a message: a shape tuple, a number in a call label."""
    found = set()
    for call in calls:
        if call.get("shape"):
            found.add(str(tuple(call["shape"])))
        elif "value" in call:
            value = call["value"]
            if re.search(rf"(?<![\w.]){re.escape(repr(value))}(?!\w|\.\d)", description):
                continue  # the description already tells the student
            found |= {f"({value!r})", f", {value!r})", f"({value!r},"}
    return {p for p in found if p not in description}


def test_hidden_feedback_states_no_hidden_input(tmp_path: Path) -> None:
    oracle = hidden_inputs(tmp_path / "oracle-tmp")
    assert len(oracle) >= 60, "the oracle saw too few hidden tests"
    reference = copy_reference(tmp_path / "reference")
    wrong = tmp_path / "wrong.py"
    wrong.write_text((ATTACKS / "submission_wrong_everywhere.py").read_text())
    ref_report, report = grade_many_api([reference, wrong], suites="hidden", call_seconds=3.0)
    assert "error" not in report, report.get("error")
    assert ref_report["score"] == ref_report["max_score"], "the reference must get full marks the same way"
    checked, problems = 0, []
    for result in hidden_results(report):
        calls = oracle.get((result["exercise"], result["description"]))
        if not calls:
            continue
        checked += 1
        text = feedback_of(result)
        shown = sorted(p for p in _patterns(calls, result["description"]) if p in text)
        if shown:
            problems.append(f"{result['name']}: {shown} in {text[:160]!r}")
    assert checked >= 60, f"only {checked} hidden tests could be matched to their inputs"
    assert not problems, f"{len(problems)} hidden test(s) state a hidden input:\n  " + "\n  ".join(problems[:80])


RESTART_PROBE = """import os, time
import numpy as np
def rmsnorm(x, gamma, eps=1e-6):
    if {predicate}:
        time.sleep(1.0)  # the restart comes well after the first run's cells
        os._exit(0)
    x64 = x.astype(np.float64)
    return (x64 / np.sqrt(np.mean(x64 * x64, axis=-1, keepdims=True) + eps) * gamma).astype(x.dtype)
"""
RESTART_TRIGGER = """import os, time
if time.time() - os.stat("/submission/cells.json").st_mtime > 0.8:
    os._exit(0)
"""
FORGED_READY = """import gc, os, time
if time.time() - os.stat("/submission/cells.json").st_mtime < 0.8:  # the first run: a ready without outcomes
    [o for o in gc.get_objects() if type(o).__name__ == "Channel"][0].send({"event": "ready"})
"""
RESTART_RAISES = """import os, time
if time.time() - os.stat("/submission/cells.json").st_mtime > 0.8:
    raise RuntimeError("restarted")
"""


@pytest.mark.parametrize("forged", [False, True], ids=["stops", "forged-ready"])
def test_a_cell_that_stops_only_on_a_restart_tells_nothing_visible(tmp_path: Path, forged: bool) -> None:
    """A crash on a hidden input restarts the worker; a second cell that stops the process only
    on a restart was then named in the report's notes, which Gradescope shows at once: one bit
    about the hidden inputs per submission (red team, round 3). Red team, round 10: a first cell
    sending a forged "ready" without outcomes made the restart's outcomes the report's (a cell
    raising only on a restart was named). Two notebooks that differ only in the question asked
    of the hidden inputs must show the same before the due date."""
    import json

    from grader.report import reporters
    from grader.runner import FINAL, Options, grade
    from grader.settings import current

    visible = []
    for width in (32, 64):
        probe = RESTART_PROBE.format(predicate=f"x.dtype == np.float16 and x.shape[-1] == {width}")
        sources = (FORGED_READY, probe, RESTART_RAISES) if forged else (probe, RESTART_TRIGGER)
        cells = [{"cell_type": "code", "metadata": {}, "source": s, "outputs": []} for s in sources]
        path = tmp_path / str(width) / "probe.ipynb"  # one name: the report names the file
        path.parent.mkdir()
        path.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
        report = grade(path, Options(suites=FINAL, select="rmsnorm"))
        settings = current()
        shown = json.loads(reporters.to_gradescope(report, settings.lang, settings.gradescope_visibility))
        visible.append((shown["output"], [t for t in shown["tests"] if t.get("visibility") == "visible"]))
    assert visible[0] == visible[1]


def test_a_students_output_cannot_drive_the_terminal(tmp_path: Path) -> None:
    """Printed on a public test, a student's escape sequences (clear screen, cursor up, a
    window title) could redraw the instructor's terminal with a fake total (red team, round 3):
    the text report shows them as characters."""
    import shutil

    from grader import course
    from grader.report.reporters import to_text
    from grader.runner import Options, grade

    sub = tmp_path / "sub"
    shutil.copytree(course.solutions_dir(), sub)
    source = (sub / "rmsnorm.py").read_text()
    spoof = "    print('\\x1b[2J\\x1b[H\\x1b]0;owned\\x07\\r\\x9b1AFAKE')\n    raise ValueError('\\x1b[31mred')\n"
    marker = "    ### BEGIN SOLUTION hint: square, average"
    assert marker in source
    (sub / "rmsnorm.py").write_text(source.replace(marker, spoof + marker, 1))
    text = to_text(grade(sub, Options(suites=("public",), select="rmsnorm")))
    assert "FAKE" in text and "\\x1b[2J" in text  # shown, as characters
    assert not any(ch in text for ch in "\x1b\x07\r\x9b")


def test_a_cells_exception_draws_no_lines_of_its_own_in_a_report(tmp_path: Path) -> None:
    """Red team, round 10: a cell raising an exception whose type name and message held line
    breaks (and U+2028, a bidi override, an escape) added fake lines ("Total: 278/278") to the
    text report and to results.json, which Gradescope shows at once."""
    import json

    from grader.report import reporters
    from grader.runner import Options, grade

    forged = (
        'E = type("Error\\n\\nTotal: 278/278\\n", (Exception,), {})\n'
        'raise E("one\\nTotal: 999/999\\u2028PASS hidden\\u202eabc\\x1b[2J")\n'
    )
    cells = [{"cell_type": "code", "metadata": {}, "source": forged, "outputs": []}]
    path = tmp_path / "forged.ipynb"
    path.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    report = grade(path, Options(suites=("public",), select="rmsnorm"))
    text = reporters.to_text(report)
    shown = json.loads(reporters.to_gradescope(report))["output"]
    for out in (text, shown):
        lines = out.splitlines()
        assert not any(line.strip().startswith(("Total: 278", "Total: 999", "PASS hidden")) for line in lines), out
        assert not any(ch in out for ch in "\u2028\u202e\x1b")


def test_a_file_name_or_a_test_message_escapes_what_would_draw_lines(tmp_path: Path) -> None:
    """Verification of red team 10: a notebook named with line breaks and an escape sequence
    started a line "Total: 278 of 278" under the report's title; U+2029 was escaped as
    "\\x2029", which reads as "\\x20" and "29"."""
    import json

    from grader.report import reporters
    from grader.runner import Options, grade

    name = tmp_path / "a\n\nTotal: 278 of 278\x1b[2J\u202e.ipynb"
    name.write_text(json.dumps({"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    text = reporters.to_text(grade(name, Options(suites=("public",), select="rmsnorm")))
    assert not any(line.startswith("Total: 278 of 278") for line in text.splitlines())
    assert "\\u202e" in text and "\x1b" not in text
    assert reporters.printable("\u2029") == "\\u2029"
