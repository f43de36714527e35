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
    out = student.stack_forward(x, params)
    assert out.shape == (2, 5, 8)
    # With unit gains the final RMSNorm leaves every token at RMS 1.
    np.testing.assert_allclose(np.sqrt(np.mean(out**2, axis=-1)), np.ones((2, 5)), rtol=1e-5)
    assert student.stack_forward_postnorm(x, params).shape == (2, 5, 8)
    assert student.stack_trace(x, params).shape == (12, 3)
    assert student.depth_rms(x, params).shape == (2, 7)


def test_trace_rows_chain(student):
    """In the pre-norm trace, each sublayer's stream is the previous sublayer's sum."""
    params = student.init_params(n_layers=3, C=8, seed=2)
    x = np.random.default_rng(9).standard_normal((4, 8))
    trace = student.stack_trace(x, params)
    assert trace.shape == (6, 3)
    np.testing.assert_allclose(trace[1:, 0], trace[:-1, 2], rtol=1e-12)
    # The first row reads the input: its stream norm is the mean per-token L2 norm of x.
    np.testing.assert_allclose(trace[0, 0], np.mean(np.linalg.norm(x, axis=-1)), rtol=1e-12)


def test_ffn_stub_is_position_wise(student):
    """The FFN stub transforms each position on its own: changing one token changes one row."""
    rng = np.random.default_rng(11)
    h = rng.standard_normal((4, 6))
    w_gate, w_up, w_down = rng.standard_normal((6, 9)), rng.standard_normal((6, 9)), rng.standard_normal((9, 6))
    changed = h.copy()
    changed[2] += 1.0
    a, b = student.ffn_stub(h, w_gate, w_up, w_down), student.ffn_stub(changed, w_gate, w_up, w_down)
    assert a.shape == (4, 6)
    np.testing.assert_allclose(np.delete(a, 2, axis=0), np.delete(b, 2, axis=0), rtol=1e-12)
    assert not np.allclose(a[2], b[2])


def test_token_norm_small_example(student):
    """token_norm of tokens [3, 4] and [0, 0] is the mean of 5 and 0."""
    assert abs(student.token_norm(np.array([[3.0, 4.0], [0.0, 0.0]])) - 2.5) < 1e-12


def test_postnorm_stack_stays_at_unit_scale(student):
    """With unit gains, every post-norm output token has RMS ~1 and depth_rms row 1 stays ~1."""
    params = student.init_params(n_layers=4, C=8, seed=3)
    x = np.random.default_rng(12).standard_normal((5, 8)) * 10
    out = student.stack_forward_postnorm(x, params)
    np.testing.assert_allclose(np.sqrt(np.mean(out**2, axis=-1)), np.ones(5), rtol=1e-5)
    np.testing.assert_allclose(student.depth_rms(x, params)[1, 1:], np.ones(4), rtol=1e-5)
