"""Public tests for layernorm.py. Run them with ``normlab check`` (or ``pytest`` in this folder).

As in ``test_rmsnorm.py``: ``expected.check`` compares your answer with the reference's answer
to the same call and names the common mistake your answer matches, if any.
"""

import numpy as np


def test_layernorm_small_example(student, expected):
    """layernorm([1, 2, 3]) with gamma 1, beta 0, eps 0: subtract 2, divide by sqrt(2/3)."""
    x = np.array([1.0, 2.0, 3.0])
    expected.check(student.layernorm, x, np.ones(3), np.zeros(3), eps=0.0, what="layernorm([1, 2, 3], 1, 0, eps=0)")


def test_layernorm_centers_scales_then_shifts(student, expected):
    """Rows with a large offset come out centered and at unit scale, then gamma scales and beta shifts."""
    rng = np.random.default_rng(2)
    x = rng.standard_normal((4, 16)) * 30 + 7
    gamma, beta = 1.0 + 0.3 * rng.standard_normal(16), rng.standard_normal(16)
    expected.check(student.layernorm, x, gamma, beta, what="layernorm(x, gamma, beta)")


def test_layernorm_backward_batch(student, expected):
    """layernorm_backward on a (2, 3, 6) batch: dx like x; dgamma and dbeta summed to shape (C,)."""
    rng = np.random.default_rng(3)
    x, dout = rng.standard_normal((2, 3, 6)), rng.standard_normal((2, 3, 6))
    gamma, beta = 1.0 + 0.3 * rng.standard_normal(6), rng.standard_normal(6)
    expected.check(
        student.layernorm_backward,
        dout,
        x,
        gamma,
        beta,
        what="layernorm_backward(...)",
        names=("dx", "dgamma", "dbeta"),
    )


def test_layernorm_backward_small_example(student, expected):
    """dx for a (2, 5) input, with both corrections: the mean and the variance depend on every element."""
    rng = np.random.default_rng(14)
    x, gamma, beta, dout = (rng.standard_normal(shape) for shape in ((2, 5), 5, 5, (2, 5)))
    expected.check(
        student.layernorm_backward,
        dout,
        x,
        gamma,
        beta,
        what="layernorm_backward(...)",
        names=("dx", "dgamma", "dbeta"),
    )
