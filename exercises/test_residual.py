"""Public tests for residual.py. Run them with ``normlab check`` (or ``pytest`` in this folder)."""

import numpy as np


def test_block_with_a_silent_sublayer_is_the_identity(student, sublayer, expected):
    """If the sublayer outputs zeros, the pre-norm block returns x unchanged; a real one adds its update."""
    rng = np.random.default_rng(4)
    x, gamma = rng.standard_normal((3, 8)) * 100, 1.0 + 0.3 * rng.standard_normal(8)
    expected.check(student.block, x, sublayer("zero"), gamma, what="block(x, silent sublayer, gamma)")
    w = rng.standard_normal((8, 8)) * 0.3
    expected.check(student.block, x, sublayer("linear", w=w), gamma, what="block(x, linear sublayer, gamma)")


def test_block_keeps_the_signal(student, sublayer, expected):
    """The lab's demo: a small update leaves the output within a small delta of x."""
    x = np.random.default_rng(5).standard_normal((3, 8)) * 100
    gamma = np.linspace(0.5, 1.5, 8)
    out = expected.check(student.block, x, sublayer("scale", factor=0.01), gamma, what="block(x, small update, gamma)")
    expected.require(np.abs(out - x).max() < 0.1, "public.small_update_moved")


def test_postnorm_block_output_is_normalized(student, sublayer, expected):
    """Post-norm normalizes the sum: every row of the output has RMS ~1 times its gain; x is not modified."""
    rng = np.random.default_rng(6)
    x, w = rng.standard_normal((3, 8)) * 100, rng.standard_normal((8, 8)) * 0.3
    gamma, before = np.linspace(0.5, 1.5, 8), x.copy()
    expected.check(student.postnorm_block, x, sublayer("linear", w=w), gamma, what="postnorm_block(x, f, gamma)")
    expected.untouched(student, "postnorm_block", x=(x, before))
