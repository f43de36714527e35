"""One source: exercises/ is generated from solutions/ and never carries solution code."""

import ast

import pytest
from leakscan import docstring_lines

from grader import course, stubs
from grader.course import EXERCISES, MODULE_OF


def test_exercises_are_in_sync_with_solutions():
    assert stubs.differences(course.solutions_dir(), course.exercises_dir()) == []


def _code_without_docstrings(source: str) -> str:
    docstrings = docstring_lines(source)
    return "\n".join("" if n in docstrings else line for n, line in enumerate(source.splitlines(), start=1))


def test_stubs_contain_no_solution_line():
    for module in EXERCISES:
        solution = (course.solutions_dir() / f"{module}.py").read_text()
        stub = _code_without_docstrings((course.exercises_dir() / f"{module}.py").read_text())
        leaked = [line for line in stubs.solution_lines(solution) if line in stub and len(line) > 12]
        assert not leaked, (module, leaked)


def test_every_stubbed_function_raises_not_implemented_with_a_hint():
    for module in EXERCISES:
        tree = ast.parse((course.exercises_dir() / f"{module}.py").read_text())
        raises = [
            n
            for n in ast.walk(tree)
            if isinstance(n, ast.Raise)
            and getattr(n.exc, "func", None)
            and getattr(n.exc.func, "id", "") == "NotImplementedError"
        ]
        assert raises, module
        assert all(n.exc.args and len(n.exc.args[0].value) > 20 for n in raises), module


def test_markers_must_balance():
    with pytest.raises(stubs.StubError):
        stubs.strip_solutions("    ### BEGIN SOLUTION\n    x = 1\n")
    with pytest.raises(stubs.StubError):
        stubs.strip_solutions("### END SOLUTION\n")
    with pytest.raises(stubs.StubError):
        stubs.strip_solutions("### BEGIN SOLUTION\n### BEGIN SOLUTION\n### END SOLUTION\n")


def test_region_becomes_an_indented_raise_with_the_hint():
    source = "def f():\n    ### BEGIN SOLUTION hint: add one\n    return 1\n    ### END SOLUTION\n"
    assert stubs.strip_solutions(source) == "def f():\n    raise NotImplementedError('add one')\n"


def test_manifest_matches_the_public_functions_of_the_solutions():
    for module, functions in EXERCISES.items():
        tree = ast.parse((course.solutions_dir() / f"{module}.py").read_text())
        public = {n.name for n in tree.body if isinstance(n, ast.FunctionDef) and not n.name.startswith("_")}
        assert public == set(functions), module
    assert len(MODULE_OF) == sum(len(f) for f in EXERCISES.values())


def test_docstrings_are_kept_in_stubs():
    for module in EXERCISES:
        solution = ast.parse((course.solutions_dir() / f"{module}.py").read_text())
        stub = ast.parse((course.exercises_dir() / f"{module}.py").read_text())
        docs = {n.name: ast.get_docstring(n) for n in solution.body if isinstance(n, ast.FunctionDef)}
        assert docs == {n.name: ast.get_docstring(n) for n in stub.body if isinstance(n, ast.FunctionDef)}
