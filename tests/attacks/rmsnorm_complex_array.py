"""Attack (catalog #12): return a complex array (wrong values with an imaginary part).

``np.allclose`` compares complex numbers by modulus of the difference, and casting to float
silently drops the imaginary part (with only a warning).
"""


def rmsnorm(x, gamma, eps=1e-6):
    y = (x * 2.0 + 1.0) * (1 + 1j)  # wrong
    x += 1.0
    return y


def rmsnorm_backward(dout, x, gamma, eps=1e-6):
    grads = (dout * 2.0 + 1.0) * (1 + 1j), (gamma * 0.0 + 1.0) * 1j  # wrong
    dout += 1.0
    return grads
