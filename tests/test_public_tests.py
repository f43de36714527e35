"""The public tests also run with plain pytest, without the grader (students' fallback)."""

import subprocess
import sys

from grader import course


def _pytest(directory):
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(directory)],
        capture_output=True,
        text=True,
        cwd=directory,
        timeout=300,
    )


def test_public_tests_pass_on_the_reference_with_plain_pytest():
    out = _pytest(course.solutions_dir())
    assert out.returncode == 0, out.stdout[-2000:]


def test_public_tests_fail_on_the_stubs_with_plain_pytest():
    out = _pytest(course.exercises_dir())
    assert out.returncode == 1
    assert " passed" not in out.stdout.splitlines()[-1]


def test_every_graded_function_has_a_public_test():
    from grader.course import MODULE_OF

    sources = "".join(p.read_text() for p in course.public_tests())
    untested = [f for f in MODULE_OF if f"student.{f}(" not in sources]
    assert untested == []
