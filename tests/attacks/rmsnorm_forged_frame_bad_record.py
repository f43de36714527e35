"""Attack (catalog #6): a forged response frame whose diagnostic fields have the wrong types.

The header is valid JSON in the wire format, but ``mutated`` and ``callables`` are numbers
instead of lists. A trusted side that iterates over them without checking would raise inside
the test, which a naive plugin reports as a fault of the grader (no score for anyone's run)
instead of a bad answer from this student. The maths is wrong.
"""

import json
import os
import struct
import sys


def _frame(tree, arrays):
    header = json.dumps(tree).encode()
    parts = [struct.pack(">I", len(header)), header]
    for array in arrays:
        parts += [struct.pack(">Q", array.nbytes), array.tobytes()]
    payload = b"".join(parts)
    return struct.pack(">Q", len(payload)) + payload


def _forge(answer):
    node = {"$array": 0, "dtype": answer.dtype.str, "shape": list(answer.shape), "type": "numpy.ndarray"}
    tree = {"$dict": {"status": "ok", "result": node,
                      "mutated": 1, "callables": 1, "seconds": 0.0}}
    try:
        os.write(int(sys.argv[-1]), _frame(tree, [answer]))
    except (OSError, ValueError):
        pass


def rmsnorm(x, gamma, eps=1e-6):
    y = (x * 2.0 + 1.0).astype("float64")  # wrong: no normalization, float64 whatever the input
    _forge(y)
    x += 1.0
    return y


def rmsnorm_backward(dout, x, gamma, eps=1e-6):
    dx, dgamma = dout * 2.0 + 1.0, gamma * 0.0 + 1.0  # wrong
    _forge(dx)
    dout += 1.0
    return dx, dgamma
