"""Attack (catalog #3): os._exit(0) while the module is imported.

A runner that trusts exit status 0 would record a clean run with no failures.
"""

import os

os._exit(0)


def rmsnorm(x, gamma, eps=1e-6):
    return x * 2.0 + 1.0  # wrong (never reached)


def rmsnorm_backward(dout, x, gamma, eps=1e-6):
    return dout * 2.0 + 1.0, gamma * 0.0 + 1.0  # wrong (never reached)
