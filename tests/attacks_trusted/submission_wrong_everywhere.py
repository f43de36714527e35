"""Attack (class 2, the grader's own echo): one file, every function wrong in the most common
way: arrays of the wrong shape, numbers of the right type and wrong value, a key short, an empty report.

Nothing here is clever. It provokes the grader's ordinary failure messages on every hidden
test, which state the *expected* shape ("expected (7, 16)", the hidden input's own shape) and
name the hidden argument in the label ("op_counts(77)", "shift_response(x, -7.5)").

Expected: no hidden test's feedback contains a hidden input (a shape or a number the test
passed), except what its own description already says.
"""

import numpy as np


def _wrong(*args, **kwargs):
    return np.zeros(1)


rmsnorm = layernorm = block = postnorm_block = _wrong
attention_stub = ffn_stub = stack_forward = stack_forward_postnorm = stack_trace = depth_rms = _wrong


def rmsnorm_backward(dout, x, gamma, eps=1e-6):
    return np.zeros(1), np.zeros(1)


def layernorm_backward(dout, x, gamma, beta, eps=1e-5):
    return np.zeros(1), np.zeros(1), np.zeros(1)


def init_params(n_layers=6, C=16, H=None, seed=0, scale=1.0):
    return {}


def token_norm(v):
    return -1.0


def op_counts(C):
    return {norm: {"flops": -1, "reductions": -1, "params": -1} for norm in ("rmsnorm", "layernorm")}


def shift_response(x, shift):
    return {"rmsnorm": -1.0}  # a key short


scale_response = shift_response


def inspect_config(config):
    return {}
