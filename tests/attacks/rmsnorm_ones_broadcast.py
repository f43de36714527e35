"""Attack (catalog #11): return ``np.ones(1)``, a one-element array that broadcasts.

Any check written as ``np.testing.assert_allclose(f(y), target)`` without ``strict=True``, or
``np.allclose``, broadcasts it against the expected shape. Its RMS is exactly 1, which is
what an RMSNorm output with unit gain has per row.
"""

import numpy as np


def rmsnorm(x, gamma, eps=1e-6):
    x += 1.0
    return np.ones(1, dtype=x.dtype)


def rmsnorm_backward(dout, x, gamma, eps=1e-6):
    dout += 1.0
    return np.ones(1, dtype=x.dtype), np.ones(1, dtype=gamma.dtype)
