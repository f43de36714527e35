"""The quantization experiment (question 7): the reference is right, its documented setup shows
the lesson's point, and the docstring's "when it does not hold" is true."""

import numpy as np
import pytest

from grader import course
from grader.reference import Reference
from grader.suites import _mistakes as m
from grader.suites import test_quantization as suite


@pytest.fixture(scope="module")
def reference():
    ref = Reference(course.solutions_dir())
    yield ref
    ref.close()


def _module(reference):
    return reference._functions["quantization_report"].__globals__


def test_the_hidden_suite_uses_the_documented_setup(reference):
    ours, theirs = suite.quantization_setup(), _module(reference)["quantization_setup"]()
    assert all(np.array_equal(a, b) for a, b in zip(ours, theirs, strict=True))


def test_quantize_is_symmetric_round_to_nearest_on_the_integer_grid(reference):
    w = np.random.default_rng(4).standard_normal((5, 7))
    for bits, qmax in ((8, 127), (4, 7), (2, 1)):
        for axis in (None, 0, -1):
            got = reference.quantize(w, bits, axis=axis)
            scale = np.max(np.abs(w), axis=axis, keepdims=True) / qmax
            q = got / scale
            assert np.allclose(q, np.round(q)) and np.abs(q).max() <= qmax + 1e-9
            assert np.abs(got - w).max() <= scale.max() / 2 + 1e-12  # round to nearest
    assert np.array_equal(reference.quantize(-w, 3), -reference.quantize(w, 3))  # symmetric
    assert np.array_equal(reference.quantize(np.zeros((2, 3)), 2, axis=-1), np.zeros((2, 3)))


def test_every_diagnosed_mistake_differs_from_the_right_answer(reference):
    """A hint can only name a mistake that gives another answer on the suite's inputs."""
    w = np.random.default_rng(5).standard_normal((6, 9))
    for hint_input in ((w, 4, 0, 1.0), (w, 3, None, 0.7), (w, 2, -1, 1.0)):
        right = reference.quantize(*hint_input[:2], axis=hint_input[2], clip=hint_input[3])
        for candidate, hint in m.quantize_variants(*hint_input):
            assert not np.allclose(candidate, right), hint


def test_the_documented_setup_shows_the_lessons_point(reference):
    """The outlier sets the norm's statistic and the per-token scale; 2 bits destroy the ordinary
    channels; float16 overflows in the norm's sum of squares from the 10th norm, at every width."""
    x, weights = suite.quantization_setup()
    report = reference.quantization_report(x, weights)  # rows: float, 8, 4, 2 bits
    assert report["rms"].shape == (4, 13) and report["zeroed"].shape == (4, 12)
    assert (report["outlier_ratio"] > 8).all()
    assert report["zeroed"][0].max() == 0 and report["zeroed"][1].mean() < 0.35
    assert (report["zeroed"][2:] > 0.97).all()
    final = report["error"][:, -1]
    assert final[0] == 0 and final[1] < 0.06 and 0.5 < final[2] < 0.75 and final[3] > 0.85
    overflows = report["overflows"]
    assert (overflows[:, :9] == 0).all() and (overflows[:, 9:] > 0).all()
    assert np.all(np.sum(x**2, axis=-1) < 65504)  # the input itself is fine in float16
    per_column = reference.quantization_report(x, weights, axis=0)["error"][:, -1]
    assert per_column[1] < final[1] and per_column[2] < 0.2 and per_column[3] < final[3]


def test_without_outliers_the_damage_is_rounding_noise(reference):
    """The docstring's counter-case: no outlier channel, no super weight."""
    x, weights = _module(reference)["quantization_setup"](outlier=1.0, super_weight=1 / 8)
    report = reference.quantization_report(x, weights)
    zeroed = report["zeroed"].mean(axis=1)
    assert zeroed[1] < 0.02 and 0.1 < zeroed[2] < 0.2 and 0.75 < zeroed[3] < 0.9
    assert (report["overflows"] == 0).all()
    assert (report["outlier_ratio"] < 5).all()
