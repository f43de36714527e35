"""Stored reports: an exact round trip, atomic replacement, and refusal of stale or broken files."""

import json

from grader import course
from grader.report.encoding import report_from_data, report_to_data
from grader.report.store import key_of, load_report, save_report, write_atomic
from grader.runner import Options, grade


def test_a_report_survives_a_json_round_trip():
    report = grade(course.exercises_dir(), Options(suites=("public",)))
    assert report_from_data(json.loads(json.dumps(report_to_data(report)))) == report


def test_load_returns_the_report_only_for_the_same_submission(tmp_path):
    report = grade(course.solutions_dir(), Options(suites=("public",)))
    path = tmp_path / "reports" / "alice.json"
    save_report(path, report, key="abc")
    assert load_report(path, "abc") == report
    assert load_report(path, "changed") is None
    path.write_text('{"key": "abc", "report": {"format": 1')  # cut off mid-write
    assert load_report(path, "abc") is None
    assert load_report(tmp_path / "missing.json", "abc") is None


def test_atomic_write_leaves_no_temporary_files(tmp_path):
    target = tmp_path / "done" / "bob"
    write_atomic(target, "one")
    write_atomic(target, "two")
    assert target.read_text() == "two"
    assert [p.name for p in target.parent.iterdir()] == ["bob"]


def test_the_key_of_a_hand_in_changes_with_any_part_and_where_parts_end():
    assert key_of(b"lab.ipynb", b"x") == key_of(b"lab.ipynb", b"x")
    assert key_of(b"lab.ipynb", b"x") != key_of(b"lab.ipynb", b"y")
    assert key_of(b"a", b"bc") != key_of(b"ab", b"c")
    assert key_of(b"a", b"") != key_of(b"a")


def test_the_json_a_person_reads_gives_no_time_for_a_hidden_test_or_the_total():
    """The time of a hidden test is the student's to choose (a sleep per element of a hidden
    input): --json leaves it out; the store, which only the grader reads, keeps it exact."""
    report = grade(course.solutions_dir(), Options(suites=("public", "hidden"), select="rmsnorm"))
    shown = report_to_data(report, "en")["tests"]
    assert {t["visibility"] for t in shown} == {"public", "hidden"}
    assert all((t["seconds"] is None) == (t["visibility"] == "hidden") for t in shown)
    assert all(t["seconds"] is not None for t in report_to_data(report)["tests"])
    # nor the total, which adds them up; the public suite's alone may show it
    assert report_to_data(report, "en")["seconds"] is None and report_to_data(report)["seconds"] > 0
    public = grade(course.solutions_dir(), Options(suites=("public",), select="rmsnorm"))
    assert report_to_data(public, "en")["seconds"] > 0
