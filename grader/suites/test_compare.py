"""Hidden tests for compare.py. Docstrings are what the student sees; inputs stay here."""

import numpy as np
import pytest

from grader.checks import expect, expect_keys, expect_untouched, expect_value
from grader.proxy import StudentProxy
from grader.reference import Reference

NORMS = ("rmsnorm", "layernorm")
FIELDS = ("flops", "reductions", "params")


def _check_counts(student: StudentProxy, reference: Reference, C: int) -> None:
    got, want = student.op_counts(C), reference.op_counts(C)
    # Labels name the width by its symbol: the width itself is a hidden input.
    expect_keys(got, NORMS, what="op_counts(C)")
    for norm in NORMS:
        expect_keys(got[norm], FIELDS, what=f'op_counts(C)["{norm}"]')
        for field in FIELDS:
            expect_value(got[norm][field], want[norm][field], what=f'op_counts(C)["{norm}"]["{field}"]')


@pytest.mark.points(2)
def test_op_counts_typical_width(student: StudentProxy, reference: Reference) -> None:
    """op_counts follows the counting convention in the docstring for a typical width."""
    _check_counts(student, reference, 4096)


@pytest.mark.points(1)
def test_op_counts_width_one(student: StudentProxy, reference: Reference) -> None:
    """op_counts is right at the smallest width, a single feature."""
    _check_counts(student, reference, 1)


@pytest.mark.points(1)
def test_op_counts_odd_width(student: StudentProxy, reference: Reference) -> None:
    """op_counts is right for an odd width (the counts are not just proportional to C)."""
    _check_counts(student, reference, 77)


def _check_response(
    student: StudentProxy, reference: Reference, rng: np.random.Generator, name: str, amount: float
) -> None:
    x = rng.standard_normal((4, 6, 32)) * 2.0 + 0.5
    got = getattr(student, name)(x, amount)
    want = getattr(reference, name)(x, amount)
    expect_keys(got, NORMS, what=f"{name}(x, ...)")
    for norm in NORMS:
        what = f'{name}(x, ...)["{norm}"]'
        if want[norm] > 1e-8:
            expect_value(got[norm], want[norm], what=what, rel=1e-6)
        else:
            # Round-off differs between correct implementations; what matters is "about zero".
            value = got[norm]
            real = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)
            expect(real and abs(float(value)) < 1e-8, "check.about_zero", what=what)


@pytest.mark.points(2)
def test_shift_response(student: StudentProxy, reference: Reference, rng: np.random.Generator) -> None:
    """shift_response measures how far each norm's output moves when a constant is added."""
    _check_response(student, reference, rng, "shift_response", 3.0)


@pytest.mark.points(1)
def test_shift_response_negative_shift(student: StudentProxy, reference: Reference, rng: np.random.Generator) -> None:
    """shift_response also works for a negative shift."""
    _check_response(student, reference, rng, "shift_response", -7.5)


@pytest.mark.points(1)
def test_responses_leave_x_unchanged(student: StudentProxy, reference: Reference, rng: np.random.Generator) -> None:
    """shift_response and scale_response leave x exactly as it was (no in-place operations)."""
    for name, amount in (("shift_response", 3.0), ("scale_response", 10.0)):
        # Right answers first: untouched inputs alone are no achievement (decision 1).
        _check_response(student, reference, rng, name, amount)
        expect_untouched(student.recorded().mutated, function=name)


@pytest.mark.points(2)
def test_scale_response(student: StudentProxy, reference: Reference, rng: np.random.Generator) -> None:
    """scale_response measures how far each norm's output moves when the input is scaled."""
    _check_response(student, reference, rng, "scale_response", 10.0)


@pytest.mark.points(1)
def test_scale_response_small_scale(student: StudentProxy, reference: Reference, rng: np.random.Generator) -> None:
    """A small scale pushes the input toward eps, where the norms stop being scale invariant."""
    _check_response(student, reference, rng, "scale_response", 1e-3)


@pytest.mark.points(1)
def test_scale_response_negative_scale(student: StudentProxy, reference: Reference, rng: np.random.Generator) -> None:
    """scale_response also works for a negative scale, which flips the sign of both outputs."""
    _check_response(student, reference, rng, "scale_response", -2.0)
