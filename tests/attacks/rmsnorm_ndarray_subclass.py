"""Attack (catalog #10): an ndarray subclass that lies about equality and hijacks numpy.

``__array_function__`` answers True to every numpy function (so ``np.allclose(result, want)``
is True), ``__array_ufunc__`` makes every ufunc return all-True, ``__eq__`` and ``__bool__``
are always true. The data inside is wrong.
"""

import numpy as np


class Liar(np.ndarray):
    def __array_function__(self, func, types, args, kwargs):
        return True

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        shape = np.broadcast(*[np.asarray(i) if not isinstance(i, Liar) else i.view(np.ndarray)
                               for i in inputs]).shape
        return np.ones(shape, dtype=bool)

    def __eq__(self, other):
        return np.True_

    def __ne__(self, other):
        return np.False_

    def __bool__(self):
        return True


def rmsnorm(x, gamma, eps=1e-6):
    y = (x * 2.0 + 1.0).view(Liar)  # wrong data inside
    x += 1.0
    return y


def rmsnorm_backward(dout, x, gamma, eps=1e-6):
    grads = (dout * 2.0 + 1.0).view(Liar), (gamma * 0.0 + 1.0).view(Liar)  # wrong
    dout += 1.0
    return grads
