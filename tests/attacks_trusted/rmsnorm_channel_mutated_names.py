"""Attack (class 2, echo channel): the names of "modified arguments" carry a hidden input.

rmsnorm is correct, so the hidden "inputs not modified" test gets past its value check. The
worker's own mutation detector (``calling.mutated``, in the student's process) is replaced, so
the "names" it reports are any strings this code likes: here the hidden input's shape. The
trusted side prints them in the hidden test's message.

Expected: the hidden feedback is the same whatever the names (and never contains "LEAK").
"""

import sys

import numpy as np

SALT = 0


def _leak(before, args, kwargs):
    x = args[0] if args else None
    shape = getattr(x, "shape", None)
    return [f"LEAK:{SALT}:{shape}"]


def _install():
    calling = sys.modules.get("inside.calling") or sys.modules.get("calling") or sys.modules.get("grader.worker.calling")
    if calling is not None:
        calling.mutated = _leak


def rmsnorm(x, gamma, eps=1e-6):
    _install()
    x64 = x.astype(np.float64)
    out = x64 / np.sqrt(np.mean(x64 * x64, axis=-1, keepdims=True) + eps) * gamma.astype(np.float64)
    return out.astype(x.dtype)


def rmsnorm_backward(dout, x, gamma, eps=1e-6):
    _install()
    x64, d64, g64 = (a.astype(np.float64) for a in (x, dout, gamma))
    rstd = 1.0 / np.sqrt(np.mean(x64 * x64, axis=-1, keepdims=True) + eps)
    xhat = x64 * rstd
    g = d64 * g64
    dx = rstd * (g - xhat * np.mean(g * xhat, axis=-1, keepdims=True))
    dgamma = np.sum(d64 * xhat, axis=tuple(range(x.ndim - 1)))
    return dx.astype(x.dtype), dgamma.astype(x.dtype)
