"""Public tests for stack.py. Run them with ``normlab check`` (or ``pytest`` in this folder).

``init_params`` is provided: the tests use it to build the stack's weights.
"""

import numpy as np


def test_attention_stub_is_causal(student, expected):
    """The causal running mean, then w_o: changing a later token never changes an earlier output."""
    rng = np.random.default_rng(7)
    h, w_o = rng.standard_normal((5, 4)), rng.standard_normal((4, 4))
    a = expected.check(student.attention_stub, h, w_o, what="attention_stub(h, w_o)")
    later = h.copy()
    later[3:] += 10.0
    b = expected.check(student.attention_stub, later, w_o, what="attention_stub(h with later tokens changed, w_o)")
    expected.require(np.array_equal(a[:3], b[:3]), "public.not_causal")


def test_ffn_stub_is_position_wise(student, expected):
    """SwiGLU on each position on its own: changing one token changes one row."""
    rng = np.random.default_rng(11)
    h = rng.standard_normal((4, 6))
    w_gate, w_up, w_down = rng.standard_normal((6, 9)), rng.standard_normal((6, 9)), rng.standard_normal((9, 6))
    expected.check(student.ffn_stub, h, w_gate, w_up, w_down, what="ffn_stub(h, w_gate, w_up, w_down)")


def test_token_norm_small_example(student, expected):
    """token_norm of tokens [3, 4], [0, 0] and [6, 8]: one L2 norm per token (5, 0, 10), then their mean."""
    v = np.array([[3.0, 4.0], [0.0, 0.0], [6.0, 8.0]])
    expected.check(student.token_norm, v, what="token_norm(v)", rel=1e-12)


def test_stack_forward_on_a_batch(student, expected):
    """The pre-norm stack keeps (B, T, C) and ends with the final RMSNorm."""
    params = student.init_params(n_layers=6, C=8, seed=1)
    x = np.random.default_rng(8).standard_normal((2, 5, 8))
    expected.check(student.stack_forward, x, params, what="stack_forward(x, params)")


def test_postnorm_stack_stays_at_unit_scale(student, expected):
    """With unit gains, every post-norm output token has RMS ~1, and depth_rms's post-norm row stays ~1."""
    params = student.init_params(n_layers=4, C=8, seed=3)
    x = np.random.default_rng(12).standard_normal((5, 8)) * 10
    expected.check(student.stack_forward_postnorm, x, params, what="stack_forward_postnorm(x, params)")
    expected.check(student.depth_rms, x, params, what="depth_rms(x, params)")


def test_trace_rows_chain(student, expected):
    """In the pre-norm trace, each sublayer's stream is the previous sublayer's sum."""
    params = student.init_params(n_layers=3, C=8, seed=2)
    x = np.random.default_rng(9).standard_normal((4, 8))
    trace = expected.check(student.stack_trace, x, params, what="stack_trace(x, params)")
    expected.require(np.allclose(trace[1:, 0], trace[:-1, 2]), "public.trace_rows_chain")
