"""Hidden tests for rmsnorm.py. Docstrings are what the student sees; inputs stay here."""

from typing import Any

import numpy as np
import pytest
from numpy.typing import DTypeLike

from grader.checks import TOLERANCES, expect, expect_array, expect_attempt, expect_untouched, tolerance_for
from grader.proxy import StudentProxy
from grader.reference import Reference
from grader.suites import _mistakes as m

EPS = 1e-6
UNTOUCHED_DTYPES = (np.float64, np.float32, np.float16)


def _case(
    rng: np.random.Generator,
    shape: tuple[int, ...],
    scale: float = 1.0,
    dtype: DTypeLike = np.float64,
    offset: float = 0.0,
) -> tuple[np.ndarray, np.ndarray]:
    # Clipped into the dtype's range: float16 tops out at 65504, and an inf input would be
    # a broken test, not a hard one.
    limit = 0.9 * float(np.finfo(dtype).max)
    x = np.clip(rng.standard_normal(shape) * scale + offset, -limit, limit).astype(dtype)
    gamma = (1.0 + 0.5 * rng.standard_normal(shape[-1])).astype(dtype)
    return x, gamma


def _check(
    student: StudentProxy,
    reference: Reference,
    x: np.ndarray,
    gamma: Any,
    eps: float = EPS,
    what: str = "rmsnorm(x, gamma, eps)",
    **kwargs: Any,
) -> None:
    got = student.rmsnorm(x, gamma, eps=eps)
    want = reference.rmsnorm(x, gamma, eps=eps)
    expect_array(got, want, what=what, hints=m.rmsnorm_hints(x, gamma, eps), **kwargs)


@pytest.mark.points(2)
def test_sequence_of_tokens(student: StudentProxy, reference: Reference, rng: np.random.Generator) -> None:
    """A (T, C) float64 sequence matches the formula x / sqrt(mean(x**2, -1) + eps) * gamma."""
    _check(student, reference, *_case(rng, (7, 16)))


@pytest.mark.points(2)
def test_batch_of_sequences(student: StudentProxy, reference: Reference, rng: np.random.Generator) -> None:
    """A (B, T, C) batch is normalized per token, over the last axis only."""
    _check(student, reference, *_case(rng, (3, 5, 24)))


@pytest.mark.points(1)
def test_single_vector(student: StudentProxy, reference: Reference, rng: np.random.Generator) -> None:
    """A single (C,) vector works."""
    _check(student, reference, *_case(rng, (33,)))


@pytest.mark.points(1)
def test_four_axes_odd_sizes(student: StudentProxy, reference: Reference, rng: np.random.Generator) -> None:
    """A 4-D batch: any number of leading axes, with odd and size-one dimensions."""
    _check(student, reference, *_case(rng, (2, 1, 3, 7)))


@pytest.mark.points(1)
def test_width_one(student: StudentProxy, reference: Reference, rng: np.random.Generator) -> None:
    """A single-feature token works (each value is divided by its own magnitude)."""
    _check(student, reference, *_case(rng, (6, 1)))


@pytest.mark.points(2)
def test_eps_is_a_parameter(student: StudentProxy, reference: Reference, rng: np.random.Generator) -> None:
    """The eps argument is used, not a constant written into the function."""
    x, gamma = _case(rng, (4, 9), scale=0.05)
    _check(student, reference, x, gamma, eps=1e-2)


@pytest.mark.points(2)
def test_tiny_values_near_eps(student: StudentProxy, reference: Reference, rng: np.random.Generator) -> None:
    """Values so small that eps matters: eps belongs inside the square root."""
    _check(student, reference, *_case(rng, (5, 12), scale=1e-3))


@pytest.mark.points(1)
def test_large_values(student: StudentProxy, reference: Reference, rng: np.random.Generator) -> None:
    """Large values (in the thousands) come out at unit scale."""
    _check(student, reference, *_case(rng, (5, 12), scale=1e4))


@pytest.mark.points(1)
def test_mean_shifted_input(student: StudentProxy, reference: Reference, rng: np.random.Generator) -> None:
    """Inputs with a large common offset: RMSNorm does not subtract the mean."""
    _check(student, reference, *_case(rng, (4, 10), offset=3.0))


@pytest.mark.points(2)
def test_zero_vector(student: StudentProxy, reference: Reference, rng: np.random.Generator) -> None:
    """An all-zero token gives zeros, not NaN: eps keeps the division safe."""
    x, gamma = _case(rng, (3, 8))
    x[1] = 0.0
    _check(student, reference, x, gamma)


@pytest.mark.points(1)
def test_float32_keeps_dtype(student: StudentProxy, reference: Reference, rng: np.random.Generator) -> None:
    """float32 input gives a float32 result of the right values."""
    _check(student, reference, *_case(rng, (4, 6, 16), dtype=np.float32))


@pytest.mark.points(1)
def test_mixed_dtypes_keep_the_dtype_of_x(
    student: StudentProxy, reference: Reference, rng: np.random.Generator
) -> None:
    """A float32 x with a float64 gamma gives a float32 result: the dtype is x's, not gamma's."""
    x, gamma = _case(rng, (3, 5, 16), dtype=np.float32)
    _check(student, reference, x, gamma.astype(np.float64))


@pytest.mark.points(2)
def test_float16_near_its_range(student: StudentProxy, reference: Reference, rng: np.random.Generator) -> None:
    """float16 values near float16's maximum: squaring them in float16 would overflow."""
    x, gamma = _case(rng, (4, 32), scale=2e4, dtype=np.float16)
    _check(student, reference, x, gamma)


@pytest.mark.points(1)
def test_float16_small_values(student: StudentProxy, reference: Reference, rng: np.random.Generator) -> None:
    """Ordinary float16 values give a float16 result."""
    _check(student, reference, *_case(rng, (2, 3, 16), dtype=np.float16))


@pytest.mark.points(2)
def test_inputs_not_modified(student: StudentProxy, reference: Reference, rng: np.random.Generator) -> None:
    """rmsnorm leaves x and gamma exactly as they were (no in-place operations), in float64, float32 and float16."""
    # Each dtype: x.astype(x.dtype, copy=False) is x itself, so an in-place step may touch one.
    for dtype in UNTOUCHED_DTYPES:
        x, gamma = _case(rng, (4, 8), dtype=dtype)
        got = student.rmsnorm(x, gamma, eps=EPS)
        changed = student.recorded().mutated
        # Only an honest attempt earns these points: the record of changes comes from the
        # student's own process, and untouched inputs alone are no achievement.
        want = reference.rmsnorm(x, gamma, eps=EPS)
        hints = m.rmsnorm_hints(x, gamma, EPS)
        expect_attempt(got, want, what="rmsnorm(x, gamma, eps)", hints=hints, tol=tolerance_for(dtype))
        expect_untouched(changed, function="rmsnorm")


# --- backward ----------------------------------------------------------------------------------


def _check_backward(
    student: StudentProxy, reference: Reference, dout: np.ndarray, x: np.ndarray, gamma: Any, eps: float = EPS
) -> None:
    got = student.rmsnorm_backward(dout, x, gamma, eps=eps)
    want = reference.rmsnorm_backward(dout, x, gamma, eps=eps)
    expect(isinstance(got, (tuple, list)) and len(got) == 2, "check.tuple_of", what="rmsnorm_backward", n=2)
    dx, dgamma = got
    # The precision of the computation is x's: a float64 gamma does not make a float32 x's
    # gradients float64-exact, so every gradient is judged at x's tolerance.
    tol = TOLERANCES["algorithm"] if x.dtype == np.float64 else tolerance_for(x.dtype)
    x64, g64, d64 = (a.astype(np.float64) for a in (x, gamma, dout))
    expect_array(
        dx,
        want[0],
        what="dx",
        tol=tol,
        hints=[(m.rms_backward_no_correction(d64, x64, g64, eps), "hint.backward_no_correction")],
    )
    xhat = x64 / np.sqrt(np.mean(x64**2, axis=-1, keepdims=True) + eps)
    expect_array(
        dgamma, want[1], what="dgamma", tol=tol, hints=[(np.sum(d64 * xhat, axis=0), "hint.dgamma_not_summed")]
    )


@pytest.mark.points(2)
def test_backward_sequence(student: StudentProxy, reference: Reference, rng: np.random.Generator) -> None:
    """dx and dgamma for a (T, C) input, including the correction for the shared RMS."""
    x, gamma = _case(rng, (6, 10))
    _check_backward(student, reference, rng.standard_normal(x.shape), x, gamma)


@pytest.mark.points(2)
def test_backward_batch_sums_dgamma_over_all_leading_axes(
    student: StudentProxy, reference: Reference, rng: np.random.Generator
) -> None:
    """For (B, T, C) input, dgamma has shape (C,): summed over the batch and the sequence."""
    x, gamma = _case(rng, (3, 4, 10))
    _check_backward(student, reference, rng.standard_normal(x.shape), x, gamma)


@pytest.mark.points(1)
def test_backward_single_vector(student: StudentProxy, reference: Reference, rng: np.random.Generator) -> None:
    """The backward pass works for a single (C,) vector."""
    x, gamma = _case(rng, (12,))
    _check_backward(student, reference, rng.standard_normal(x.shape), x, gamma)


@pytest.mark.points(1)
def test_backward_uses_eps(student: StudentProxy, reference: Reference, rng: np.random.Generator) -> None:
    """The backward pass uses the eps it is given."""
    x, gamma = _case(rng, (4, 7), scale=0.05)
    _check_backward(student, reference, rng.standard_normal(x.shape), x, gamma, eps=1e-2)


@pytest.mark.points(1)
def test_backward_float32(student: StudentProxy, reference: Reference, rng: np.random.Generator) -> None:
    """float32 inputs give float32 gradients."""
    x, gamma = _case(rng, (5, 16), dtype=np.float32)
    _check_backward(student, reference, rng.standard_normal(x.shape).astype(np.float32), x, gamma)


@pytest.mark.points(1)
def test_backward_float16_keeps_dtypes(student: StudentProxy, reference: Reference, rng: np.random.Generator) -> None:
    """float16 inputs give float16 gradients (computed in float32, cast back)."""
    x, gamma = _case(rng, (4, 16), dtype=np.float16)
    _check_backward(student, reference, rng.standard_normal(x.shape).astype(np.float16), x, gamma)


@pytest.mark.points(1)
def test_backward_mixed_dtypes(student: StudentProxy, reference: Reference, rng: np.random.Generator) -> None:
    """With a float32 x and a float64 gamma, dx is float32 and dgamma float64; a float64 dout changes neither."""
    x, gamma = _case(rng, (5, 16), dtype=np.float32)
    _check_backward(student, reference, rng.standard_normal(x.shape).astype(np.float32), x, gamma.astype(np.float64))
    # dx takes x's dtype and dgamma gamma's, not the upstream gradient's
    _check_backward(student, reference, rng.standard_normal(x.shape), x, gamma)


@pytest.mark.points(1)
def test_backward_inputs_not_modified(student: StudentProxy, reference: Reference, rng: np.random.Generator) -> None:
    """rmsnorm_backward leaves dout, x and gamma unchanged, in float64, float32 and float16."""
    for dtype in UNTOUCHED_DTYPES:
        x, gamma = _case(rng, (4, 8), dtype=dtype)
        dout = rng.standard_normal(x.shape).astype(dtype)
        got = student.rmsnorm_backward(dout, x, gamma, eps=EPS)
        changed = student.recorded().mutated
        want = reference.rmsnorm_backward(dout, x, gamma, eps=EPS)
        expect(isinstance(got, (tuple, list)) and len(got) == 2, "check.tuple_of", what="rmsnorm_backward", n=2)
        x64, g64, d64 = (a.astype(np.float64) for a in (x, gamma, dout))
        no_correction = m.rms_backward_no_correction(d64, x64, g64, EPS)
        tol = TOLERANCES["algorithm"] if dtype == np.float64 else tolerance_for(dtype)
        expect_attempt(got[0], want[0], what="dx", tol=tol, hints=[(no_correction, "hint.backward_no_correction")])
        expect_untouched(changed, function="rmsnorm_backward")


@pytest.mark.points(1)
def test_default_eps(student: StudentProxy, reference: Reference, rng: np.random.Generator) -> None:
    """rmsnorm called without eps uses the documented default, 1e-6, on rows small enough for it to matter."""
    x, gamma = _case(rng, (3, 8), scale=0.002)
    expect_array(
        student.rmsnorm(x, gamma),
        reference.rmsnorm(x, gamma),
        what="rmsnorm(x, gamma)",
        hints=m.rmsnorm_hints(x, gamma, EPS),
    )


@pytest.mark.points(1)
def test_backward_float16_large_values(student: StudentProxy, reference: Reference, rng: np.random.Generator) -> None:
    """float16 values in the hundreds: their squares overflow float16, so the gradients need float32 inside."""
    x, gamma = _case(rng, (4, 16), scale=300.0, dtype=np.float16)
    _check_backward(student, reference, rng.standard_normal(x.shape).astype(np.float16), x, gamma)


@pytest.mark.points(1)
def test_backward_four_axes(student: StudentProxy, reference: Reference, rng: np.random.Generator) -> None:
    """The backward pass on a 4-D batch: dgamma sums over every leading axis, however many there are."""
    x, gamma = _case(rng, (2, 3, 2, 9))
    _check_backward(student, reference, rng.standard_normal(x.shape), x, gamma)


@pytest.mark.points(1)
def test_backward_default_eps(student: StudentProxy, reference: Reference, rng: np.random.Generator) -> None:
    """rmsnorm_backward called without eps uses the documented default, 1e-6, on rows small enough for it to matter."""
    x, gamma = _case(rng, (3, 8), scale=0.002)
    dout = rng.standard_normal(x.shape)
    got = student.rmsnorm_backward(dout, x, gamma)
    want = reference.rmsnorm_backward(dout, x, gamma)
    expect(isinstance(got, (tuple, list)) and len(got) == 2, "check.tuple_of", what="rmsnorm_backward", n=2)
    tol = TOLERANCES["algorithm"]
    expect_array(got[0], want[0], what="dx", tol=tol)
    expect_array(got[1], want[1], what="dgamma", tol=tol)
