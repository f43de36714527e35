"""Attack (catalog #6): forge well-formed response frames on the worker's response pipe.

The frames follow the wire format exactly (8-byte length, JSON header whose array nodes carry
dtype and shape, raw array bytes) and
claim success with an answer of float64 ones, "no argument modified" and "sublayer called once". The
real response follows, so the stream is also out of step with the requests. The maths is wrong
and the function writes into its input.
"""

import json
import os
import struct
import sys

import numpy as np


def _frame(tree, arrays):
    header = json.dumps(tree).encode()
    parts = [struct.pack(">I", len(header)), header]
    for array in arrays:
        parts += [struct.pack(">Q", array.nbytes), array.tobytes()]
    payload = b"".join(parts)
    return struct.pack(">Q", len(payload)) + payload


def _node(i, array):
    return {"$array": i, "dtype": array.dtype.str, "shape": list(array.shape), "type": "numpy.ndarray"}


def _forge(*answers):
    nodes = [_node(i, a) for i, a in enumerate(answers)]
    tree = {"$dict": {
        "status": "ok",
        "result": {"$tuple": nodes} if len(answers) > 1 else nodes[0],
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
