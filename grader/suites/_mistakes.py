"""The mistakes students really make, as functions: hidden suites use them to name a mistake.

When an answer is wrong, a test computes what each likely mistake would have returned on the
same input; if the student's answer matches one, the failure message carries that mistake's
hint. These run only in the trusted process and never reach a student.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from grader.checks import deferred, tolerance_for, within_tolerance

# --- RMSNorm ---------------------------------------------------------------------------------


def rms_eps_outside(x: np.ndarray, gamma: Any, eps: float) -> np.ndarray:
    return np.asarray(x / (np.sqrt(np.mean(x**2, axis=-1, keepdims=True)) + eps) * gamma)


def rms_axis0(x: np.ndarray, gamma: Any, eps: float) -> np.ndarray:
    return np.asarray(x / np.sqrt(np.mean(x**2, axis=0, keepdims=True) + eps) * gamma)


def rms_global(x: np.ndarray, gamma: Any, eps: float) -> np.ndarray:
    return np.asarray(x / np.sqrt(np.mean(x**2) + eps) * gamma)


def rms_no_gamma(x: np.ndarray, gamma: Any, eps: float) -> np.ndarray:
    return np.asarray(x / np.sqrt(np.mean(x**2, axis=-1, keepdims=True) + eps))


def rms_centered(x: np.ndarray, gamma: Any, eps: float) -> np.ndarray:
    xc = x - x.mean(axis=-1, keepdims=True)
    return np.asarray(xc / np.sqrt(np.mean(xc**2, axis=-1, keepdims=True) + eps) * gamma)


def _tells_apart(mistake: np.ndarray, right: np.ndarray, dtype: Any) -> bool:
    """Whether the check of a result of ``dtype`` (its own comparison) can tell a mistake's
    output from the right one (eps left out of values of scale 100 changes them by 1e-10 of
    themselves: no hint can name it there)."""
    return not bool(np.all(within_tolerance(mistake, right, tolerance_for(dtype))))


def rms_with_eps(eps_used: float) -> Callable[[np.ndarray, Any, float], np.ndarray]:
    def fn(x: np.ndarray, gamma: Any, eps: float) -> np.ndarray:
        return np.asarray(x / np.sqrt(np.mean(x**2, axis=-1, keepdims=True) + eps_used) * gamma)

    return fn


@deferred
def rmsnorm_hints(x: np.ndarray, gamma: Any, eps: float, default_eps: float = 1e-6) -> list[tuple[np.ndarray, str]]:
    """Candidate outputs of common RMSNorm mistakes, for :func:`grader.checks.expect_array`."""
    x64, g64 = np.asarray(x, np.float64), np.asarray(gamma, np.float64)
    with np.errstate(all="ignore"):
        candidates = [
            (rms_eps_outside(x64, g64, eps), "hint.eps_outside_sqrt"),
            (rms_centered(x64, g64, eps), "hint.rms_subtracts_mean"),
            (rms_no_gamma(x64, g64, eps), "hint.missing_gamma"),
            (rms_global(x64, g64, eps), "hint.global_statistic"),
        ]
        if x64.ndim >= 2 and x64.shape[0] > 1:
            candidates.append((rms_axis0(x64, g64, eps), "hint.wrong_axis"))
        if eps != default_eps:
            candidates.append((rms_with_eps(default_eps)(x64, g64, eps), "hint.hardcoded_eps"))
        without_eps = rms_with_eps(0.0)(x64, g64, eps)
        if _tells_apart(without_eps, rms_with_eps(eps)(x64, g64, eps), np.asarray(x).dtype):
            candidates.append((without_eps, "hint.eps_missing"))
        if np.asarray(x).dtype == np.float16:
            # Squaring in float16 itself: anything above ~256 overflows to inf.
            x16 = np.asarray(x)
            naive = x16 / np.sqrt(np.mean(x16 * x16, axis=-1, keepdims=True) + np.float16(eps)) * np.asarray(gamma)
            candidates.insert(0, (naive.astype(np.float64), "hint.float16_overflow"))
    return candidates


def rms_backward_no_correction(dout: np.ndarray, x: np.ndarray, gamma: Any, eps: float) -> np.ndarray:
    rstd = 1.0 / np.sqrt(np.mean(x**2, axis=-1, keepdims=True) + eps)
    return np.asarray(dout * gamma * rstd)


# --- LayerNorm -------------------------------------------------------------------------------


def ln(
    x: np.ndarray, gamma: Any, beta: Any, eps: float, *, ddof: int = 0, axis: int | None = -1, center: bool = True
) -> np.ndarray:
    mean = x.mean(axis=axis, keepdims=True) if center else 0.0
    var = x.var(axis=axis, keepdims=True, ddof=ddof) if axis is not None else x.var(ddof=ddof)
    return np.asarray((x - mean) / np.sqrt(var + eps) * gamma + beta)


RMS_DEFAULT_EPS = 1e-6
"""RMSNorm's default eps in the lab, which a LayerNorm copied from it keeps (trial 60)."""


def _small_eps_hints(
    rms_eps: np.ndarray, without_eps: np.ndarray, default_call: bool, x: np.ndarray
) -> list[tuple[np.ndarray, str]]:
    """A LayerNorm without eps, or (called with its default) with RMSNorm's default 1e-6: told
    apart where the check can, one hint for both where it cannot (trial 60: a default of 1e-6
    was told its eps was missing)."""
    if not default_call:
        return [(without_eps, "hint.eps_missing")]
    if _tells_apart(rms_eps, without_eps, np.asarray(x).dtype):
        return [(rms_eps, "hint.layernorm_rms_default_eps"), (without_eps, "hint.eps_missing")]
    return [(without_eps, "hint.eps_missing_or_small_default")]


@deferred
def layernorm_hints(
    x: np.ndarray, gamma: Any, beta: Any, eps: float, default_eps: float = 1e-5
) -> list[tuple[np.ndarray, str]]:
    x64 = np.asarray(x, np.float64)
    g64, b64 = np.asarray(gamma, np.float64), np.asarray(beta, np.float64)
    with np.errstate(all="ignore"):
        xc = x64 - x64.mean(axis=-1, keepdims=True)
        candidates = [
            (xc / (np.sqrt(np.mean(xc**2, axis=-1, keepdims=True)) + eps) * g64 + b64, "hint.eps_outside_sqrt"),
            (ln(x64, g64, b64, eps, ddof=1) if x64.shape[-1] > 1 else x64 * np.nan, "hint.unbiased_variance"),
            (ln(x64, b64, g64, eps), "hint.gamma_beta_swapped"),
            (ln(x64, g64, 0.0, eps), "hint.missing_beta"),
            (ln(x64, 1.0, b64, eps), "hint.missing_gamma"),
            ((x64 - x64.mean()) / np.sqrt(x64.var() + eps) * g64 + b64, "hint.global_statistic"),
        ]
        if x64.ndim >= 2 and x64.shape[0] > 1:
            candidates.append((ln(x64, g64, b64, eps, axis=0), "hint.wrong_axis"))
        if eps != default_eps:
            candidates.append((ln(x64, g64, b64, default_eps), "hint.hardcoded_eps"))
        right, without_eps = ln(x64, g64, b64, eps), ln(x64, g64, b64, 0.0)
        if _tells_apart(without_eps, right, np.asarray(x).dtype):
            candidates += _small_eps_hints(ln(x64, g64, b64, RMS_DEFAULT_EPS), without_eps, eps == default_eps, x)
        one_pass = ln_one_pass(np.asarray(x), gamma, beta, eps)
        if _tells_apart(one_pass, right, np.asarray(x).dtype):
            candidates.append((one_pass, "hint.one_pass_variance"))
        if np.asarray(x).dtype == np.float16:
            x16 = np.asarray(x)
            xc16 = x16 - np.mean(x16, axis=-1, keepdims=True)  # float16 result, as a student computes it
            naive = xc16 / np.sqrt(np.mean(xc16 * xc16, axis=-1, keepdims=True) + np.float16(eps)) * gamma + beta
            candidates.insert(0, (naive.astype(np.float64), "hint.float16_overflow"))
    return candidates


def _one_pass_rstd(x: np.ndarray, eps: float) -> tuple[np.ndarray, np.ndarray]:
    """The mean and ``1 / std`` of the last axis with the variance as ``mean(x**2) - mean**2``,
    in x's own precision (float16 in float32), as a student computes it in one pass."""
    xf = x.astype(np.float32) if x.dtype == np.float16 else x
    mean = np.mean(xf, axis=-1, keepdims=True)
    var = np.maximum(np.mean(xf * xf, axis=-1, keepdims=True) - mean * mean, 0)
    return mean, 1 / np.sqrt(var + np.asarray(eps, xf.dtype))


def ln_one_pass(x: np.ndarray, gamma: Any, beta: Any, eps: float) -> np.ndarray:
    with np.errstate(all="ignore"):
        mean, rstd = _one_pass_rstd(x, eps)
        return np.asarray((x - mean) * rstd * gamma + beta, np.float64)


def ln_backward_one_pass(dout: np.ndarray, x: np.ndarray, gamma: Any, eps: float) -> np.ndarray:
    with np.errstate(all="ignore"):
        mean, rstd = _one_pass_rstd(x, eps)
        xhat = (x - mean) * rstd
        g = dout * gamma
        dx = rstd * (g - g.mean(axis=-1, keepdims=True) - xhat * np.mean(g * xhat, axis=-1, keepdims=True))
        return np.asarray(dx, np.float64)


def ln_backward_no_correction(dout: np.ndarray, x: np.ndarray, gamma: Any, eps: float) -> np.ndarray:
    xc = x - x.mean(axis=-1, keepdims=True)
    rstd = 1.0 / np.sqrt(np.mean(xc**2, axis=-1, keepdims=True) + eps)
    return np.asarray(dout * gamma * rstd)


def ln_backward_in_float16(dout: np.ndarray, x: np.ndarray, gamma: Any, eps: float) -> np.ndarray:
    """dx computed in float16 itself: centered squares above ~256 overflow to inf."""
    with np.errstate(all="ignore"):
        xc = x - np.mean(x, axis=-1, keepdims=True)
        rstd = 1.0 / np.sqrt(np.mean(xc * xc, axis=-1, keepdims=True) + eps)
        xhat = xc * rstd
        g = dout * gamma
        dx = rstd * (g - np.mean(g, axis=-1, keepdims=True) - xhat * np.mean(g * xhat, axis=-1, keepdims=True))
    return np.asarray(dx).astype(np.float64)


def ln_backward_no_mean_term(dout: np.ndarray, x: np.ndarray, gamma: Any, eps: float) -> np.ndarray:
    """dx with the variance correction but without the mean term (the - mean(g))."""
    xc = x - x.mean(axis=-1, keepdims=True)
    rstd = 1.0 / np.sqrt(np.mean(xc**2, axis=-1, keepdims=True) + eps)
    xhat = xc * rstd
    g = dout * gamma
    return np.asarray(rstd * (g - xhat * np.mean(g * xhat, axis=-1, keepdims=True)))


def ln_backward_mean_only(dout: np.ndarray, x: np.ndarray, gamma: Any, eps: float) -> np.ndarray:
    """dx with the mean correction but without the variance correction."""
    xc = x - x.mean(axis=-1, keepdims=True)
    rstd = 1.0 / np.sqrt(np.mean(xc**2, axis=-1, keepdims=True) + eps)
    g = dout * gamma
    return np.asarray(rstd * (g - g.mean(axis=-1, keepdims=True)))


# --- residual blocks -------------------------------------------------------------------------


def rms(x: np.ndarray, gamma: Any, eps: float) -> np.ndarray:
    return np.asarray(x / np.sqrt(np.mean(x**2, axis=-1, keepdims=True) + eps) * gamma)


@deferred
def block_hints(
    x: np.ndarray, f: Callable[[np.ndarray], np.ndarray], gamma: Any, eps: float
) -> list[tuple[np.ndarray, str]]:
    """Common pre-norm block mistakes, given the sublayer as a plain function ``f``."""
    x64 = np.asarray(x, np.float64)
    n = rms(x64, gamma, eps)
    return [
        (rms(x64 + f(x64), gamma, eps), "hint.postnorm_instead_of_prenorm"),
        (n + f(n), "hint.normalized_residual"),
        (x64 + f(x64), "hint.unnormalized_sublayer_input"),
        (f(n), "hint.missing_residual"),
    ]


@deferred
def postnorm_hints(
    x: np.ndarray, f: Callable[[np.ndarray], np.ndarray], gamma: Any, eps: float
) -> list[tuple[np.ndarray, str]]:
    x64 = np.asarray(x, np.float64)
    n = rms(x64, gamma, eps)
    return [
        (x64 + f(n), "hint.prenorm_instead_of_postnorm"),
        (rms(x64 + f(n), gamma, eps), "hint.postnorm_sublayer_reads_normalized"),
        (x64 + f(x64), "hint.missing_norm"),
    ]


# --- stack -----------------------------------------------------------------------------------


def attention_full_mean(h: np.ndarray, w_o: np.ndarray) -> np.ndarray:
    return np.asarray(np.broadcast_to(h.mean(axis=-2, keepdims=True), h.shape) @ w_o)


def attention_cumsum(h: np.ndarray, w_o: np.ndarray) -> np.ndarray:
    return np.asarray(np.cumsum(h, axis=-2) @ w_o)


def ffn_no_silu(h: np.ndarray, w_gate: np.ndarray, w_up: np.ndarray, w_down: np.ndarray) -> np.ndarray:
    return np.asarray(((h @ w_gate) * (h @ w_up)) @ w_down)


def ffn_sigmoid(h: np.ndarray, w_gate: np.ndarray, w_up: np.ndarray, w_down: np.ndarray) -> np.ndarray:
    gate = h @ w_gate
    return np.asarray(((1.0 / (1.0 + np.exp(-gate))) * (h @ w_up)) @ w_down)


def token_norm_variants(v: np.ndarray) -> list[tuple[float, str]]:
    v = np.asarray(v, np.float64)
    per_token = np.linalg.norm(v, axis=-1)
    return [
        (float(np.linalg.norm(v)), "hint.trace_whole_array_norm"),
        (float(per_token.sum()), "hint.trace_summed_not_averaged"),
        (float(np.sqrt(np.mean(v**2))), "hint.trace_rms_not_l2"),
        (float(np.mean(np.abs(v))), "hint.trace_mean_abs"),
    ]


# --- the gradient path -----------------------------------------------------------------------


def _tanh_backward(dy: np.ndarray, h: np.ndarray, w: np.ndarray, b: np.ndarray) -> np.ndarray:
    y = np.tanh(h @ w + b)
    return np.asarray((dy * (1.0 - y * y)) @ w.T)


def _rms_backward(dout: np.ndarray, x: np.ndarray, eps: float) -> np.ndarray:
    rstd = 1.0 / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps)
    xhat = x * rstd
    return np.asarray((dout - xhat * np.mean(dout * xhat, axis=-1, keepdims=True)) * rstd)


@deferred
def block_backward_variants(
    dout: np.ndarray, x: np.ndarray, w: np.ndarray, b: np.ndarray, arrangement: str, eps: float
) -> list[tuple[np.ndarray, str]]:
    """What a block's backward pass gives with the common mistakes, in its arrangement."""
    d64, x64, w64, b64 = (np.asarray(a, np.float64) for a in (dout, x, w, b))
    ones = np.ones(x64.shape[-1])
    with np.errstate(all="ignore"):
        if arrangement == "pre":
            n = rms(x64, ones, eps)
            branch = _rms_backward(_tanh_backward(d64, n, w64, b64), x64, eps)
            return [
                (branch, "hint.residual_gradient_dropped"),
                (d64 + _tanh_backward(d64, x64, w64, b64), "hint.norm_backward_skipped"),
            ]
        if arrangement == "post":
            ds = _rms_backward(d64, x64 + np.tanh(x64 @ w64 + b64), eps)
            return [
                (d64 + _tanh_backward(d64, x64, w64, b64), "hint.norm_backward_skipped"),
                (ds + _tanh_backward(d64, x64, w64, b64), "hint.post_sublayer_route_skips_norm"),
                (_tanh_backward(ds, x64, w64, b64), "hint.residual_gradient_dropped"),
            ]
    return []


# --- quantization ----------------------------------------------------------------------------


def _fake_quant(w: np.ndarray, qmax: float, axis: Any, clip: float, rounding: Any, clamp: bool) -> np.ndarray:
    scale = clip * np.max(np.abs(w), axis=axis, keepdims=True) / qmax
    q = rounding(w / np.where(scale > 0, scale, 1.0))
    return np.asarray((np.clip(q, -qmax, qmax) if clamp else q) * scale)


def _asymmetric(w: np.ndarray, bits: int, axis: Any) -> np.ndarray:
    """Min-max quantization with a zero point: 2**bits levels from min(w) to max(w)."""
    low, high = np.min(w, axis=axis, keepdims=True), np.max(w, axis=axis, keepdims=True)
    scale = (high - low) / (2**bits - 1)
    safe = np.where(scale > 0, scale, 1.0)
    zero = np.round(-low / safe)
    return np.asarray((np.clip(np.round(w / safe) + zero, 0, 2**bits - 1) - zero) * scale)


@deferred
def quantize_variants(w: Any, bits: int, axis: Any = None, clip: float = 1.0) -> list[tuple[np.ndarray, str]]:
    """What :func:`quantize` gives with the common mistakes, on the same call."""
    w64, qmax = np.asarray(w, np.float64), 2 ** (bits - 1) - 1
    with np.errstate(all="ignore"):
        candidates = [
            (_fake_quant(w64, qmax, axis, clip, np.floor, True), "hint.quant_floor"),
            (_fake_quant(w64, 2**bits, axis, clip, np.round, True), "hint.quant_levels_2k"),
            (_fake_quant(w64, 2 ** (bits - 1), axis, clip, np.round, True), "hint.quant_levels_off_by_one"),
            (_asymmetric(w64, bits, axis), "hint.quant_asymmetric"),
            (_fake_quant(w64, qmax, None, clip, np.round, True), "hint.quant_per_tensor"),
        ]
        if clip < 1.0:
            candidates.append((_fake_quant(w64, qmax, axis, clip, np.round, False), "hint.quant_no_clamp"))
    return [(c, hint) for c, hint in candidates if axis is not None or hint != "hint.quant_per_tensor"]


# --- by function: what the public tests' recorded answers carry as hints -----------------------


def _sublayer_function(sublayer: Any) -> Callable[[np.ndarray], np.ndarray]:
    """A sublayer as a plain function, from its description (``kind``, ``params``)."""
    from grader.sandbox.inside.callables import KINDS

    return lambda h: KINDS[sublayer.kind](h, dict(sublayer.params))


def _backward_hints(no_correction: Callable[..., np.ndarray]) -> Callable[..., Sequence[tuple[Any, str]]]:
    @deferred
    def candidates(dout: np.ndarray, x: np.ndarray, gamma: Any, *rest: Any, eps: float) -> list[tuple[Any, str]]:
        x64, g64, d64 = (np.asarray(a, np.float64) for a in (x, gamma, dout))
        return [((no_correction(d64, x64, g64, eps), *([None] * (1 + len(rest)))), "hint.backward_no_correction")]

    return candidates


@deferred
def _layernorm_backward_hints(
    dout: np.ndarray, x: np.ndarray, gamma: Any, beta: Any, eps: float
) -> list[tuple[Any, str]]:
    x64, g64, d64 = (np.asarray(a, np.float64) for a in (x, gamma, dout))
    return [
        ((ln_backward_no_correction(d64, x64, g64, eps), None, None), "hint.backward_no_correction"),
        ((ln_backward_mean_only(d64, x64, g64, eps), None, None), "hint.layernorm_backward_mean_only"),
        ((ln_backward_no_mean_term(d64, x64, g64, eps), None, None), "hint.layernorm_backward_no_mean_term"),
    ]


# --- the stacks ------------------------------------------------------------------------------


def postnorm_with_final(reference: Any, x: np.ndarray, params: dict[str, np.ndarray], eps: float) -> np.ndarray:
    return rms(reference.stack_forward_postnorm(x, params, eps=eps), params["final_gamma"], eps)


def sublayer_steps(
    reference: Any,
    x: np.ndarray,
    params: dict[str, np.ndarray],
    eps: float,
    placement: str,
    reads_normalized: bool | None = None,
) -> Any:
    """Each sublayer in order, as (the stream it reads from, its update, their sum), computed with
    the reference stubs: the raw material for the hints below. ``reads_normalized`` (default:
    pre-norm) says whether a sublayer reads the normalized stream."""
    steps, stream = [], x
    normalized = placement == "pre" if reads_normalized is None else reads_normalized
    for layer in range(params["w_o"].shape[0]):
        for kind in ("attn", "ffn"):
            gamma = params[f"{kind}_gamma"][layer]
            read = rms(stream, gamma, eps) if normalized else stream
            if kind == "attn":
                update = reference.attention_stub(read, params["w_o"][layer])
            else:
                update = reference.ffn_stub(
                    read, params["w_gate"][layer], params["w_up"][layer], params["w_down"][layer]
                )
            total = stream + update
            steps.append((stream, update, total))
            stream = total if placement == "pre" else rms(total, gamma, eps)
    return steps


def without_final(reference: Any, x: np.ndarray, params: dict[str, np.ndarray], eps: float) -> np.ndarray:
    """The pre-norm stack's output without its final norm."""
    steps = sublayer_steps(reference, x, params, eps, "pre")
    return steps[-1][2] if steps else x


def _token_norm(v: np.ndarray) -> float:
    return float(np.mean(np.linalg.norm(np.asarray(v, np.float64), axis=-1)))


def post_trace_variants(
    reference: Any, x: np.ndarray, params: dict[str, np.ndarray], eps: float
) -> list[tuple[np.ndarray, str]]:
    """The post-norm trace with a sublayer that reads the normalized stream, and with each sum
    recorded after its norm (the next sublayer's stream) rather than before."""
    reading = sublayer_steps(reference, x, params, eps, "post", reads_normalized=True)
    steps = sublayer_steps(reference, x, params, eps, "post")
    after = [s[0] for s in steps[1:]] + [rms(steps[-1][2], params["ffn_gamma"][-1], eps)] if steps else []
    recorded_after = [(stream, update, normed) for (stream, update, _), normed in zip(steps, after, strict=True)]
    return [
        (np.array([[_token_norm(a) for a in step] for step in variant]), "hint.trace_post_update_normalized")
        for variant in (reading, recorded_after)
    ]


@deferred
def stack_forward_hints(
    reference: Any, x: np.ndarray, params: dict[str, np.ndarray], eps: float
) -> list[tuple[np.ndarray, str]]:
    return [
        (reference.stack_forward_postnorm(x, params, eps=eps), "hint.stack_postnorm_instead"),
        (postnorm_with_final(reference, x, params, eps), "hint.stack_postnorm_instead"),
        (without_final(reference, x, params, eps), "hint.missing_final_norm"),
    ]


CANDIDATES: dict[str, Callable[..., Sequence[tuple[Any, str]]]] = {
    "rmsnorm": lambda x, gamma, eps=1e-6: rmsnorm_hints(x, gamma, eps),
    "rmsnorm_backward": lambda dout, x, gamma, eps=1e-6: _backward_hints(rms_backward_no_correction)(
        dout, x, gamma, eps=eps
    ),
    "layernorm": lambda x, gamma, beta, eps=1e-5: layernorm_hints(x, gamma, beta, eps),
    "layernorm_backward": lambda dout, x, gamma, beta, eps=1e-5: _layernorm_backward_hints(dout, x, gamma, beta, eps),
    "block": lambda x, sublayer, gamma, eps=1e-6: block_hints(x, _sublayer_function(sublayer), gamma, eps),
    "postnorm_block": lambda x, sublayer, gamma, eps=1e-6: postnorm_hints(x, _sublayer_function(sublayer), gamma, eps),
    "attention_stub": lambda h, w_o: [
        (attention_full_mean(h, w_o), "hint.attention_not_causal"),
        (attention_cumsum(h, w_o), "hint.attention_cumsum_not_mean"),
    ],
    "ffn_stub": lambda h, w_gate, w_up, w_down: [
        (ffn_no_silu(h, w_gate, w_up, w_down), "hint.ffn_no_silu"),
        (ffn_sigmoid(h, w_gate, w_up, w_down), "hint.ffn_sigmoid"),
    ],
    "token_norm": lambda v: token_norm_variants(v),
    "block_backward": lambda dout, x, w, b, arrangement, eps=1e-6: block_backward_variants(
        dout, x, w, b, arrangement, eps
    ),
    "quantize": quantize_variants,
}
"""Function name -> the answers of its common mistakes on one call's arguments."""

WITH_REFERENCE: dict[str, Callable[..., Sequence[tuple[Any, str]]]] = {
    "stack_forward": lambda reference, x, params, eps=1e-6: stack_forward_hints(reference, x, params, eps),
}
"""The same, for mistakes computed with the reference's own functions (``reference`` first)."""
