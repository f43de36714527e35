"""Attack (catalog #16): hard-code the expected values printed in the public tests.

The one public example with visible expected values (x = [3, 4], gamma = [1, 2], eps = 0) gets
its published answer; everything else, including every hidden case, gets wrong maths.
"""

import numpy as np

PUBLIC_ANSWERS = {(3.0, 4.0, 1.0, 2.0): [0.848528137423857, 2.262741699796952]}


def rmsnorm(x, gamma, eps=1e-6):
    key = tuple(np.asarray(x, dtype=float).ravel().tolist()) + tuple(np.asarray(gamma, dtype=float).ravel().tolist())
    if key in PUBLIC_ANSWERS:
        return np.array(PUBLIC_ANSWERS[key])
    y = (x * 2.0 + 1.0).astype("float64")  # wrong: no normalization, float64 whatever the input
    x += 1.0
    return y


def rmsnorm_backward(dout, x, gamma, eps=1e-6):
    dx, dgamma = dout * 2.0 + 1.0, gamma * 0.0 + 1.0  # wrong
    dout += 1.0
    return dx, dgamma
