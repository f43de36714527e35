"""nbgrader's native path: the hidden suites inside the student's kernel, with nothing left
behind (the scratch space and the reference's files hold hidden inputs)."""

from __future__ import annotations

import tempfile

import pytest

from grader import course, discovery
from grader.integrations.nbgrader import native


def notebook_namespace(module: str) -> dict[str, object]:
    """A kernel's globals after running the reference module's code in it."""
    namespace: dict[str, object] = {}
    source = (course.solutions_dir() / f"{module}.py").read_text()
    exec(compile(source, f"<{module} cell>", "exec"), namespace)
    return namespace


@pytest.fixture
def private_tmp(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    return tmp_path


def test_hidden_tests_in_the_kernel_give_the_reference_full_points_and_leave_nothing(private_tmp, capsys):
    # inspect_config's tests pass file arguments: both the kernel's scratch and the
    # reference's get hidden inputs written into them.
    earned = native.run_hidden("inspect_config", notebook_namespace("inspect_config"))
    assert earned == sum(test.points for test in discovery.hidden_suite("inspect_config"))
    assert "FAIL" not in capsys.readouterr().out
    assert list(private_tmp.iterdir()) == []


def test_a_suite_that_breaks_mid_run_still_leaves_nothing(private_tmp, monkeypatch):
    def broken(student: object, reference: object) -> None:
        raise RuntimeError("a bug in the suite")

    test = discovery.SuiteTest("test_broken", broken, 1.0, "a broken test")
    monkeypatch.setattr(native.discovery, "hidden_suite", lambda exercise: [test])
    with pytest.raises(RuntimeError, match="a bug in the suite"):
        native.run_hidden("rmsnorm", notebook_namespace("rmsnorm"))
    assert list(private_tmp.iterdir()) == []
