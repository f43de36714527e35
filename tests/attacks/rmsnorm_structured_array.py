"""Attack (catalog #12): return a structured array of the right shape whose single field is
named "passed" and is all ones."""

import numpy as np


def rmsnorm(x, gamma, eps=1e-6):
    y = np.ones(x.shape, dtype=[("passed", "f8")])
    x += 1.0
    return y


def rmsnorm_backward(dout, x, gamma, eps=1e-6):
    dout += 1.0
    return np.ones(x.shape, dtype=[("passed", "f8")]), np.ones(gamma.shape, dtype=[("passed", "f8")])
