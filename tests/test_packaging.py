"""What the package declares matches what it needs and what CI runs."""

import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_the_declared_minimum_python_is_the_one_tests_run_on_and_tools_target():
    # tomllib (3.11) and enum.StrEnum are used without fallbacks: 3.11 is the floor.
    assert PROJECT["project"]["requires-python"] == ">=3.11"
    assert sys.version_info >= (3, 11)
    assert PROJECT["tool"]["ruff"]["target-version"] == "py311"
    assert PROJECT["tool"]["mypy"]["python_version"] == "3.11"


def test_mypy_is_strict_over_the_whole_grader_suites_included():
    mypy = PROJECT["tool"]["mypy"]
    assert mypy["strict"] is True and mypy["packages"] == ["grader"] and "exclude" not in mypy


def test_no_function_of_the_grader_is_longer_than_sixty_lines():
    import ast

    long = []
    for path in (ROOT / "grader").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.end_lineno - node.lineno >= 60:
                long.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name}")
    assert long == []


def test_nothing_inside_the_sandbox_imports_the_trusted_side():
    import ast

    inside = ROOT / "grader" / "sandbox" / "inside"
    for path in inside.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level == 0:
                assert not (node.module or "").startswith("grader"), f"{path.name} imports {node.module}"
            if isinstance(node, ast.Import):
                assert not any(a.name.startswith("grader") for a in node.names), path.name
