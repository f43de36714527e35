"""Attack (class 2, echo channel): the dtype of the answer carries a hidden input.

layernorm answers with the right shape in a numeric dtype picked from 9 by the hidden width;
the hidden tests print the dtype string. The 9 are byte-swapped (``>f8``, ``>i4``, ...), so no
short list of dtype names a grader might allow holds them: they are strings the student chose.

Expected: the hidden feedback says the dtype is wrong and which one was expected, never
which one came back (at most a name from a short list of the grader's own).
"""

import numpy as np

SALT = 0
DTYPES = (">f8", ">f4", ">f2", ">i8", ">i4", ">i2", ">u8", ">u4", ">u2")


def layernorm(x, gamma, beta, eps=1e-5):
    dtype = np.dtype(DTYPES[(x.shape[-1] + SALT) % len(DTYPES)])
    return np.zeros(x.shape, dtype=dtype)


def layernorm_backward(dout, x, gamma, beta, eps=1e-5):
    dtype = np.dtype(DTYPES[(x.shape[-1] + SALT) % len(DTYPES)])
    return np.zeros(x.shape, dtype=dtype), np.zeros(gamma.shape, dtype=dtype), np.zeros(beta.shape, dtype=dtype)
