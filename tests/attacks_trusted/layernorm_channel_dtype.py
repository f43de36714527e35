"""Attack (class 2, echo channel): the dtype of the answer carries a hidden input.

layernorm answers with the right shape in a numeric dtype picked from 16 by the hidden width;
the hidden tests print the dtype string. (Byte-swapped dtypes print as ``>f8``, ``>i4``...:
no fixed list of names the grader wrote.)

Expected: the hidden feedback says the dtype is wrong and which one was expected, never
which one came back.
"""

import numpy as np

SALT = 0
DTYPES = (
    ">f8", ">f4", ">f2", ">i8", ">i4", ">i2", ">u8", ">u4",
    "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
)


def layernorm(x, gamma, beta, eps=1e-5):
    dtype = np.dtype(DTYPES[(x.shape[-1] + SALT) % len(DTYPES)])
    return np.zeros(x.shape, dtype=dtype)


def layernorm_backward(dout, x, gamma, beta, eps=1e-5):
    dtype = np.dtype(DTYPES[(x.shape[-1] + SALT) % len(DTYPES)])
    return np.zeros(x.shape, dtype=dtype), np.zeros(gamma.shape, dtype=dtype), np.zeros(beta.shape, dtype=dtype)
