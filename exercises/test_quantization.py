"""Public tests for quantization.py. Run them with ``normlab check`` (or ``pytest`` in this folder)."""

import numpy as np


def _stack(seed, n_layers, C, T=3):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((T, C)) * 3.0, rng.standard_normal((n_layers, C, C)) / np.sqrt(C)


def test_quantize_per_tensor_and_per_row(student, expected):
    """quantize a (4, 6) array to 8, 4 and 2 bits, per tensor (axis=None) and per row (axis=-1);
    the provided quantization_setup is unchanged."""
    shapes = [np.shape(a) for a in student.quantization_setup(n_layers=3, C=4, T=2)]
    expected.require(shapes == [(2, 4), (3, 4, 4)], "public.setup_changed", function="quantization_setup")
    w = np.random.default_rng(20).standard_normal((4, 6))
    for bits in (8, 4, 2):
        for axis in (None, -1):
            expected.check(student.quantize, w, bits, axis=axis, what=f"quantize(w, {bits}, axis={axis})")


def test_quantize_with_a_clip(student, expected):
    """quantize with clip=0.5: the largest values saturate at +-qmax * scale."""
    w = np.random.default_rng(21).standard_normal((3, 5))
    expected.check(student.quantize, w, 4, clip=0.5, what="quantize(w, 4, clip=0.5)")


def test_quantized_stack_of_a_small_stack(student, expected):
    """quantized_stack on 4 blocks of width 8, float (bits=None) and 4 bits: what reaches each norm."""
    x, weights = _stack(22, 4, 8)
    for bits in (None, 4):
        inputs, zeroed = expected.check(
            student.quantized_stack, x, weights, bits, what=f"quantized_stack(x, w, {bits})"
        )
        expected.require(np.shape(inputs) == (5, 3, 8), "public.stream_per_norm", shape=str(np.shape(inputs)))


def test_quantization_report_of_a_small_stack(student, expected):
    """quantization_report on 4 blocks of width 8 with an outlier channel: every key, one row per bit width."""
    x, weights = _stack(23, 4, 8)
    x[:, 0] = 60.0
    report = expected.check(student.quantization_report, x, weights, what="quantization_report(x, w)")
    shape = str(np.shape(report["zeroed"]))
    expected.require(np.shape(report["zeroed"]) == (4, 4), "public.zeroed_shape", shape=shape)
