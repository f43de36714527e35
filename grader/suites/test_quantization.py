"""Hidden tests for quantization.py. Docstrings are what the student sees; inputs stay here."""

from typing import Any

import numpy as np
import pytest

from grader.checks import TOLERANCES, Hints, expect, expect_array, expect_attempt, expect_keys, expect_untouched
from grader.proxy import StudentProxy
from grader.reference import Reference
from grader.suites import _mistakes as m

TOL = TOLERANCES["algorithm"]  # a stack of quantized blocks rounds differently per order
KEYS = ("error", "max_abs", "outlier_ratio", "overflows", "rms", "zeroed")


def quantization_setup() -> tuple[np.ndarray, np.ndarray]:
    """solutions/quantization.py's documented setup, drawn the same way (a test keeps them equal)."""
    draw = np.random.default_rng(0).standard_normal
    weights = draw((12, 64, 64)) / np.sqrt(64)
    weights[:, 0, 0] = 2.0
    x = draw((8, 64))
    x[:, 0] = 100.0 * (1.0 + 0.1 * draw(8))
    return x, weights


def _stack(
    rng: np.random.Generator, n_layers: int, C: int, shape: tuple[int, ...], outlier: float, channel: int
) -> tuple[np.ndarray, np.ndarray]:
    weights = rng.standard_normal((n_layers, C, C)) / np.sqrt(C)
    weights[:, channel, channel] = 1.5
    x = rng.standard_normal((*shape, C))
    x[..., channel] += outlier
    return x, weights


def _check_quantize(student: StudentProxy, reference: Reference, w: np.ndarray, bits: int, **kwargs: Any) -> None:
    expect_array(
        student.quantize(w, bits, **kwargs),
        reference.quantize(w, bits, **kwargs),
        what="quantize(w, bits, ...)",
        hints=m.quantize_variants(w, bits, **kwargs),
    )


@pytest.mark.points(2)
def test_quantize_per_tensor(student: StudentProxy, reference: Reference, rng: np.random.Generator) -> None:
    """quantize per tensor (axis=None) at 8, 5, 3 and 2 bits, on a 3-D array of mixed scales."""
    w = rng.standard_normal((2, 5, 7)) * np.array([0.1, 1.0, 10.0, 1.0, 0.5, 2.0, 1.0])
    for bits in (8, 5, 3, 2):
        _check_quantize(student, reference, w, bits)


@pytest.mark.points(2)
def test_quantize_per_row_and_per_column(student: StudentProxy, reference: Reference, rng: np.random.Generator) -> None:
    """quantize with one scale per row (axis=-1) and per column (axis=0), one row and one column far larger."""
    w = rng.standard_normal((6, 9))
    w[2] *= 30.0
    w[:, 4] *= 0.01
    for bits, axis in ((4, -1), (4, 0), (2, -1), (6, 0)):
        _check_quantize(student, reference, w, bits, axis=axis)


@pytest.mark.points(1)
def test_quantize_with_a_clip(student: StudentProxy, reference: Reference, rng: np.random.Generator) -> None:
    """quantize with clip below 1, per tensor and per row: the largest values saturate."""
    w = rng.standard_normal((5, 8))
    for clip, axis in ((0.7, None), (0.4, -1)):
        _check_quantize(student, reference, w, 3, axis=axis, clip=clip)


@pytest.mark.points(1)
def test_quantize_an_all_zero_row(student: StudentProxy, reference: Reference, rng: np.random.Generator) -> None:
    """quantize per row when one row is all zeros: that row stays zeros, the others are quantized;
    and an all-zero array per tensor stays zeros."""
    # mistake: the guard against a zero scale only on the per-slice path, so an all-zero tensor
    # quantized per tensor divides 0 by 0 (NaN)
    w = rng.standard_normal((4, 6))
    w[1] = 0.0
    _check_quantize(student, reference, w, 4, axis=-1)
    for bits in (8, 2):
        _check_quantize(student, reference, np.zeros((3, 5)), bits)


@pytest.mark.points(1)
def test_quantize_rounds_halves_to_even(student: StudentProxy, reference: Reference, rng: np.random.Generator) -> None:
    """quantize rounds as np.round does: a value halfway between two levels goes to the even one."""
    # mistake: np.floor(w / scale + 0.5) or rounding half away from zero, which agree with
    # np.round everywhere but on exact halves (random weights never land on one)
    halves = np.array([7.0, 0.5, 1.5, 2.5, -2.5, -0.5, 3.5, -6.5, 4.0])  # max 7 = qmax at 4 bits: scale 1
    unit = 2.0 ** int(rng.integers(-4, 4))  # a power of two keeps every quotient exact
    _check_quantize(student, reference, halves * unit, 4)
    rows = np.stack([halves, -halves[::-1] * 2.0]) * unit  # each row's own scale: unit and 2 * unit
    _check_quantize(student, reference, rows, 4, axis=-1)


@pytest.mark.points(1)
def test_quantize_returns_float64(student: StudentProxy, reference: Reference, rng: np.random.Generator) -> None:
    """quantize returns float64 whatever the float dtype of w: a float32 w gives a float64 result."""
    # mistake: w used in its own dtype, so a float32 w gives a float32 result
    w = rng.standard_normal((6, 8)).astype(np.float32)
    for bits, axis in ((8, None), (4, 0)):
        expect_array(
            student.quantize(w, bits, axis=axis),
            reference.quantize(w, bits, axis=axis),
            what="quantize(w, bits, ...)",
            # the values of a float32 w, quantized in float32 and converted at the end, are close enough
            tol=TOLERANCES["float32"],
            hints=m.quantize_variants(w, bits, axis=axis),
        )


def _weights_only(x: np.ndarray, weights: np.ndarray, bits: int, axis: Any, eps: float) -> np.ndarray:
    """The stream when only the weights are quantized (the sublayer's input left in float)."""
    ones, inputs = np.ones(x.shape[-1]), [x]
    for w in weights:
        h = m.rms(inputs[-1], ones, eps)
        inputs.append(inputs[-1] + h @ _quantize(w, bits, axis))
    return np.stack(inputs)


def _quantize(w: np.ndarray, bits: int, axis: Any) -> np.ndarray:
    qmax = 2 ** (bits - 1) - 1
    scale = np.max(np.abs(w), axis=axis, keepdims=True) / qmax
    return np.asarray(np.clip(np.round(w / np.where(scale > 0, scale, 1.0)), -qmax, qmax) * scale)


def _check_stack(
    student: StudentProxy, reference: Reference, x: np.ndarray, weights: np.ndarray, bits: Any, **kwargs: Any
) -> None:
    got, want = (
        student.quantized_stack(x, weights, bits, **kwargs),
        reference.quantized_stack(x, weights, bits, **kwargs),
    )
    expect(isinstance(got, (tuple, list)) and len(got) == 2, "check.tuple_of", what="quantized_stack", n=2)
    axis, eps = kwargs.get("axis"), kwargs.get("eps", 1e-6)
    weights_only = Hints(lambda: [(_weights_only(x, weights, bits, axis, eps), "hint.quant_weights_only")])
    hints = [] if bits is None else weights_only
    expect_array(got[0], want[0], what="the array of norm inputs from quantized_stack(...)", tol=TOL, hints=hints)
    expect_array(got[1], want[1], what="zeroed of quantized_stack(...)", tol=TOL)


@pytest.mark.points(2)
def test_quantized_stack_on_other_stacks(student: StudentProxy, reference: Reference, rng: np.random.Generator) -> None:
    """quantized_stack on other depths and widths, a (B, T, C) input, per tensor and per column,
    another eps, and a single (C,) token (norm inputs of shape (L + 1, C))."""
    # mistake (the last call): the input forced to 2-D (np.atleast_2d), giving (L + 1, 1, C)
    x, weights = _stack(rng, 5, 12, (2, 3), 40.0, 3)
    _check_stack(student, reference, x, weights, 3)
    _check_stack(student, reference, x, weights, 2, axis=0, eps=1e-3)
    token, weights = _stack(rng, 3, 8, (), 20.0, 1)
    _check_stack(student, reference, token, weights, 4)


@pytest.mark.points(1)
def test_quantized_stack_in_float(student: StudentProxy, reference: Reference, rng: np.random.Generator) -> None:
    """quantized_stack with bits=None: nothing quantized, the plain pre-norm stack (zeroed still
    counts exact zeros: the input has a channel of them)."""
    x, weights = _stack(rng, 4, 10, (5,), 0.0, 0)
    x[:, 3] = 0.0  # mistake: zeroed left at 0 when nothing is quantized
    _check_stack(student, reference, x, weights, None)


def _report_hints(
    reference: Reference, x: np.ndarray, weights: np.ndarray, bits: Any, axis: Any, eps: float = 1e-6
) -> np.ndarray:
    """The drift over the whole stream instead of the median over channels."""
    f = reference.quantized_stack(x, weights, None, axis, eps)[0]
    rows = []
    for k in bits:
        s = reference.quantized_stack(x, weights, k, axis, eps)[0]
        rows.append([np.linalg.norm(a - b) / np.linalg.norm(b) for a, b in zip(s, f, strict=True)])
    return np.asarray(rows)


def _check_report(
    student: StudentProxy,
    reference: Reference,
    x: np.ndarray,
    weights: np.ndarray,
    bits: Any,
    axis: Any,
    **kwargs: Any,
) -> None:
    got = student.quantization_report(x, weights, bits, axis=axis, **kwargs)
    want = reference.quantization_report(x, weights, bits, axis=axis, **kwargs)
    expect_keys(got, KEYS, what="quantization_report(...)")
    whole_stream = Hints(
        lambda: [(_report_hints(reference, x, weights, bits, axis, **kwargs), "hint.quant_error_whole_stream")]
    )
    for key in KEYS:
        hints = whole_stream if key == "error" else []
        expect_array(got[key], want[key], what=f'quantization_report(...)["{key}"]', tol=TOL, hints=hints)


@pytest.mark.points(3)
def test_quantization_report_on_other_stacks(
    student: StudentProxy, reference: Reference, rng: np.random.Generator
) -> None:
    """quantization_report on stacks with an outlier in another channel, other bit widths, per tensor and per column."""
    x, weights = _stack(rng, 6, 16, (2, 5), 150.0, 5)
    _check_report(student, reference, x, weights, (None, 6, 3, 2), None)
    # mistake: a float run kept in a global, keyed by the shapes, reused for the next stack (trial 63)
    for _ in range(2):
        x, weights = _stack(rng, 3, 8, (4,), 20.0, 1)
        _check_report(student, reference, x, weights, (8, 2), 0)


@pytest.mark.points(2)
def test_quantization_report_of_the_setup(student: StudentProxy, reference: Reference) -> None:
    """quantization_report on the documented setup (quantization_setup()), per tensor and per column."""
    x, weights = quantization_setup()
    for axis in (None, 0):
        _check_report(student, reference, x, weights, (None, 8, 4, 2), axis)


@pytest.mark.points(1)
def test_quantization_report_counts_overflowing_sums(
    student: StudentProxy, reference: Reference, rng: np.random.Generator
) -> None:
    """overflows counts tokens whose sum of squares exceeds float16's largest value, even when no
    single square does (a wide stream of moderate values, no outlier channel), in each bit
    width's own stream (tokens near the limit, which rounding moves across it)."""
    x, weights = _stack(rng, 3, 64, (6,), 0.0, 0)
    x = x * np.array([50.0, 10.0, 50.0, 5.0, 50.0, 10.0])[:, None]  # sums of squares ~160000 or below 6400
    _check_report(student, reference, x, weights, (None, 8, 2), None)
    # mistake: every row counted on the float64 run's stream (here they differ, at 2 bits)
    x, weights = _stack(rng, 3, 64, (40,), 0.0, 0)
    near = np.sqrt(np.linspace(60_000.0, 70_000.0, 40) / np.sum(x**2, axis=-1))  # FLOAT16_MAX is 65504
    _check_report(student, reference, x * near[:, None], weights, (None, 8, 2), None)


@pytest.mark.points(1)
def test_quantization_report_uses_eps(student: StudentProxy, reference: Reference, rng: np.random.Generator) -> None:
    """quantization_report passes its eps to every norm, in the float run and the quantized ones."""
    x, weights = _stack(rng, 3, 8, (2, 4), 0.0, 2)
    _check_report(student, reference, x * 0.1, weights, (None, 4), None, eps=1e-2)


@pytest.mark.points(1)
def test_quantize_leaves_w_unchanged(student: StudentProxy, reference: Reference, rng: np.random.Generator) -> None:
    """quantize returns a new array and leaves w exactly as it was (no in-place rounding)."""
    w = rng.standard_normal((6, 10))
    got = student.quantize(w, 4, axis=1)
    changed = student.recorded().mutated
    want = reference.quantize(w, 4, axis=1)
    expect_attempt(got, want, what="quantize(w, bits, axis)", hints=m.quantize_variants(w, 4, axis=1))
    expect_untouched(changed, function="quantize")


@pytest.mark.points(1)
def test_quantized_stack_leaves_its_inputs_unchanged(
    student: StudentProxy, reference: Reference, rng: np.random.Generator
) -> None:
    """quantized_stack leaves x and the weights exactly as they were."""
    x, weights = _stack(rng, 3, 8, (4,), 20.0, 1)
    got = student.quantized_stack(x, weights, 4)
    changed = student.recorded().mutated
    want = reference.quantized_stack(x, weights, 4)
    expect(isinstance(got, (tuple, list)) and len(got) == 2, "check.tuple_of", what="quantized_stack", n=2)
    hints = Hints(lambda: [(_weights_only(x, weights, 4, None, 1e-6), "hint.quant_weights_only")])
    expect_attempt(got[0], want[0], what="the array of norm inputs from quantized_stack(...)", tol=TOL, hints=hints)
    expect_untouched(changed, function="quantized_stack")
