"""Public tests for rmsnorm.py. Run them with ``normlab check`` (or ``pytest`` in this folder).

Each test calls your function on a public input and ``expected.check`` compares the answer with
the reference's answer to that same call (``answers.json``), as the hidden tests do: a failure
says what came back, what was expected, where they differ most and, when your answer matches a
common mistake, which one. The hidden tests check much more: other shapes, scales, dtypes and
the mistakes people usually make. Passing these is a start, not a grade.
"""

import numpy as np


def test_rmsnorm_small_example(student, expected):
    """rmsnorm([3, 4]) with gamma [1, 2] and eps 0: divide by sqrt((9 + 16) / 2), then scale."""
    x, gamma = np.array([3.0, 4.0]), np.array([1.0, 2.0])
    expected.check(student.rmsnorm, x, gamma, eps=0.0, what="rmsnorm([3, 4], [1, 2], eps=0)")


def test_rmsnorm_brings_any_scale_to_unit_rms(student, expected):
    """The lab's demo: rows of scale ~100 come out at RMS ~1, times their gain."""
    rng = np.random.default_rng(0)
    x, gamma = rng.standard_normal((3, 8)) * 100, 1.0 + 0.5 * rng.standard_normal(8)
    expected.check(student.rmsnorm, x, gamma, what="rmsnorm(x, gamma)")


def test_rmsnorm_keeps_shape_and_dtype_and_input(student, expected):
    """A (2, 3, 8) float32 batch keeps its shape and dtype, and x is not modified."""
    x = np.arange(48, dtype=np.float32).reshape(2, 3, 8) - 20
    gamma = np.linspace(0.5, 1.5, 8, dtype=np.float32)
    before = x.copy()
    expected.check(student.rmsnorm, x, gamma, what="rmsnorm(x, gamma) on a float32 batch")
    expected.untouched(student, "rmsnorm", x=(x, before))


def test_rmsnorm_backward_small_batch(student, expected):
    """dx and dgamma for a (2, 5) input, including the correction for the RMS they share."""
    rng = np.random.default_rng(1)
    x, gamma, dout = rng.standard_normal((2, 5)), rng.standard_normal(5), rng.standard_normal((2, 5))
    expected.check(
        student.rmsnorm_backward, dout, x, gamma, what="rmsnorm_backward(dout, x, gamma)", names=("dx", "dgamma")
    )
