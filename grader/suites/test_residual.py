"""Hidden tests for residual.py. Docstrings are what the student sees; inputs stay here."""

from typing import Any

import numpy as np
import pytest
from numpy.typing import DTypeLike

from grader.checks import Sublayer, expect_array, expect_attempt, expect_called_once, expect_untouched
from grader.proxy import StudentProxy
from grader.reference import Reference
from grader.suites import _mistakes as m

EPS = 1e-6


def _weights(rng: np.random.Generator, C: int, scale: float = 0.5) -> np.ndarray:
    return np.asarray(rng.standard_normal((C, C)) * (scale / np.sqrt(C)))


def _stream(
    rng: np.random.Generator, shape: tuple[int, ...], scale: float = 3.0, dtype: DTypeLike = np.float64
) -> tuple[np.ndarray, np.ndarray]:
    x = (rng.standard_normal(shape) * scale).astype(dtype)
    gamma = (1.0 + 0.3 * rng.standard_normal(shape[-1])).astype(dtype)
    return x, gamma


def _check_block(
    student: StudentProxy, reference: Reference, x: np.ndarray, sub: Sublayer, gamma: Any, eps: float = EPS
) -> None:
    got = student.block(x, sub, gamma, eps=eps)
    want = reference.block(x, sub, gamma, eps=eps)
    expect_array(got, want, what="block(x, sublayer, gamma, eps)", hints=m.block_hints(x, sub.build(), gamma, eps))


def _check_postnorm(
    student: StudentProxy, reference: Reference, x: np.ndarray, sub: Sublayer, gamma: Any, eps: float = EPS
) -> None:
    got = student.postnorm_block(x, sub, gamma, eps=eps)
    want = reference.postnorm_block(x, sub, gamma, eps=eps)
    expect_array(
        got, want, what="postnorm_block(x, sublayer, gamma, eps)", hints=m.postnorm_hints(x, sub.build(), gamma, eps)
    )


@pytest.mark.points(3)
def test_block_is_prenorm_residual(student: StudentProxy, reference: Reference, rng: np.random.Generator) -> None:
    """block computes x + sublayer(rmsnorm(x, gamma, eps)) for a linear sublayer on (T, C)."""
    x, gamma = _stream(rng, (6, 12))
    _check_block(student, reference, x, Sublayer("linear", w=_weights(rng, 12)), gamma)


@pytest.mark.points(2)
def test_block_batch_and_nonlinear_sublayer(
    student: StudentProxy, reference: Reference, rng: np.random.Generator
) -> None:
    """block works on (B, T, C) with a nonlinear sublayer."""
    x, gamma = _stream(rng, (2, 5, 10))
    _check_block(student, reference, x, Sublayer("tanh_linear", w=_weights(rng, 10, 2.0)), gamma)


@pytest.mark.points(1)
def test_block_single_vector(student: StudentProxy, reference: Reference, rng: np.random.Generator) -> None:
    """block works on a single (C,) vector."""
    x, gamma = _stream(rng, (9,))
    _check_block(student, reference, x, Sublayer("linear", w=_weights(rng, 9)), gamma)


@pytest.mark.points(2)
def test_block_passes_eps_to_the_norm(student: StudentProxy, reference: Reference, rng: np.random.Generator) -> None:
    """block uses its eps argument for the normalization."""
    x, gamma = _stream(rng, (4, 8), scale=0.05)
    _check_block(student, reference, x, Sublayer("linear", w=_weights(rng, 8)), gamma, eps=1e-2)


@pytest.mark.points(2)
def test_block_sublayer_reads_the_normalized_stream(
    student: StudentProxy, reference: Reference, rng: np.random.Generator
) -> None:
    """The sublayer is called once, on rmsnorm(x, gamma, eps), not on x."""
    x, gamma = _stream(rng, (5, 8), scale=10.0)
    sub = Sublayer("linear", w=_weights(rng, 8))
    got = student.block(x, sub, gamma, eps=EPS)
    calls, inputs = student.recorded().sublayer(0)
    # The call record comes from the student's process: it counts only with an honest attempt.
    want = reference.block(x, sub, gamma, eps=EPS)
    expect_attempt(got, want, what="block(x, sublayer, gamma, eps)", hints=m.block_hints(x, sub.build(), gamma, EPS))
    expect_called_once(calls, function="block")
    expect_array(
        inputs[0], m.rms(x, gamma, EPS), what="the sublayer's input", hints=[(x, "hint.unnormalized_sublayer_input")]
    )


@pytest.mark.points(1)
def test_block_with_silent_sublayer_is_identity(
    student: StudentProxy, reference: Reference, rng: np.random.Generator
) -> None:
    """With a sublayer that returns zeros, the block returns x exactly (the identity path)."""
    x, gamma = _stream(rng, (4, 7), scale=50.0)
    _check_block(student, reference, x, Sublayer("zero"), gamma)
    # Returning x is the answer here, and also what a block that ignores its sublayer does: the
    # same block must also add a real sublayer's update.
    _check_block(student, reference, x, Sublayer("linear", w=_weights(rng, 7)), gamma)


@pytest.mark.points(1)
def test_block_float32(student: StudentProxy, reference: Reference, rng: np.random.Generator) -> None:
    """float32 streams stay float32; a float16 stream in the hundreds is normalized as rmsnorm
    normalizes it (its squares overflow float16)."""
    x, gamma = _stream(rng, (3, 4, 16), dtype=np.float32)
    w = _weights(rng, 16).astype(np.float32)
    _check_block(student, reference, x, Sublayer("linear", w=w), gamma)
    # mistake: the norm written out in x's dtype instead of calling rmsnorm: the squares are
    # inf, and the sublayer reads zeros
    x, gamma = _stream(rng, (3, 16), scale=300.0, dtype=np.float16)
    _check_block(student, reference, x, Sublayer("linear", w=_weights(rng, 16, 50.0).astype(np.float32)), gamma)


@pytest.mark.points(1)
def test_block_keeps_the_streams_dtype(student: StudentProxy, reference: Reference, rng: np.random.Generator) -> None:
    """A float32 stream stays float32 even when the sublayer computes in float64."""
    x, gamma = _stream(rng, (3, 4, 16), dtype=np.float32)
    _check_block(student, reference, x, Sublayer("linear", w=_weights(rng, 16)), gamma.astype(np.float64))


@pytest.mark.points(1)
def test_block_does_not_modify_x(student: StudentProxy, reference: Reference, rng: np.random.Generator) -> None:
    """block leaves x and gamma unchanged."""
    x, gamma = _stream(rng, (4, 8))
    sub = Sublayer("scale", factor=0.1)
    got = student.block(x, sub, gamma, eps=EPS)
    changed = student.recorded().mutated
    want = reference.block(x, sub, gamma, eps=EPS)
    expect_attempt(got, want, what="block(x, sublayer, gamma, eps)", hints=m.block_hints(x, sub.build(), gamma, EPS))
    expect_untouched(changed, function="block")


@pytest.mark.points(3)
def test_postnorm_block(student: StudentProxy, reference: Reference, rng: np.random.Generator) -> None:
    """postnorm_block computes rmsnorm(x + sublayer(x), gamma, eps) on (T, C)."""
    x, gamma = _stream(rng, (6, 12))
    _check_postnorm(student, reference, x, Sublayer("linear", w=_weights(rng, 12)), gamma)


@pytest.mark.points(1)
def test_postnorm_block_batch(student: StudentProxy, reference: Reference, rng: np.random.Generator) -> None:
    """postnorm_block works on (B, T, C) with a nonlinear sublayer."""
    x, gamma = _stream(rng, (2, 3, 10))
    _check_postnorm(student, reference, x, Sublayer("tanh_linear", w=_weights(rng, 10, 2.0)), gamma)


@pytest.mark.points(1)
def test_postnorm_block_keeps_the_streams_dtype(
    student: StudentProxy, reference: Reference, rng: np.random.Generator
) -> None:
    """postnorm_block keeps a float32 stream float32 even when the sublayer computes in float64, and
    normalizes a float16 sum in the hundreds as rmsnorm normalizes it (its squares overflow float16)."""
    x, gamma = _stream(rng, (3, 4, 16), dtype=np.float32)
    _check_postnorm(student, reference, x, Sublayer("linear", w=_weights(rng, 16)), gamma.astype(np.float64))
    # mistake: the norm of the sum written out in x's dtype: inf squares, a zero output
    x, gamma = _stream(rng, (3, 16), scale=300.0, dtype=np.float16)
    _check_postnorm(student, reference, x, Sublayer("linear", w=_weights(rng, 16).astype(np.float32)), gamma)


@pytest.mark.points(1)
def test_postnorm_sublayer_reads_the_raw_stream(
    student: StudentProxy, reference: Reference, rng: np.random.Generator
) -> None:
    """In post-norm the sublayer is called once, on the raw x."""
    x, gamma = _stream(rng, (5, 8), scale=10.0)
    sub = Sublayer("linear", w=_weights(rng, 8))
    got = student.postnorm_block(x, sub, gamma, eps=EPS)
    calls, inputs = student.recorded().sublayer(0)
    want = reference.postnorm_block(x, sub, gamma, eps=EPS)
    hints = m.postnorm_hints(x, sub.build(), gamma, EPS)
    expect_attempt(got, want, what="postnorm_block(x, sublayer, gamma, eps)", hints=hints)
    expect_called_once(calls, function="postnorm_block")
    expect_array(
        inputs[0],
        x,
        what="the sublayer's input",
        hints=[(m.rms(x, gamma, EPS), "hint.postnorm_sublayer_reads_normalized")],
    )


@pytest.mark.points(1)
def test_postnorm_block_does_not_modify_x(
    student: StudentProxy, reference: Reference, rng: np.random.Generator
) -> None:
    """postnorm_block leaves x and gamma unchanged (no x += ...)."""
    x, gamma = _stream(rng, (4, 8))
    sub = Sublayer("scale", factor=0.1)
    got = student.postnorm_block(x, sub, gamma, eps=EPS)
    changed = student.recorded().mutated
    want = reference.postnorm_block(x, sub, gamma, eps=EPS)
    hints = m.postnorm_hints(x, sub.build(), gamma, EPS)
    expect_attempt(got, want, what="postnorm_block(x, sublayer, gamma, eps)", hints=hints)
    expect_untouched(changed, function="postnorm_block")


@pytest.mark.points(1)
def test_postnorm_block_passes_eps_to_the_norm(
    student: StudentProxy, reference: Reference, rng: np.random.Generator
) -> None:
    """postnorm_block uses its eps argument for the normalization."""
    x, gamma = _stream(rng, (4, 8), scale=0.05)
    _check_postnorm(student, reference, x, Sublayer("linear", w=_weights(rng, 8, 0.1)), gamma, eps=1e-2)


@pytest.mark.points(1)
def test_block_default_eps(student: StudentProxy, reference: Reference, rng: np.random.Generator) -> None:
    """block called without eps uses the documented default, 1e-6."""
    _check_default_eps(student, reference, rng, "block", m.block_hints)


@pytest.mark.points(1)
def test_postnorm_block_default_eps(student: StudentProxy, reference: Reference, rng: np.random.Generator) -> None:
    """postnorm_block called without eps uses the documented default, 1e-6."""
    _check_default_eps(student, reference, rng, "postnorm_block", m.postnorm_hints)


def _check_default_eps(
    student: StudentProxy, reference: Reference, rng: np.random.Generator, name: str, hints: Any
) -> None:
    """``name(x, sublayer, gamma)`` without eps, on a stream small enough for eps to matter."""
    x, gamma = _stream(rng, (4, 8), scale=0.002)
    sub = Sublayer("linear", w=_weights(rng, 8))
    expect_array(
        getattr(student, name)(x, sub, gamma),
        getattr(reference, name)(x, sub, gamma),
        what=f"{name}(x, sublayer, gamma)",
        hints=hints(x, sub.build(), gamma, EPS),
    )
