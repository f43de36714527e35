"""Public tests for compare.py. Run them with ``normlab check`` (or ``pytest`` in this folder)."""

import numpy as np


def test_op_counts_structure(student):
    """op_counts returns both norms with flops, reductions and params; LayerNorm costs more."""
    counts = student.op_counts(64)
    assert set(counts) == {"rmsnorm", "layernorm"}
    for norm in counts.values():
        assert set(norm) == {"flops", "reductions", "params"}
    assert counts["layernorm"]["flops"] > counts["rmsnorm"]["flops"]
    assert counts["rmsnorm"]["params"] == 64


def test_shift_response(student):
    """Adding a constant barely moves LayerNorm's output, but moves RMSNorm's."""
    x = np.random.default_rng(10).standard_normal((3, 16))
    moved = student.shift_response(x, 5.0)
    assert moved["layernorm"] < 1e-9
    assert moved["rmsnorm"] > 0.1


def test_scale_response_is_small_for_both(student):
    """Multiplying the input by 10 barely moves either norm's output (both divide out the scale)."""
    x = np.random.default_rng(13).standard_normal((3, 16))
    moved = student.scale_response(x, 10.0)
    assert set(moved) == {"rmsnorm", "layernorm"}
    assert moved["rmsnorm"] < 1e-4 and moved["layernorm"] < 1e-4
