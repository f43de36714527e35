"""Attack (catalog #12): return a boolean array of the right shape, all True.

True is 1: its RMS per row is exactly 1, and ``np.allclose(True, 1.0)`` holds.
"""

import numpy as np


def rmsnorm(x, gamma, eps=1e-6):
    x += 1.0
    return np.ones(x.shape, dtype=bool)


def rmsnorm_backward(dout, x, gamma, eps=1e-6):
    dout += 1.0
    return np.ones(x.shape, dtype=bool), np.ones(gamma.shape, dtype=bool)
