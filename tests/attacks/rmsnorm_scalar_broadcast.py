"""Attack (catalog #11): return the scalar np.float64(1.0).

``np.allclose(1.0, np.ones((4, 8)))`` is True because the scalar broadcasts; for any input
with unit RMS per row a broadcasting check would accept it.
"""

import numpy as np


def rmsnorm(x, gamma, eps=1e-6):
    x += 1.0
    return np.float64(1.0)


def rmsnorm_backward(dout, x, gamma, eps=1e-6):
    dout += 1.0
    return np.float64(1.0), np.float64(1.0)
