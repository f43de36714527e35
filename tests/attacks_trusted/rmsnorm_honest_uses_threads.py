"""Not an attack: an HONEST rmsnorm that uses a thread pool (class 7's victim).

Correct code that normalizes the rows of a batch in two worker threads, as a student who
knows ``concurrent.futures`` might. Graded alone it gets full marks. Graded next to
``rmsnorm_hold_every_process.py`` on the same host, its worker shares the hostile worker's uid,
whose RLIMIT_NPROC is used up: starting a thread fails and this student loses the points.

Expected: full marks whatever runs next to it.
"""

from concurrent.futures import ThreadPoolExecutor

import numpy as np


def _rows(x, gamma, eps):
    xf = x.astype(np.float32) if x.dtype == np.float16 else x
    return (xf / np.sqrt(np.mean(xf * xf, axis=-1, keepdims=True) + eps) * gamma).astype(x.dtype)


def rmsnorm(x, gamma, eps=1e-6):
    with ThreadPoolExecutor(max_workers=2) as pool:
        return pool.submit(_rows, x, gamma, eps).result()


def rmsnorm_backward(dout, x, gamma, eps=1e-6):
    xf, df, gf = (a.astype(np.float64) for a in (x, dout, gamma))
    rstd = 1.0 / np.sqrt(np.mean(xf * xf, axis=-1, keepdims=True) + eps)
    xhat = xf * rstd
    g = df * gf
    dx = rstd * (g - xhat * np.mean(g * xhat, axis=-1, keepdims=True))
    dgamma = np.sum(df * xhat, axis=tuple(range(x.ndim - 1)))
    return dx.astype(x.dtype), dgamma.astype(gamma.dtype)
