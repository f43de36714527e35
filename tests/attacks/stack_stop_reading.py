"""Attack (catalog #5, #23): the worker stops reading the grader's requests halfway.

On import, the worker's own reader (found through ``sys.modules``) is wrapped: a request for a
function of this module that is larger than a pipe holds is left unread after its first bytes,
and the worker sleeps for ever. A grader that writes a request with a plain blocking write waits
for ever on the rest of it, and the whole batch with it. Requests for other modules are read
as usual, so the rest of the submission is graded as if nothing happened. Every function gives
a wrong answer, so no test may pass.
"""

import struct
import sys
import time

import numpy as np

PIPE = 1 << 16
MINE = "attention_stub ffn_stub token_norm stack_forward stack_forward_postnorm stack_trace depth_rms".split()


def _reader(read_exact):
    def read(fd, n):
        if n <= PIPE:
            return read_exact(fd, n)
        start = read_exact(fd, 4)
        header = read_exact(fd, struct.unpack(">I", start)[0])
        if any(f'"{name}"'.encode() in header for name in MINE):  # the request's JSON part
            time.sleep(1e9)  # the rest of the request stays in the pipe
        return start + header + read_exact(fd, n - len(start) - len(header))

    return read


def _stop_reading():
    for module in list(sys.modules.values()):
        if callable(getattr(module, "read_exact", None)) and callable(getattr(module, "write_frame", None)):
            module.read_exact = _reader(module.read_exact)


_stop_reading()


def init_params(n_layers=6, C=16, H=None, seed=0, scale=1.0):
    H = H or 4 * C
    shapes = {"w_o": (C, C), "w_gate": (C, H), "w_up": (C, H), "w_down": (H, C), "attn_gamma": (C,), "ffn_gamma": (C,)}
    params = {name: np.zeros((n_layers, *shape)) for name, shape in shapes.items()}
    return params | {"final_gamma": np.zeros(C)}


def attention_stub(h, w_o):
    return np.zeros_like(h)


def ffn_stub(h, w_gate, w_up, w_down):
    return np.zeros_like(h)


def token_norm(v):
    return -1.0


def stack_forward(x, params, eps=1e-6):
    return np.zeros_like(x)


def stack_forward_postnorm(x, params, eps=1e-6):
    return np.zeros_like(x)


def stack_trace(x, params, eps=1e-6, placement="pre"):
    return np.zeros((2 * len(params["w_o"]), 3))


def depth_rms(x, params, eps=1e-6):
    return np.zeros(len(params["w_o"]))
