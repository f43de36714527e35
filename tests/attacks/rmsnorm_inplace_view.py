"""Attack (catalog #15): compute in place and return the input object itself.

If the grader kept only a reference to ``x``, the "expected" computed afterwards from ``x``
would already be the student's (wrong) output. The maths is wrong.
"""


def rmsnorm(x, gamma, eps=1e-6):
    x *= gamma  # wrong: no normalization, and in place
    x += 0.5
    return x


def rmsnorm_backward(dout, x, gamma, eps=1e-6):
    dout *= 2.0  # wrong, in place
    gamma *= 0.0
    gamma += 1.0
    return dout, gamma
