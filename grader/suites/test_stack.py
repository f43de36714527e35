"""Hidden tests for stack.py. Docstrings are what the student sees; inputs stay here."""

from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

from grader.checks import (
    TOLERANCES,
    deferred,
    expect_array,
    expect_attempt,
    expect_raises,
    expect_untouched,
    expect_value,
)
from grader.proxy import StudentProxy
from grader.reference import Reference
from grader.suites import _mistakes as m

EPS = 1e-6
TOL = TOLERANCES["algorithm"]  # a 12-sublayer stack accumulates rounding differently per order


def _params(
    reference: Reference,
    rng: np.random.Generator,
    n_layers: int = 6,
    C: int = 12,
    H: int | None = None,
    scale: float = 1.0,
) -> Any:
    """Random weights *and* non-unit gains, so every gain (the final one too) matters."""
    params = reference.init_params(n_layers=n_layers, C=C, H=H, seed=int(rng.integers(1 << 30)), scale=scale)
    for key in ("attn_gamma", "ffn_gamma", "final_gamma"):
        params[key] = params[key] * (1.0 + 0.3 * rng.standard_normal(params[key].shape))
    return params


# --- the two stubs ---------------------------------------------------------------------------


@pytest.mark.points(2)
def test_attention_stub_causal_mean(student: StudentProxy, reference: Reference, rng: np.random.Generator) -> None:
    """attention_stub: causal running mean over the token axis, then the projection, on (T, C)."""
    h, w_o = rng.standard_normal((7, 6)), rng.standard_normal((6, 6))
    expect_array(
        student.attention_stub(h, w_o),
        reference.attention_stub(h, w_o),
        what="attention_stub(h, w_o)",
        hints=[
            (m.attention_full_mean(h, w_o), "hint.attention_not_causal"),
            (m.attention_cumsum(h, w_o), "hint.attention_cumsum_not_mean"),
        ],
    )


@pytest.mark.points(1)
def test_attention_stub_batch(student: StudentProxy, reference: Reference, rng: np.random.Generator) -> None:
    """attention_stub mixes tokens within each sequence of a (B, T, C) batch, never across."""
    h, w_o = rng.standard_normal((3, 5, 4)), rng.standard_normal((4, 4))
    expect_array(
        student.attention_stub(h, w_o),
        reference.attention_stub(h, w_o),
        what="attention_stub(h, w_o)",
        hints=[(m.attention_full_mean(h, w_o), "hint.attention_not_causal")],
    )


@pytest.mark.points(1)
def test_attention_stub_keeps_float32(student: StudentProxy, reference: Reference, rng: np.random.Generator) -> None:
    """attention_stub returns the dtype of h: a float32 h with float32 weights gives float32."""
    h = rng.standard_normal((2, 6, 5)).astype(np.float32)
    w_o = rng.standard_normal((5, 5)).astype(np.float32)
    expect_array(
        student.attention_stub(h, w_o),
        reference.attention_stub(h, w_o),
        what="attention_stub(h, w_o)",
        hints=[(m.attention_full_mean(h, w_o), "hint.attention_not_causal")],
    )


@pytest.mark.points(2)
def test_ffn_stub_swiglu(student: StudentProxy, reference: Reference, rng: np.random.Generator) -> None:
    """ffn_stub computes (silu(h @ w_gate) * (h @ w_up)) @ w_down, position by position."""
    h = rng.standard_normal((2, 5, 6))
    w_gate, w_up, w_down = rng.standard_normal((6, 10)), rng.standard_normal((6, 10)), rng.standard_normal((10, 6))
    _check_ffn(student, reference, h, w_gate, w_up, w_down)


@pytest.mark.points(1)
def test_ffn_stub_keeps_float32(student: StudentProxy, reference: Reference, rng: np.random.Generator) -> None:
    """ffn_stub returns the dtype of h: a float32 h with float32 weights gives float32, finite
    where a gate is large (silu of a gate of 100 is about 100, though exp(100) overflows float32)."""
    h = rng.standard_normal((2, 4, 6)).astype(np.float32)
    w_gate, w_up = rng.standard_normal((6, 8)).astype(np.float32), rng.standard_normal((6, 8)).astype(np.float32)
    _check_ffn(student, reference, h, w_gate, w_up, rng.standard_normal((8, 6)).astype(np.float32))
    # mistake: silu as exp(a) / (1 + exp(a)) * a, the same function on paper: inf / inf for a
    # gate above 88 in float32
    _check_ffn(student, reference, h * np.float32(60.0), w_gate, w_up, rng.standard_normal((8, 6)).astype(np.float32))


def _check_ffn(student: StudentProxy, reference: Reference, h: Any, *weights: Any) -> None:
    expect_array(
        student.ffn_stub(h, *weights),
        reference.ffn_stub(h, *weights),
        what="ffn_stub(h, w_gate, w_up, w_down)",
        hints=[(m.ffn_no_silu(h, *weights), "hint.ffn_no_silu"), (m.ffn_sigmoid(h, *weights), "hint.ffn_sigmoid")],
    )


@pytest.mark.points(2)
def test_token_norm(student: StudentProxy, reference: Reference, rng: np.random.Generator) -> None:
    """token_norm is the per-token Euclidean norm, averaged over every token of a (B, T, C) array."""
    v = rng.standard_normal((3, 4, 8)) * np.array([1.0, 5.0, 0.2])[:, None, None]
    expect_value(
        student.token_norm(v), reference.token_norm(v), what="token_norm(v)", rel=1e-9, hints=m.token_norm_variants(v)
    )


# --- the stacks --------------------------------------------------------------------------------


def _check_forward(
    student: StudentProxy,
    reference: Reference,
    x: np.ndarray,
    params: dict[str, np.ndarray],
    eps: float,
    hints: Sequence[tuple[Any, str]] = (),
) -> None:
    expect_array(
        student.stack_forward(x, params, eps=eps),
        reference.stack_forward(x, params, eps=eps),
        what="stack_forward(x, params, eps)",
        tol=TOL,
        hints=hints,
    )


@pytest.mark.points(3)
def test_stack_forward_prenorm_with_final_norm(
    student: StudentProxy, reference: Reference, rng: np.random.Generator
) -> None:
    """The pre-norm stack, at the lab's default depth, on a sequence, ending with the final RMSNorm."""
    params, x = _params(reference, rng), rng.standard_normal((5, 12)) * 2.0
    _check_forward(student, reference, x, params, EPS, m.stack_forward_hints(reference, x, params, EPS))


@pytest.mark.points(2)
def test_stack_forward_batch_and_depth(student: StudentProxy, reference: Reference, rng: np.random.Generator) -> None:
    """The pre-norm stack on a batch of sequences, at another depth (the depth comes from params),
    and on a second batch of the same shape."""
    # mistake: an answer kept in a global, keyed by the shapes, returned for the next input (trial 63)
    params = _params(reference, rng, n_layers=3, C=8)
    for x in (rng.standard_normal((2, 4, 8)), rng.standard_normal((2, 4, 8))):
        _check_forward(student, reference, x, params, EPS, m.stack_forward_hints(reference, x, params, EPS))


@pytest.mark.points(1)
def test_stack_forward_uses_eps(student: StudentProxy, reference: Reference, rng: np.random.Generator) -> None:
    """stack_forward passes its eps to every norm."""
    params, x = _params(reference, rng, n_layers=2, C=6), rng.standard_normal((4, 6)) * 0.05
    _check_forward(student, reference, x, params, 1e-2)


@pytest.mark.points(2)
def test_stack_forward_postnorm(student: StudentProxy, reference: Reference, rng: np.random.Generator) -> None:
    """The post-norm stack: each sublayer's sum is normalized, with no extra final norm."""
    params, x = _params(reference, rng), rng.standard_normal((2, 5, 12))
    want = reference.stack_forward_postnorm(x, params, eps=EPS)
    expect_array(
        student.stack_forward_postnorm(x, params, eps=EPS),
        want,
        what="stack_forward_postnorm(x, params, eps)",
        tol=TOL,
        hints=[
            (m.postnorm_with_final(reference, x, params, EPS), "hint.extra_final_norm"),
            (reference.stack_forward(x, params, eps=EPS), "hint.prenorm_instead_of_postnorm"),
        ],
    )


@pytest.mark.points(1)
def test_stack_forward_postnorm_uses_eps(student: StudentProxy, reference: Reference, rng: np.random.Generator) -> None:
    """stack_forward_postnorm passes its eps to every norm."""
    params, x = _params(reference, rng, n_layers=2, C=6), rng.standard_normal((4, 6)) * 0.05
    expect_array(
        student.stack_forward_postnorm(x, params, eps=1e-2),
        reference.stack_forward_postnorm(x, params, eps=1e-2),
        what="stack_forward_postnorm(x, params, eps)",
        tol=TOL,
    )


@pytest.mark.points(1)
def test_stack_postnorm_keeps_the_streams_dtype(
    student: StudentProxy, reference: Reference, rng: np.random.Generator
) -> None:
    """The post-norm stack keeps a float32 stream float32 too, with float64 params."""
    params = _params(reference, rng, n_layers=2, C=8)
    x = rng.standard_normal((3, 8)).astype(np.float32)
    expect_array(
        student.stack_forward_postnorm(x, params, eps=EPS),
        reference.stack_forward_postnorm(x, params, eps=EPS),
        what="stack_forward_postnorm(x, params, eps)",
        tol=TOLERANCES["float32"],
    )


@pytest.mark.points(1)
def test_stack_float32(student: StudentProxy, reference: Reference, rng: np.random.Generator) -> None:
    """A float32 stream stays float32 through the stack."""
    params = {k: v.astype(np.float32) for k, v in _params(reference, rng, n_layers=2, C=8).items()}
    x = rng.standard_normal((4, 8)).astype(np.float32)
    expect_array(
        student.stack_forward(x, params, eps=EPS),
        reference.stack_forward(x, params, eps=EPS),
        what="stack_forward(x, params, eps)",
    )


@pytest.mark.points(1)
def test_stack_keeps_the_streams_dtype(student: StudentProxy, reference: Reference, rng: np.random.Generator) -> None:
    """A float32 stream stays float32 with the float64 params init_params returns."""
    params = _params(reference, rng, n_layers=2, C=8)
    x = rng.standard_normal((4, 8)).astype(np.float32)
    expect_array(
        student.stack_forward(x, params, eps=EPS),
        reference.stack_forward(x, params, eps=EPS),
        what="stack_forward(x, params, eps)",
        tol=TOLERANCES["float32"],
    )


# --- the three-norms trace and the depth experiment ---------------------------------------------


@deferred
def _trace_hints(
    reference: Reference, x: np.ndarray, params: dict[str, np.ndarray], eps: float, placement: str
) -> list[tuple[Any, str]]:
    """The trace a student would get with each wrong way of reducing the norms."""
    steps = m.sublayer_steps(reference, x, params, eps, placement)
    variants = [[m.token_norm_variants(a) for a in step] for step in steps]  # per step, per array
    wrong_norms = [
        (np.array([[norms[index][0] for norms in row] for row in variants]), m.token_norm_variants(x)[index][1])
        for index in range(len(m.token_norm_variants(x)))
    ]
    return wrong_norms + (m.post_trace_variants(reference, x, params, eps) if placement == "post" else [])


def _check_trace(
    student: StudentProxy,
    reference: Reference,
    x: np.ndarray,
    params: dict[str, np.ndarray],
    placement: str,
    eps: float = EPS,
) -> None:
    expect_array(
        student.stack_trace(x, params, eps=eps, placement=placement),
        reference.stack_trace(x, params, eps=eps, placement=placement),
        what=f'stack_trace(x, params, eps, placement="{placement}")',
        tol=TOL,
        hints=_trace_hints(reference, x, params, eps, placement),
    )


@pytest.mark.points(3)
def test_trace_prenorm(student: StudentProxy, reference: Reference, rng: np.random.Generator) -> None:
    """The pre-norm trace: for each sublayer, token norms of the stream, the update and the sum
    (two inputs of the same shape)."""
    # mistake: a trace kept in a global, keyed by the shapes, returned for the next input (trial 63)
    params = _params(reference, rng, n_layers=4, C=10)
    for x in (rng.standard_normal((2, 6, 10)), rng.standard_normal((2, 6, 10))):
        _check_trace(student, reference, x, params, "pre")


@pytest.mark.points(2)
def test_trace_postnorm(student: StudentProxy, reference: Reference, rng: np.random.Generator) -> None:
    """The post-norm trace: the sublayer reads the raw stream; the sum is recorded before its norm."""
    params, x = _params(reference, rng, n_layers=3, C=10), rng.standard_normal((6, 10)) * 4.0
    _check_trace(student, reference, x, params, "post")


@pytest.mark.points(1)
def test_trace_uses_eps(student: StudentProxy, reference: Reference, rng: np.random.Generator) -> None:
    """stack_trace passes its eps to every norm, pre-norm and post-norm."""
    params, x = _params(reference, rng, n_layers=2, C=6), rng.standard_normal((5, 6)) * 0.05
    for placement in ("pre", "post"):
        _check_trace(student, reference, x, params, placement, eps=1e-2)


@pytest.mark.points(1)
def test_trace_leaves_its_inputs_unchanged(
    student: StudentProxy, reference: Reference, rng: np.random.Generator
) -> None:
    """stack_trace leaves x and every array of params exactly as they were, pre-norm and post-norm."""
    params, x = _params(reference, rng, n_layers=2, C=8), rng.standard_normal((2, 3, 8)) * 2.0
    for placement in ("pre", "post"):
        got = student.stack_trace(x, params, eps=EPS, placement=placement)
        changed = student.recorded().mutated
        expect_attempt(
            got,
            reference.stack_trace(x, params, eps=EPS, placement=placement),
            what=f'stack_trace(x, params, eps, placement="{placement}")',
            tol=TOL,
            hints=_trace_hints(reference, x, params, EPS, placement),
        )
        expect_untouched(changed, function="stack_trace")


@pytest.mark.points(1)
def test_trace_rejects_unknown_placement(student: StudentProxy, reference: Reference, rng: np.random.Generator) -> None:
    """stack_trace raises ValueError for a placement other than "pre" or "post", however close
    (and traces "pre" right)."""
    params, x = _params(reference, rng, n_layers=1, C=4), rng.standard_normal((3, 4))
    # Refusing earns the point only from a stack_trace that also traces a known placement.
    _check_trace(student, reference, x, params, "pre")
    # mistake: a near-miss spelling taken for one of the two (trial 63: "Pre" ran the post-norm branch)
    for placement in ("sandwich", "Pre", "POST", None):
        shown = "None" if placement is None else f'"{placement}"'
        with expect_raises(ValueError, what=f"stack_trace(x, params, eps, placement={shown})"):
            student.stack_trace(x, params, eps=EPS, placement=placement)


@pytest.mark.points(2)
def test_depth_rms(student: StudentProxy, reference: Reference, rng: np.random.Generator) -> None:
    """depth_rms: the RMS of the stream after each layer, pre-norm in row 0, post-norm in row 1
    (two inputs of the same shape)."""
    # mistake: an answer kept in a global, keyed by the shapes, returned for the next input (trial 63)
    params = _params(reference, rng, n_layers=6, C=16)
    for x in (rng.standard_normal((2, 5, 16)) * 3.0, rng.standard_normal((2, 5, 16))):
        expect_array(
            student.depth_rms(x, params, eps=EPS),
            reference.depth_rms(x, params, eps=EPS),
            what="depth_rms(x, params, eps)",
            tol=TOL,
        )


@pytest.mark.points(1)
def test_depth_rms_uses_eps(student: StudentProxy, reference: Reference, rng: np.random.Generator) -> None:
    """depth_rms passes its eps to every norm of both stacks."""
    params, x = _params(reference, rng, n_layers=3, C=8), rng.standard_normal((2, 3, 8)) * 0.05
    expect_array(
        student.depth_rms(x, params, eps=1e-2),
        reference.depth_rms(x, params, eps=1e-2),
        what="depth_rms(x, params, eps)",
        tol=TOL,
    )


@pytest.mark.points(1)
def test_depth_rms_shows_prenorm_growth(student: StudentProxy, reference: Reference, rng: np.random.Generator) -> None:
    """With unit gains, post-norm holds the RMS at about 1 while pre-norm lets the stream grow."""
    params = reference.init_params(n_layers=6, C=16, seed=int(rng.integers(1 << 30)))
    x = rng.standard_normal((4, 16))
    expect_array(
        student.depth_rms(x, params, eps=EPS),
        reference.depth_rms(x, params, eps=EPS),
        what="depth_rms(x, params, eps)",
        tol=TOL,
    )


@pytest.mark.points(1)
def test_stack_forward_leaves_its_inputs_unchanged(
    student: StudentProxy, reference: Reference, rng: np.random.Generator
) -> None:
    """stack_forward leaves x and every array of params exactly as they were (no in-place operations)."""
    params, x = _params(reference, rng, n_layers=2, C=8), rng.standard_normal((3, 8)) * 2.0
    got = student.stack_forward(x, params, eps=EPS)
    changed = student.recorded().mutated
    want = reference.stack_forward(x, params, eps=EPS)
    hints = m.stack_forward_hints(reference, x, params, EPS)
    expect_attempt(got, want, what="stack_forward(x, params, eps)", tol=TOL, hints=hints)
    expect_untouched(changed, function="stack_forward")


@pytest.mark.points(1)
def test_stack_functions_default_eps(student: StudentProxy, reference: Reference, rng: np.random.Generator) -> None:
    """stack_forward, stack_forward_postnorm, stack_trace and depth_rms called without eps use the
    documented default, 1e-6 (and stack_trace without placement traces the pre-norm stack)."""
    params, x = _params(reference, rng, n_layers=2, C=6), rng.standard_normal((4, 6)) * 0.002
    for name in ("stack_forward", "stack_forward_postnorm", "stack_trace", "depth_rms"):
        expect_array(
            getattr(student, name)(x, params),
            getattr(reference, name)(x, params),
            what=f"{name}(x, params)",
            tol=TOL,
        )
