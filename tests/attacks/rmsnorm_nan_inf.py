"""Attack (catalog #13): answer NaN (and inf at the edges).

``np.allclose(nan, nan, equal_nan=True)`` is True, and every comparison with NaN is False, so
a check written as ``assert not (abs(got - want) > tol).any()`` passes.
"""

import numpy as np


def _poison(a):
    a = np.full(a.shape, np.nan)  # float64 whatever the input
    a[..., 0] = np.inf
    a[..., -1] = -np.inf
    return a


def rmsnorm(x, gamma, eps=1e-6):
    y = _poison(x)
    x += 1.0
    return y


def rmsnorm_backward(dout, x, gamma, eps=1e-6):
    grads = _poison(dout), _poison(gamma)
    dout += 1.0
    return grads
