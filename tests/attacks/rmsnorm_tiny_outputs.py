"""Attack (catalog #14): answer 1e-9 everywhere.

``np.allclose`` has a default absolute tolerance of 1e-8, so 1e-9 is "close" to any expected
value near zero, and to zero itself.
"""

import numpy as np


def rmsnorm(x, gamma, eps=1e-6):
    y = np.full(x.shape, 1e-9)  # float64 whatever the input
    x += 1.0
    return y


def rmsnorm_backward(dout, x, gamma, eps=1e-6):
    grads = np.full_like(dout, 1e-9), np.full_like(gamma, 1e-9)
    dout += 1.0
    return grads
