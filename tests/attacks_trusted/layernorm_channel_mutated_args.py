"""Attack (class 2, echo channel): WHICH input is modified carries a hidden input.

No tampering with the worker: layernorm computes the right answer first, then writes into one
of its inputs, chosen from the hidden width (``C % 3``). The hidden "inputs not modified" test
names the modified argument (``arg0``, ``arg1`` or ``arg2``), so the name is a digit of a
hidden size in base 3.

Expected: the hidden feedback says that an input was modified, never which one.
"""

import numpy as np

SALT = 0


def _forward(x, gamma, beta, eps):
    x64 = x.astype(np.float64)
    xc = x64 - x64.mean(axis=-1, keepdims=True)
    out = xc / np.sqrt(np.mean(xc * xc, axis=-1, keepdims=True) + eps) * gamma + beta
    return out.astype(x.dtype)


def layernorm(x, gamma, beta, eps=1e-5):
    out = _forward(x, gamma, beta, eps)
    victim = (x, gamma, beta)[(x.shape[-1] + SALT) % 3]
    victim[...] = victim + 1.0
    return out


def layernorm_backward(dout, x, gamma, beta, eps=1e-5):
    raise NotImplementedError
