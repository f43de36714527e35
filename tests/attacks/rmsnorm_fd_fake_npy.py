"""Attack (catalog #6): write fake ``\\x93NUMPY`` bytes to every inherited descriptor.

The bytes look like an ``.npy`` file holding an array of ones. They go to fds 3-9, to every
descriptor listed in /proc/self/fd and to the numbers found in sys.argv (the worker learns its
pipes from its last two arguments), so the response pipe gets garbage in the middle of the
protocol. The maths is wrong.
"""

import os
import struct
import sys


def _fake_npy():
    header = "{'descr': '<f8', 'fortran_order': False, 'shape': (8,), }"
    header += " " * (117 - len(header)) + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + struct.pack("<8d", *[1.0] * 8)


def _spray():
    fds = set(range(3, 10))
    fds |= {int(arg) for arg in sys.argv[1:] if arg.isdigit()}
    try:
        fds |= {int(name) for name in os.listdir("/proc/self/fd")}
    except OSError:
        pass
    blob = _fake_npy()
    for fd in sorted(fds - {0, 1, 2}):
        try:
            os.write(fd, blob)
        except OSError:
            pass


def rmsnorm(x, gamma, eps=1e-6):
    _spray()
    y = (x * 2.0 + 1.0).astype("float64")  # wrong: no normalization, float64 whatever the input
    x += 1.0
    return y


def rmsnorm_backward(dout, x, gamma, eps=1e-6):
    _spray()
    dx, dgamma = dout * 2.0 + 1.0, gamma * 0.0 + 1.0  # wrong
    dout += 1.0
    return dx, dgamma
