"""Attack (catalog #4): sys.exit(0) inside the function, so a naive runner stops "successfully"."""

import sys


def rmsnorm(x, gamma, eps=1e-6):
    x += 1.0
    sys.exit(0)


def rmsnorm_backward(dout, x, gamma, eps=1e-6):
    dout += 1.0
    sys.exit(0)
