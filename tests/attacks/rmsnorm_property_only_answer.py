"""Attack (points without the maths; catalog #16 "property tests"): an answer that has every property
a test can check without computing RMSNorm (the right shape, the right dtype, inputs left
alone) and wrong values: 0.5 everywhere.

Any test that awards points for such properties alone (shape and dtype, "x is not modified")
gives points to a function that does not compute anything.
"""

import numpy as np


def rmsnorm(x, gamma, eps=1e-6):
    return np.full_like(x, 0.5)


def rmsnorm_backward(dout, x, gamma, eps=1e-6):
    return np.full_like(dout, 0.5), np.full_like(gamma, 0.5)
