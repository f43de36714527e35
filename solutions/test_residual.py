"""Public tests for residual.py. Run them with ``normlab check`` (or ``pytest`` in this folder)."""

import numpy as np


def test_block_with_a_silent_sublayer_is_the_identity(student, sublayer):
    """If the sublayer outputs zeros, the pre-norm block returns x unchanged."""
    x = np.random.default_rng(4).standard_normal((3, 8)) * 100
    np.testing.assert_allclose(student.block(x, sublayer("zero"), np.ones(8)), x, rtol=0, atol=0)


def test_block_keeps_the_signal(student, sublayer):
    """The lab's demo: a small update leaves the output within a small delta of x."""
    x = np.random.default_rng(5).standard_normal((3, 8)) * 100
    out = student.block(x, sublayer("scale", factor=0.01), np.ones(8))
    assert out.shape == x.shape
    assert np.allclose(out, x, atol=2.0)
    assert not np.allclose(out, x, atol=1e-6)


def test_postnorm_block_output_is_normalized(student, sublayer):
    """Post-norm normalizes the sum: every row of the output has RMS ~1 with gamma = 1."""
    x = np.random.default_rng(6).standard_normal((3, 8)) * 100
    out = student.postnorm_block(x, sublayer("scale", factor=0.5), np.ones(8))
    np.testing.assert_allclose(np.sqrt(np.mean(out**2, axis=-1)), np.ones(3), rtol=1e-6)
