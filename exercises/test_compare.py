"""Public tests for compare.py. Run them with ``normlab check`` (or ``pytest`` in this folder)."""

import numpy as np


def test_op_counts_for_a_small_width(student, expected):
    """op_counts follows the docstring's convention: both norms' flops, reductions and params."""
    counts = expected.check(student.op_counts, 64, what="op_counts(64)")
    expected.require(counts["layernorm"]["flops"] > counts["rmsnorm"]["flops"], "public.layernorm_flops")


def test_shift_response(student, expected):
    """Adding a constant barely moves LayerNorm's output, but moves RMSNorm's."""
    x = np.random.default_rng(10).standard_normal((3, 16))
    moved = student.shift_response(x, 5.0)
    expected.require(moved["layernorm"] < 1e-9, "public.layernorm_moved")
    expected.check(student.shift_response, x, 5.0, what="shift_response(x, 5)", rel=1e-6)


def test_scale_response_is_small_for_both(student, expected):
    """Multiplying ordinary values by 10 barely moves either norm's output (both divide out the scale)."""
    x = np.random.default_rng(13).standard_normal((3, 16))
    expected.check(student.scale_response, x, 10.0, what="scale_response(x, 10)", rel=1e-6)


def test_scale_response_where_eps_matters(student, expected):
    """For values so tiny that eps is not negligible, rescaling them does move the outputs."""
    x = np.random.default_rng(13).standard_normal((3, 16)) * 1e-4
    expected.check(student.scale_response, x, 10.0, what="scale_response(tiny x, 10)", rel=1e-6)
