"""Attack (class 2, echo channel): WHERE the answer is wrong carries a hidden input.

attention_stub computes the right answer, then breaks exactly one element, at the flat
position ``T * 100 + C`` (mod the size): the hidden test reports the index of the largest
error, so the index spells out the hidden shape.

Expected: the hidden feedback does not depend on where the student chose to be wrong.
"""

import numpy as np

SALT = 0


def attention_stub(h, w_o):
    T = h.shape[-2]
    out = (np.cumsum(h, axis=-2) / np.arange(1, T + 1, dtype=h.dtype).reshape(T, 1)) @ w_o
    flat = out.reshape(-1)
    flat[(T * 100 + h.shape[-1] + SALT) % flat.size] += 1000.0 * (1.0 + np.abs(flat).max())
    return flat.reshape(out.shape)


def ffn_stub(h, w_gate, w_up, w_down):
    raise NotImplementedError


def init_params(n_layers=6, C=16, H=None, seed=0, scale=1.0):
    raise NotImplementedError


def token_norm(v):
    raise NotImplementedError


def stack_forward(x, params, eps=1e-6):
    raise NotImplementedError


def stack_forward_postnorm(x, params, eps=1e-6):
    raise NotImplementedError


def stack_trace(x, params, eps=1e-6, placement="pre"):
    raise NotImplementedError


def depth_rms(x, params, eps=1e-6):
    raise NotImplementedError
