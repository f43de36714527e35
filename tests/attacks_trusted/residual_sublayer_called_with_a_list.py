"""Attack (class 3, a student's value becomes a grader fault): the sublayer called once, with a
list instead of an array.

block is correct and calls its sublayer exactly once, on the normalized stream, passed as a
nested list (``h.tolist()``): numpy's matmul accepts it, so the answer is right. The worker's
call record keeps only array inputs, so it reports one call and no input; the hidden test
then reads ``inputs[0]``: IndexError inside the trusted test, filed as a grader fault. No
score is issued for the whole submission (exit 3).

Expected: the test fails for this student with a message (the sublayer was not given an
array); the rest of the submission is graded.
"""

import numpy as np


def _rms(x, gamma, eps):
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * gamma


def block(x, sublayer, gamma, eps=1e-6):
    return x + np.asarray(sublayer(_rms(x, gamma, eps).tolist()), dtype=x.dtype)


def postnorm_block(x, sublayer, gamma, eps=1e-6):
    return _rms(x + np.asarray(sublayer(x.tolist()), dtype=x.dtype), gamma, eps)
