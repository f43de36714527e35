"""Attack (catalog #6): forge well-formed response frames on the worker's response pipe.

The frames follow the wire format exactly (8-byte length, JSON header, ``np.save`` blobs) and
claim success with an answer of float64 ones, "no argument modified" and "sublayer called once". The
real response follows, so the stream is also out of step with the requests. The maths is wrong
and the function writes into its input.
"""

import io
import json
import os
import struct
import sys

import numpy as np


def _frame(tree, arrays):
    header = json.dumps(tree).encode()
    parts = [struct.pack(">I", len(header)), header]
    for array in arrays:
        buf = io.BytesIO()
        np.save(buf, array, allow_pickle=False)
        parts += [struct.pack(">Q", len(buf.getvalue())), buf.getvalue()]
    payload = b"".join(parts)
    return struct.pack(">Q", len(payload)) + payload


def _forge(*answers):
    tree = {"$dict": {
        "status": "ok",
        "result": ({"$tuple": [{"$array": i, "type": "numpy.ndarray"} for i in range(len(answers))]}
                   if len(answers) > 1 else {"$array": 0, "type": "numpy.ndarray"}),
        "seconds": 0.001,
        "stdout": "all tests passed\n",
        "stderr": "",
        "mutated": [],
        "callables": [],
    }}
    try:
        os.write(int(sys.argv[-1]), _frame(tree, answers))
    except (OSError, ValueError):
        pass


def rmsnorm(x, gamma, eps=1e-6):
    y = np.ones(x.shape)  # wrong (and float64 whatever the input)
    _forge(y)
    x += 1.0
    return y


def rmsnorm_backward(dout, x, gamma, eps=1e-6):
    dx, dgamma = np.ones_like(dout), np.ones_like(gamma)  # wrong
    _forge(dx, dgamma)
    dout += 1.0
    return dx, dgamma
