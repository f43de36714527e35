"""Attack (class 2, echo channel): a forged sublayer call count, unbounded.

The sublayer the worker hands to block is an object of the worker's (trusted) code living in
the student's process; its ``calls`` attribute is what the worker reports. block answers
correctly, calls the sublayer once, then sets ``calls`` to ``10**12 + secret``, where the secret
is the hidden stream's shape packed in an integer. The hidden test prints the count.

Expected: hidden feedback never carries a number that the worker reported.
"""

import numpy as np

SALT = 0


def _rms(x, gamma, eps):
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * gamma


def _secret(x):
    packed = 0
    for n in x.shape:
        packed = packed * 1000 + n
    return 10**12 + 10**9 * SALT + packed


def block(x, sublayer, gamma, eps=1e-6):
    out = x + sublayer(_rms(x, gamma, eps))
    try:
        sublayer.calls = _secret(x)
    except AttributeError:
        pass
    return out


def postnorm_block(x, sublayer, gamma, eps=1e-6):
    out = _rms(x + sublayer(x), gamma, eps)
    try:
        sublayer.calls = _secret(x)
    except AttributeError:
        pass
    return out
