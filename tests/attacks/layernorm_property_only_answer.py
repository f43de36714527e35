"""Attack (points without the maths): LayerNorm answers with the right shapes and dtypes, inputs
left alone, and wrong values (0.5 everywhere)."""

import numpy as np


def layernorm(x, gamma, beta, eps=1e-5):
    return np.full_like(x, 0.5)


def layernorm_backward(dout, x, gamma, beta, eps=1e-5):
    return np.full_like(dout, 0.5), np.full_like(gamma, 0.5), np.full_like(beta, 0.5)
