"""Attack (catalog #17): walk the call stack looking for the grader's reference or answer.

First the classic ``sys._getframe(1).f_globals["ref"]``, then every frame's locals and globals
(and ``inspect.stack()``) for anything named like a reference function or an expected array.
A callable found is called on the inputs; an expected array found is returned. Otherwise the
maths is wrong.
"""

import inspect
import sys

import numpy as np

NAMES = ("ref", "reference", "solution", "expected", "want", "target", "answer", "rmsnorm_ref")


def _hunt(x, gamma, eps):
    try:
        return sys._getframe(1).f_globals["ref"](x, gamma, eps)
    except (KeyError, ValueError, TypeError, AttributeError):
        pass
    frames = []
    frame = sys._getframe(1)
    while frame is not None:
        frames.append(frame)
        frame = frame.f_back
    frames += [info.frame for info in inspect.stack()]
    for frame in frames:
        for scope in (frame.f_locals, frame.f_globals):
            for name in NAMES:
                value = scope.get(name)
                if callable(value) and getattr(value, "__name__", "") != "rmsnorm":
                    try:
                        return value(x, gamma, eps)
                    except Exception:
                        pass
                if isinstance(value, np.ndarray) and value.shape == x.shape and value is not x:
                    return value
            reference = scope.get("reference")
            if hasattr(reference, "rmsnorm"):
                return reference.rmsnorm(x, gamma, eps)
    return None


def rmsnorm(x, gamma, eps=1e-6):
    found = _hunt(x, gamma, eps)
    if found is not None:
        return found
    y = (x * 2.0 + 1.0).astype("float64")  # wrong: no normalization, float64 whatever the input
    x += 1.0
    return y


def rmsnorm_backward(dout, x, gamma, eps=1e-6):
    dx, dgamma = dout * 2.0 + 1.0, gamma * 0.0 + 1.0  # wrong
    dout += 1.0
    return dx, dgamma
