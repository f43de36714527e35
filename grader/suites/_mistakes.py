"""The mistakes students really make, as functions: hidden suites use them to name a mistake.

When an answer is wrong, a test computes what each likely mistake would have returned on the
same input; if the student's answer matches one, the failure message carries that mistake's
hint. These run only in the trusted process and never reach a student.
"""

from __future__ import annotations

import numpy as np

# --- RMSNorm ---------------------------------------------------------------------------------


def rms_eps_outside(x, gamma, eps):
    return x / (np.sqrt(np.mean(x**2, axis=-1, keepdims=True)) + eps) * gamma


def rms_axis0(x, gamma, eps):
    return x / np.sqrt(np.mean(x**2, axis=0, keepdims=True) + eps) * gamma


def rms_global(x, gamma, eps):
    return x / np.sqrt(np.mean(x**2) + eps) * gamma


def rms_no_gamma(x, gamma, eps):
    return x / np.sqrt(np.mean(x**2, axis=-1, keepdims=True) + eps)


def rms_centered(x, gamma, eps):
    xc = x - x.mean(axis=-1, keepdims=True)
    return xc / np.sqrt(np.mean(xc**2, axis=-1, keepdims=True) + eps) * gamma


def rms_with_eps(eps_used):
    def fn(x, gamma, eps):
        return x / np.sqrt(np.mean(x**2, axis=-1, keepdims=True) + eps_used) * gamma

    return fn


def rmsnorm_hints(x, gamma, eps, default_eps=1e-6):
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
        if np.asarray(x).dtype == np.float16:
            # Squaring in float16 itself: anything above ~256 overflows to inf.
            x16 = np.asarray(x)
            naive = x16 / np.sqrt(np.mean(x16 * x16, axis=-1, keepdims=True) + np.float16(eps)) * np.asarray(gamma)
            candidates.insert(0, (naive.astype(np.float64), "hint.float16_overflow"))
    return candidates


def rms_backward_no_correction(dout, x, gamma, eps):
    rstd = 1.0 / np.sqrt(np.mean(x**2, axis=-1, keepdims=True) + eps)
    return dout * gamma * rstd


# --- LayerNorm -------------------------------------------------------------------------------


def ln(x, gamma, beta, eps, *, ddof=0, axis=-1, center=True):
    mean = x.mean(axis=axis, keepdims=True) if center else 0.0
    var = x.var(axis=axis, keepdims=True, ddof=ddof) if axis is not None else x.var(ddof=ddof)
    return (x - mean) / np.sqrt(var + eps) * gamma + beta


def layernorm_hints(x, gamma, beta, eps, default_eps=1e-5):
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
        if np.asarray(x).dtype == np.float16:
            x16 = np.asarray(x)
            xc16 = x16 - x16.mean(axis=-1, keepdims=True, dtype=np.float16)
            naive = xc16 / np.sqrt(np.mean(xc16 * xc16, axis=-1, keepdims=True) + np.float16(eps)) * gamma + beta
            candidates.insert(0, (naive.astype(np.float64), "hint.float16_overflow"))
    return candidates


def ln_backward_no_correction(dout, x, gamma, eps):
    xc = x - x.mean(axis=-1, keepdims=True)
    rstd = 1.0 / np.sqrt(np.mean(xc**2, axis=-1, keepdims=True) + eps)
    return dout * gamma * rstd


def ln_backward_mean_only(dout, x, gamma, eps):
    """dx with the mean correction but without the variance correction."""
    xc = x - x.mean(axis=-1, keepdims=True)
    rstd = 1.0 / np.sqrt(np.mean(xc**2, axis=-1, keepdims=True) + eps)
    g = dout * gamma
    return rstd * (g - g.mean(axis=-1, keepdims=True))


# --- residual blocks -------------------------------------------------------------------------


def rms(x, gamma, eps):
    return x / np.sqrt(np.mean(x**2, axis=-1, keepdims=True) + eps) * gamma


def block_hints(x, f, gamma, eps):
    """Common pre-norm block mistakes, given the sublayer as a plain function ``f``."""
    x64 = np.asarray(x, np.float64)
    n = rms(x64, gamma, eps)
    return [
        (rms(x64 + f(x64), gamma, eps), "hint.postnorm_instead_of_prenorm"),
        (n + f(n), "hint.normalized_residual"),
        (x64 + f(x64), "hint.unnormalized_sublayer_input"),
        (f(n), "hint.missing_residual"),
    ]


def postnorm_hints(x, f, gamma, eps):
    x64 = np.asarray(x, np.float64)
    n = rms(x64, gamma, eps)
    return [
        (x64 + f(n), "hint.prenorm_instead_of_postnorm"),
        (rms(x64 + f(n), gamma, eps), "hint.postnorm_sublayer_reads_normalized"),
        (x64 + f(x64), "hint.missing_norm"),
    ]


# --- stack -----------------------------------------------------------------------------------


def attention_full_mean(h, w_o):
    return np.broadcast_to(h.mean(axis=-2, keepdims=True), h.shape) @ w_o


def attention_cumsum(h, w_o):
    return np.cumsum(h, axis=-2) @ w_o


def ffn_no_silu(h, w_gate, w_up, w_down):
    return ((h @ w_gate) * (h @ w_up)) @ w_down


def ffn_sigmoid(h, w_gate, w_up, w_down):
    gate = h @ w_gate
    return ((1.0 / (1.0 + np.exp(-gate))) * (h @ w_up)) @ w_down


def token_norm_variants(v):
    v = np.asarray(v, np.float64)
    per_token = np.linalg.norm(v, axis=-1)
    return [
        (float(np.linalg.norm(v)), "hint.trace_whole_array_norm"),
        (float(per_token.sum()), "hint.trace_summed_not_averaged"),
        (float(np.sqrt(np.mean(v**2))), "hint.trace_rms_not_l2"),
        (float(np.mean(np.abs(v))), "hint.trace_mean_abs"),
    ]
