"""Attack (catalog #7, #12): return an object array whose elements lie about equality.

Loading it would need pickle; comparing it element by element would call the student's
``__eq__`` in the grader.
"""

import numpy as np


class Yes(float):
    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    __hash__ = float.__hash__


def rmsnorm(x, gamma, eps=1e-6):
    y = np.empty(x.shape, dtype=object)
    y[...] = Yes(1.0)
    x += 1.0
    return y


def rmsnorm_backward(dout, x, gamma, eps=1e-6):
    dx = np.empty(x.shape, dtype=object)
    dx[...] = Yes(1.0)
    dout += 1.0
    return dx, np.array([Yes(1.0)] * gamma.shape[0], dtype=object)
