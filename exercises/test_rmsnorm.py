"""Public tests for rmsnorm.py. Run them with ``normlab check`` (or ``pytest`` in this folder).

The hidden tests used for grading check much more: other shapes, scales, dtypes and the
mistakes people usually make. Passing these is a start, not a grade.
"""

import numpy as np


def test_rmsnorm_small_example(student):
    """rmsnorm([3, 4]) with gamma [1, 2] and eps 0: divide by sqrt((9 + 16) / 2), then scale."""
    x = np.array([3.0, 4.0])
    y = student.rmsnorm(x, np.array([1.0, 2.0]), eps=0.0)
    np.testing.assert_allclose(y, [0.848528137423857, 2.262741699796952], rtol=1e-12, strict=True)


def test_rmsnorm_brings_any_scale_to_unit_rms(student):
    """The lab's demo: rows of scale ~100 come out with RMS ~1 (gamma = 1)."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 8)) * 100
    y = student.rmsnorm(x, np.ones(8))
    assert isinstance(y, np.ndarray) and y.shape == x.shape and y.dtype == x.dtype
    np.testing.assert_allclose(np.sqrt(np.mean(y**2, axis=-1)), np.ones(3), rtol=1e-6)
    # Each row is only rescaled: y times the row's RMS gives x back.
    np.testing.assert_allclose(y * np.sqrt(np.mean(x**2, axis=-1, keepdims=True)), x, rtol=1e-6)


def test_rmsnorm_keeps_shape_and_dtype_and_input(student):
    """A (2, 3, 8) float32 batch keeps its shape and dtype, and x is not modified."""
    x = np.arange(48, dtype=np.float32).reshape(2, 3, 8) - 20
    before = x.copy()
    y = student.rmsnorm(x, np.ones(8, dtype=np.float32))
    assert isinstance(y, np.ndarray) and y.shape == (2, 3, 8) and y.dtype == np.float32
    np.testing.assert_allclose(np.sqrt(np.mean(y.astype(np.float64) ** 2, axis=-1)), np.ones((2, 3)), rtol=1e-5)
    # Under normlab your code runs in another process, which reports what it changed in place.
    record = getattr(student, "last_call", None)
    assert not (record.mutated if record is not None else []), "rmsnorm modified its inputs in place"
    np.testing.assert_array_equal(x, before)


def test_rmsnorm_backward_matches_finite_differences(student):
    """dx and dgamma agree with numerical derivatives of sum(rmsnorm(x) * dout)."""
    rng = np.random.default_rng(1)
    x, gamma, dout = rng.standard_normal((2, 5)), rng.standard_normal(5), rng.standard_normal((2, 5))
    dx, dgamma = student.rmsnorm_backward(dout, x, gamma)
    assert dx.shape == x.shape and dgamma.shape == gamma.shape
    assert np.abs(dx).max() > 1e-3 and np.abs(dgamma).max() > 1e-3, "the gradients are all (almost) zero"
    h = 1e-6
    for index in [(0, 0), (1, 3)]:
        step = np.zeros_like(x)
        step[index] = h
        slope = np.sum((student.rmsnorm(x + step, gamma) - student.rmsnorm(x - step, gamma)) * dout) / (2 * h)
        np.testing.assert_allclose(dx[index], slope, rtol=1e-5, atol=1e-8)
    step = np.zeros_like(gamma)
    step[2] = h
    slope = np.sum((student.rmsnorm(x, gamma + step) - student.rmsnorm(x, gamma - step)) * dout) / (2 * h)
    np.testing.assert_allclose(dgamma[2], slope, rtol=1e-5, atol=1e-8)
