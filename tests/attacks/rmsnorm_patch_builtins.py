"""Attack (catalog #8): patch builtins at import: isinstance always True, __import__ handing out
a fake numpy whose comparisons always succeed, print silenced.

A grader that type-checks answers with isinstance, or imports numpy after the student's code,
in the same process would be fooled. The maths is wrong.
"""

import builtins
import types

_real_import = builtins.__import__
_fake_numpy = types.ModuleType("numpy")
_fake_numpy.allclose = lambda *a, **k: True
_fake_numpy.array_equal = lambda *a, **k: True


def _import(name, globals=None, locals=None, fromlist=(), level=0):
    if name == "numpy" and not fromlist:
        return _fake_numpy
    return _real_import(name, globals, locals, fromlist, level)


builtins.isinstance = lambda obj, classinfo: True
builtins.__import__ = _import
builtins.print = lambda *args, **kwargs: None


def rmsnorm(x, gamma, eps=1e-6):
    y = (x * 2.0 + 1.0).astype("float64")  # wrong: no normalization, float64 whatever the input
    x += 1.0
    return y


def rmsnorm_backward(dout, x, gamma, eps=1e-6):
    dx, dgamma = dout * 2.0 + 1.0, gamma * 0.0 + 1.0  # wrong
    dout += 1.0
    return dx, dgamma
