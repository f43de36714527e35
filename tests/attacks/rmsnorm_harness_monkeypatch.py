"""Attack (catalog #5, #8, #15): monkeypatch the worker's own code from inside.

Whatever module of the worker defines ``mutated`` (the helper that decides which arguments
changed during the call) and ``student_traceback`` (what the feedback shows of a traceback) is
found through ``sys.modules`` and patched: the in-place writes below are then never reported,
and tracebacks are empty. The maths is wrong and the function writes into its inputs.
"""

import sys


def _patch_the_worker():
    for module in list(sys.modules.values()):
        if getattr(module, "__name__", "") == __name__:
            continue
        if callable(getattr(module, "mutated", None)) and callable(getattr(module, "snapshot", None)):
            module.mutated = lambda before, args, kwargs: []
        if callable(getattr(module, "student_traceback", None)):
            module.student_traceback = lambda exc, directory: ""


_patch_the_worker()


def rmsnorm(x, gamma, eps=1e-6):
    y = (x * 2.0 + 1.0).astype("float64")  # wrong: no normalization, float64 whatever the input
    x += 1.0
    gamma += 1.0
    return y


def rmsnorm_backward(dout, x, gamma, eps=1e-6):
    dx, dgamma = dout * 2.0 + 1.0, gamma * 0.0 + 1.0  # wrong
    dout += 1.0
    x += 1.0
    return dx, dgamma
