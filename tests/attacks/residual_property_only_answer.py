"""Attack (points without the maths): the blocks call their sublayer exactly once (the pre-norm
block on a copy of x, the post-norm block on x itself), leave x alone, and return 0.5
everywhere in the right shape and dtype. No normalization, no residual sum."""

import numpy as np


def block(x, sublayer, gamma, eps=1e-6):
    sublayer(x.copy())
    return np.full_like(x, 0.5)


def postnorm_block(x, sublayer, gamma, eps=1e-6):
    sublayer(x)
    return np.full_like(x, 0.5)
