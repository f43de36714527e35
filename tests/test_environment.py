"""Building the environment student code runs in: two builds of the same packages at once.

Two ``make`` runs on one machine (two courses, or a test run beside an instructor's) build the
same environment into the same cache folder; the second to finish must use the first's copy,
not crash. The registry install is replaced here by the other build finishing while ours runs:
the race is the subject, not pip.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from grader.faults import GraderFault
from grader.sandbox import environment


def _other_build_finishes_first(monkeypatch: pytest.MonkeyPatch, root: Path, marker: bool) -> None:
    """``venv`` makes an empty folder; during ``pip install`` the target appears (with its
    marker when ``marker``), as another process's finished build would."""

    def run(command: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
        if command[1:3] == ["-m", "venv"]:
            (Path(command[3]) / "bin").mkdir(parents=True)
        else:
            target = environment.location(environment.requirements(("numpy",)), root)
            (target / "bin").mkdir(parents=True)
            if marker:
                (target / environment.MARKER).write_text('{"requirements": ["other build"]}\n')
        return subprocess.CompletedProcess(command, 0, "", "")

    monkeypatch.setattr(environment.subprocess, "run", run)


def test_a_build_that_loses_the_race_uses_the_winners_environment(tmp_path, monkeypatch):
    _other_build_finishes_first(monkeypatch, tmp_path, marker=True)
    built = environment.build(("numpy",), tmp_path)
    assert (built.path / environment.MARKER).read_text() == '{"requirements": ["other build"]}\n'
    assert [p.name for p in tmp_path.iterdir()] == [built.path.name]  # our staging copy is gone


def test_a_folder_in_the_way_is_a_clear_error(tmp_path, monkeypatch):
    _other_build_finishes_first(monkeypatch, tmp_path, marker=False)
    with pytest.raises(GraderFault, match="in the way of the environment for student code"):
        environment.build(("numpy",), tmp_path)
    assert len(list(tmp_path.iterdir())) == 1  # the staging copy is removed all the same
