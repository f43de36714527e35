"""Attack (class 2, echo channel): HOW wrong the answer is carries a hidden input.

rmsnorm computes the right answer, then scales one element by ``1 + d / 1000`` where the digit
``d`` (2 to 9) is the hidden width mod 8, plus 2. The hidden test prints the relative error of
the worst element to one significant figure: ``d``e-03, the digit itself. (A larger range of
magnitudes gives more digits per test.)

Expected: the hidden feedback does not depend on the size of the student's error (at most a
coarse order of magnitude: every error here is between 2e-3 and 9e-3).
"""

import numpy as np

SALT = 0


def _rms(x, gamma, eps):
    xf = x.astype(np.float32) if x.dtype == np.float16 else x
    return (xf / np.sqrt(np.mean(xf * xf, axis=-1, keepdims=True) + eps) * gamma).astype(x.dtype)


def rmsnorm(x, gamma, eps=1e-6):
    out = _rms(x, gamma, eps)
    digit = (x.shape[-1] + SALT) % 8 + 2
    flat = out.reshape(-1)
    worst = int(np.argmax(np.abs(flat)))
    flat[worst] = flat[worst] * (1.0 + digit / 1000.0)
    return flat.reshape(out.shape)


def rmsnorm_backward(dout, x, gamma, eps=1e-6):
    raise NotImplementedError
