"""Attack (catalog #35): answer with arrays far beyond the result cap: 12000 x 12000 float64
(1.15 GB) and 4000 x 4000 float64 (128 MB), to exhaust the grader's memory while it reads."""

import numpy as np


def op_counts(C):
    return np.zeros((12000, 12000))


def shift_response(x, shift):
    x += 1.0
    return np.zeros((4000, 4000))


def scale_response(x, scale):
    x += 1.0
    return np.zeros((4000, 4000))
