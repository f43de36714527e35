"""Public tests for layernorm.py. Run them with ``normlab check`` (or ``pytest`` in this folder)."""

import numpy as np


def test_layernorm_small_example(student):
    """layernorm([1, 2, 3]) with gamma 1, beta 0, eps 0: subtract 2, divide by sqrt(2/3)."""
    y = student.layernorm(np.array([1.0, 2.0, 3.0]), np.ones(3), np.zeros(3), eps=0.0)
    np.testing.assert_allclose(y, [-1.224744871391589, 0.0, 1.224744871391589], rtol=1e-12, atol=1e-15, strict=True)


def test_layernorm_zero_mean_unit_variance_then_shift(student):
    """With gamma 1 each row has mean beta-mean and variance ~1; beta shifts every row."""
    rng = np.random.default_rng(2)
    x = rng.standard_normal((4, 16)) * 30 + 7
    y = student.layernorm(x, np.ones(16), np.full(16, 0.5))
    np.testing.assert_allclose(y.mean(axis=-1), np.full(4, 0.5), atol=1e-9)
    np.testing.assert_allclose(y.var(axis=-1), np.ones(4), rtol=1e-4)


def test_layernorm_backward_shapes(student):
    """layernorm_backward returns dx like x, and dgamma, dbeta of shape (C,)."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 3, 6))
    dx, dgamma, dbeta = student.layernorm_backward(np.ones_like(x), x, np.ones(6), np.zeros(6))
    assert dx.shape == (2, 3, 6) and dgamma.shape == (6,) and dbeta.shape == (6,)
    np.testing.assert_allclose(dbeta, np.full(6, 6.0))


def test_layernorm_backward_matches_finite_differences(student):
    """dx agrees with a numerical derivative of sum(layernorm(x) * dout)."""
    rng = np.random.default_rng(14)
    x, gamma, beta, dout = rng.standard_normal((2, 5)), rng.standard_normal(5), rng.standard_normal(5), rng.standard_normal((2, 5))
    dx, _, _ = student.layernorm_backward(dout, x, gamma, beta)
    step = np.zeros_like(x)
    step[1, 2] = 1e-6
    slope = np.sum((student.layernorm(x + step, gamma, beta) - student.layernorm(x - step, gamma, beta)) * dout) / 2e-6
    np.testing.assert_allclose(dx[1, 2], slope, rtol=1e-5, atol=1e-8)
