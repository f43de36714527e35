"""Hidden tests for layernorm.py. Docstrings are what the student sees; inputs stay here."""

from typing import Any

import numpy as np
import pytest
from numpy.typing import DTypeLike

from grader.checks import TOLERANCES, expect, expect_array, expect_attempt, expect_untouched, tolerance_for
from grader.proxy import StudentProxy
from grader.reference import Reference
from grader.suites import _mistakes as m

EPS = 1e-5
UNTOUCHED_DTYPES = (np.float64, np.float32, np.float16)


def _case(
    rng: np.random.Generator,
    shape: tuple[int, ...],
    scale: float = 1.0,
    dtype: DTypeLike = np.float64,
    offset: float = 0.0,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    # Clipped into the dtype's range: float16 tops out at 65504, and an inf input would be
    # a broken test, not a hard one.
    limit = 0.9 * float(np.finfo(dtype).max)
    x = np.clip(rng.standard_normal(shape) * scale + offset, -limit, limit).astype(dtype)
    C = shape[-1]
    gamma = (1.0 + 0.5 * rng.standard_normal(C)).astype(dtype)
    beta = (0.3 * rng.standard_normal(C) + 0.7).astype(dtype)
    return x, gamma, beta


def _check(student: StudentProxy, reference: Reference, x: np.ndarray, gamma: Any, beta: Any, eps: float = EPS) -> None:
    got = student.layernorm(x, gamma, beta, eps=eps)
    want = reference.layernorm(x, gamma, beta, eps=eps)
    expect_array(got, want, what="layernorm(x, gamma, beta, eps)", hints=m.layernorm_hints(x, gamma, beta, eps))


@pytest.mark.points(2)
def test_sequence_of_tokens(student: StudentProxy, reference: Reference, rng: np.random.Generator) -> None:
    """A (T, C) float64 sequence matches (x - mean) / sqrt(var + eps) * gamma + beta per token."""
    _check(student, reference, *_case(rng, (7, 16), offset=2.0))


@pytest.mark.points(2)
def test_batch_of_sequences(student: StudentProxy, reference: Reference, rng: np.random.Generator) -> None:
    """A (B, T, C) batch is normalized per token, over the last axis only."""
    _check(student, reference, *_case(rng, (3, 5, 24)))


@pytest.mark.points(1)
def test_single_vector(student: StudentProxy, reference: Reference, rng: np.random.Generator) -> None:
    """A single (C,) vector works."""
    _check(student, reference, *_case(rng, (31,)))


@pytest.mark.points(1)
def test_four_axes_odd_sizes(student: StudentProxy, reference: Reference, rng: np.random.Generator) -> None:
    """A 4-D batch: any number of leading axes, with odd and size-one dimensions."""
    _check(student, reference, *_case(rng, (2, 3, 1, 9)))


@pytest.mark.points(2)
def test_biased_variance_on_narrow_tokens(
    student: StudentProxy, reference: Reference, rng: np.random.Generator
) -> None:
    """With narrow tokens (few features) the variance divides by C, not C - 1."""
    _check(student, reference, *_case(rng, (6, 4)))


@pytest.mark.points(2)
def test_gain_and_shift_roles(student: StudentProxy, reference: Reference, rng: np.random.Generator) -> None:
    """gamma scales and beta shifts, per feature, with clearly different values."""
    x, _, _ = _case(rng, (5, 8))
    gamma = np.linspace(0.5, 3.0, 8)
    beta = np.linspace(-2.0, 1.0, 8)
    _check(student, reference, x, gamma, beta)


@pytest.mark.points(2)
def test_eps_is_a_parameter(student: StudentProxy, reference: Reference, rng: np.random.Generator) -> None:
    """The eps argument is used, not a constant written into the function."""
    _check(student, reference, *_case(rng, (4, 9), scale=0.05), eps=1e-2)


@pytest.mark.points(2)
def test_tiny_spread_near_eps(student: StudentProxy, reference: Reference, rng: np.random.Generator) -> None:
    """Tokens whose spread is close to sqrt(eps): eps belongs inside the square root."""
    _check(student, reference, *_case(rng, (5, 12), scale=3e-3, offset=1.0))


@pytest.mark.points(1)
def test_large_values(student: StudentProxy, reference: Reference, rng: np.random.Generator) -> None:
    """Large values (in the thousands) with a large offset come out centered and at unit scale."""
    _check(student, reference, *_case(rng, (5, 12), scale=1e4, offset=5e4))


@pytest.mark.points(2)
def test_constant_token(student: StudentProxy, reference: Reference, rng: np.random.Generator) -> None:
    """A token whose features are all equal gives beta, not NaN."""
    x, gamma, beta = _case(rng, (3, 8))
    x[2] = 4.0
    _check(student, reference, x, gamma, beta)


@pytest.mark.points(1)
def test_float32_keeps_dtype(student: StudentProxy, reference: Reference, rng: np.random.Generator) -> None:
    """float32 input, near zero and far from it, gives a float32 result of the right values."""
    _check(student, reference, *_case(rng, (4, 6, 16), dtype=np.float32))
    # Far from zero, mean(x**2) - mean(x)**2 loses float32's digits: only a centered variance holds.
    _check(student, reference, *_case(rng, (4, 6, 16), dtype=np.float32, offset=50.0))


@pytest.mark.points(1)
def test_mixed_dtypes_keep_the_dtype_of_x(
    student: StudentProxy, reference: Reference, rng: np.random.Generator
) -> None:
    """A float32 x with float64 gamma and beta gives a float32 result: the dtype is x's."""
    x, gamma, beta = _case(rng, (3, 5, 16), dtype=np.float32)
    _check(student, reference, x, gamma.astype(np.float64), beta.astype(np.float64))


@pytest.mark.points(2)
def test_float16_near_its_range(student: StudentProxy, reference: Reference, rng: np.random.Generator) -> None:
    """float16 values near float16's maximum: squares must not overflow."""
    _check(student, reference, *_case(rng, (4, 32), scale=2e4, dtype=np.float16))


@pytest.mark.points(2)
def test_inputs_not_modified(student: StudentProxy, reference: Reference, rng: np.random.Generator) -> None:
    """layernorm leaves x, gamma and beta exactly as they were, in float64, float32 and float16."""
    # Each dtype: x.astype(x.dtype, copy=False) is x itself, so an in-place step may touch one.
    for dtype in UNTOUCHED_DTYPES:
        x, gamma, beta = _case(rng, (4, 8), dtype=dtype)
        got = student.layernorm(x, gamma, beta, eps=EPS)
        changed = student.recorded().mutated
        want = reference.layernorm(x, gamma, beta, eps=EPS)
        hints = m.layernorm_hints(x, gamma, beta, EPS)
        expect_attempt(got, want, what="layernorm(x, gamma, beta, eps)", hints=hints, tol=tolerance_for(dtype))
        expect_untouched(changed, function="layernorm")


# --- backward ----------------------------------------------------------------------------------


def _check_backward(
    student: StudentProxy,
    reference: Reference,
    rng: np.random.Generator,
    x: np.ndarray,
    gamma: Any,
    beta: Any,
    eps: float | None = EPS,
    dout_dtype: DTypeLike | None = None,
) -> None:
    dout = rng.standard_normal(x.shape).astype(x.dtype if dout_dtype is None else dout_dtype)
    # eps=None calls without eps: the documented default
    given = {} if eps is None else {"eps": eps}
    got = student.layernorm_backward(dout, x, gamma, beta, **given)
    want = reference.layernorm_backward(dout, x, gamma, beta, **given)
    eps = EPS if eps is None else eps  # the tests' EPS is the documented default
    expect(isinstance(got, (tuple, list)) and len(got) == 3, "check.tuple_of", what="layernorm_backward", n=3)
    # The precision of the computation is x's: a float64 gamma does not make a float32 x's
    # gradients float64-exact, so every gradient is judged at x's tolerance.
    tol = TOLERANCES["algorithm"] if x.dtype == np.float64 else tolerance_for(x.dtype)
    x64, g64, d64 = (a.astype(np.float64) for a in (x, gamma, dout))
    expect_array(
        got[0],
        want[0],
        what="dx",
        tol=tol,
        hints=[
            (m.ln_backward_no_correction(d64, x64, g64, eps), "hint.backward_no_correction"),
            (m.ln_backward_mean_only(d64, x64, g64, eps), "hint.layernorm_backward_mean_only"),
            (m.ln_backward_no_mean_term(d64, x64, g64, eps), "hint.layernorm_backward_no_mean_term"),
            *(
                [(m.ln_backward_in_float16(dout, x, gamma, eps), "hint.float16_overflow")]
                if x.dtype == np.float16
                else []
            ),
            (m.ln_backward_one_pass(dout, x, gamma, eps), "hint.one_pass_variance"),
        ],
    )
    xc = x64 - x64.mean(axis=-1, keepdims=True)
    xhat = xc / np.sqrt(np.mean(xc**2, axis=-1, keepdims=True) + eps)
    expect_array(
        got[1], want[1], what="dgamma", tol=tol, hints=[(np.sum(d64 * xhat, axis=0), "hint.dgamma_not_summed")]
    )
    expect_array(got[2], want[2], what="dbeta", tol=tol, hints=[(np.sum(d64, axis=0), "hint.dgamma_not_summed")])


@pytest.mark.points(2)
def test_backward_sequence(student: StudentProxy, reference: Reference, rng: np.random.Generator) -> None:
    """dx, dgamma and dbeta for a (T, C) input, including both correction terms in dx."""
    _check_backward(student, reference, rng, *_case(rng, (6, 10)))


@pytest.mark.points(2)
def test_backward_batch_sums_over_all_leading_axes(
    student: StudentProxy, reference: Reference, rng: np.random.Generator
) -> None:
    """For (B, T, C) input, dgamma and dbeta have shape (C,): summed over batch and sequence."""
    _check_backward(student, reference, rng, *_case(rng, (3, 4, 10)))


@pytest.mark.points(1)
def test_backward_single_vector(student: StudentProxy, reference: Reference, rng: np.random.Generator) -> None:
    """The backward pass works for a single (C,) vector."""
    _check_backward(student, reference, rng, *_case(rng, (12,)))


@pytest.mark.points(1)
def test_backward_uses_eps(student: StudentProxy, reference: Reference, rng: np.random.Generator) -> None:
    """The backward pass uses the eps it is given."""
    _check_backward(student, reference, rng, *_case(rng, (4, 7), scale=0.05), eps=1e-2)


@pytest.mark.points(1)
def test_backward_float32(student: StudentProxy, reference: Reference, rng: np.random.Generator) -> None:
    """float32 inputs, near zero and far from it, give float32 gradients of the right values."""
    _check_backward(student, reference, rng, *_case(rng, (5, 16), dtype=np.float32))
    _check_backward(student, reference, rng, *_case(rng, (5, 16), dtype=np.float32, offset=50.0))


@pytest.mark.points(1)
def test_backward_mixed_dtypes(student: StudentProxy, reference: Reference, rng: np.random.Generator) -> None:
    """With a float32 x, dx is float32 while dgamma and dbeta take the dtypes of gamma and beta (a float64 dout
    changes none of them)."""
    x, gamma, beta = _case(rng, (5, 16), dtype=np.float32)
    # dgamma and dbeta in x's dtype; then dbeta in gamma's dtype (beta's differs from it)
    _check_backward(student, reference, rng, x, gamma.astype(np.float64), beta.astype(np.float64))
    _check_backward(student, reference, rng, x, gamma.astype(np.float64), beta)
    # dx takes x's dtype, dgamma and dbeta gamma's and beta's: not the upstream gradient's
    _check_backward(student, reference, rng, x, gamma, beta, dout_dtype=np.float64)


@pytest.mark.points(1)
def test_backward_float16_keeps_dtypes(student: StudentProxy, reference: Reference, rng: np.random.Generator) -> None:
    """float16 inputs give float16 gradients (computed in float32, cast back)."""
    _check_backward(student, reference, rng, *_case(rng, (4, 16), dtype=np.float16))


@pytest.mark.points(1)
def test_backward_float16_large_values(student: StudentProxy, reference: Reference, rng: np.random.Generator) -> None:
    """float16 values in the hundreds: their centered squares overflow float16, so the gradients need float32 inside."""
    _check_backward(student, reference, rng, *_case(rng, (4, 16), scale=300.0, dtype=np.float16))


@pytest.mark.points(1)
def test_backward_inputs_not_modified(student: StudentProxy, reference: Reference, rng: np.random.Generator) -> None:
    """layernorm_backward leaves dout, x, gamma and beta unchanged, in float64, float32 and float16."""
    for dtype in UNTOUCHED_DTYPES:
        x, gamma, beta = _case(rng, (4, 8), dtype=dtype)
        dout = rng.standard_normal(x.shape).astype(dtype)
        got = student.layernorm_backward(dout, x, gamma, beta, eps=EPS)
        changed = student.recorded().mutated
        want = reference.layernorm_backward(dout, x, gamma, beta, eps=EPS)
        expect(isinstance(got, (tuple, list)) and len(got) == 3, "check.tuple_of", what="layernorm_backward", n=3)
        x64, g64, d64 = (a.astype(np.float64) for a in (x, gamma, dout))
        hints = [(m.ln_backward_no_correction(d64, x64, g64, EPS), "hint.backward_no_correction")]
        tol = TOLERANCES["algorithm"] if dtype == np.float64 else tolerance_for(dtype)
        expect_attempt(got[0], want[0], what="dx", tol=tol, hints=hints)
        expect_untouched(changed, function="layernorm_backward")


@pytest.mark.points(1)
def test_backward_four_axes(student: StudentProxy, reference: Reference, rng: np.random.Generator) -> None:
    """The backward pass on a 4-D batch: dgamma and dbeta sum over every leading axis, however many there are."""
    _check_backward(student, reference, rng, *_case(rng, (2, 3, 2, 9)))


@pytest.mark.points(1)
def test_default_eps(student: StudentProxy, reference: Reference, rng: np.random.Generator) -> None:
    """layernorm and layernorm_backward called without eps use the documented default, 1e-5 (not RMSNorm's
    1e-6), on rows whose spread is small enough for it to matter."""
    x, gamma, beta = _case(rng, (3, 8), scale=0.003)
    expect_array(
        student.layernorm(x, gamma, beta),
        reference.layernorm(x, gamma, beta),
        what="layernorm(x, gamma, beta)",
        hints=m.layernorm_hints(x, gamma, beta, EPS),
    )
    _check_backward(student, reference, rng, x, gamma, beta, eps=None)
