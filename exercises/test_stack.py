"""Public tests for stack.py. Run them with ``normlab check`` (or ``pytest`` in this folder)."""

import numpy as np


def test_attention_stub_is_causal(student):
    """Changing a later token never changes an earlier output position."""
    rng = np.random.default_rng(7)
    h, w_o = rng.standard_normal((5, 4)), rng.standard_normal((4, 4))
    later = h.copy()
    later[3:] += 10.0
    a, b = student.attention_stub(h, w_o), student.attention_stub(later, w_o)
    np.testing.assert_allclose(a[:3], b[:3], rtol=1e-12)
    np.testing.assert_allclose(a[0], h[0] @ w_o, rtol=1e-12)


def test_stack_shapes(student):
    """The forward passes keep (B, T, C); the trace has one row per sublayer; depth_rms is (2, L + 1)."""
    params = student.init_params(n_layers=6, C=8, seed=1)
    x = np.random.default_rng(8).standard_normal((2, 5, 8))
    assert student.stack_forward(x, params).shape == (2, 5, 8)
    assert student.stack_forward_postnorm(x, params).shape == (2, 5, 8)
    assert student.stack_trace(x, params).shape == (12, 3)
    assert student.depth_rms(x, params).shape == (2, 7)


def test_trace_rows_chain(student):
    """In the pre-norm trace, each sublayer's stream is the previous sublayer's sum."""
    params = student.init_params(n_layers=3, C=8, seed=2)
    x = np.random.default_rng(9).standard_normal((4, 8))
    trace = student.stack_trace(x, params)
    np.testing.assert_allclose(trace[1:, 0], trace[:-1, 2], rtol=1e-12)
