"""The package's public surface stays small, sorted and importable."""

import grader


def test_all_is_sorted_and_importable():
    assert grader.__all__ == sorted(grader.__all__, key=str.lower) or grader.__all__ == sorted(grader.__all__)
    for name in grader.__all__:
        assert hasattr(grader, name), name


def test_model_classes_are_frozen():
    import dataclasses

    from grader.model import CheckResult, Report

    for cls in (CheckResult, Report):
        assert dataclasses.fields(cls) and cls.__dataclass_params__.frozen
