"""Attack (catalog #19): load the reference solution from the copy a package install leaves in
the interpreter's environment (``site-packages/grader/_course/solutions/``).

The worker must see the interpreter and its venv, so anything the venv contains is visible
unless the sandbox hides it. No maths of its own: if the reference is not there, it answers
wrongly.
"""

import glob
import importlib.util
import sys

_reference = None
for _site in sys.path + glob.glob("/work/*/.venv/lib/python3*/site-packages"):
    for _path in glob.glob(_site + "/grader/_course/solutions/rmsnorm.py"):
        try:
            _spec = importlib.util.spec_from_file_location("_leaked_reference", _path)
            _reference = importlib.util.module_from_spec(_spec)
            _spec.loader.exec_module(_reference)
            break
        except Exception:
            _reference = None
    if _reference is not None:
        break


def rmsnorm(x, gamma, eps=1e-6):
    if _reference is not None:
        return _reference.rmsnorm(x, gamma, eps)
    y = (x * 2.0 + 1.0).astype("float64")  # wrong: no normalization, float64 whatever the input
    x += 1.0
    return y


def rmsnorm_backward(dout, x, gamma, eps=1e-6):
    if _reference is not None:
        return _reference.rmsnorm_backward(dout, x, gamma, eps)
    dx, dgamma = dout * 2.0 + 1.0, gamma * 0.0 + 1.0  # wrong
    dout += 1.0
    return dx, dgamma
