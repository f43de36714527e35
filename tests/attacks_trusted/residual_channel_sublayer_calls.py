"""Attack (class 2, echo channel): the number of sublayer calls carries a hidden input.

block and postnorm_block return the right answer, but call the sublayer ``1000 + C`` times
(``C`` the hidden width), keeping the first result. The hidden "sublayer is called once" tests
print the call count.

Expected: the hidden feedback says the sublayer was not called exactly once, never how often.
"""

import numpy as np

SALT = 0


def _rms(x, gamma, eps):
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * gamma


def _calls(x):
    return 1000 * (SALT + 1) + x.shape[-1]


def block(x, sublayer, gamma, eps=1e-6):
    h = _rms(x, gamma, eps)
    update = sublayer(h)
    for _ in range(_calls(x) - 1):
        sublayer(h)
    return x + update


def postnorm_block(x, sublayer, gamma, eps=1e-6):
    update = sublayer(x)
    for _ in range(_calls(x) - 1):
        sublayer(x)
    return _rms(x + update, gamma, eps)
