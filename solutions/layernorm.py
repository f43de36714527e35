"""LayerNorm: center each token vector, scale it to unit variance, then apply a gain and a shift.

Extension of the lab. Same conventions as ``rmsnorm.py``: the last axis is normalized, any
number of leading axes is accepted, shape and dtype are preserved, inputs are never modified,
and float16 input is computed in float32.
"""

import numpy as np


def layernorm(x, gamma, beta, eps=1e-5):
    """Layer normalization over the last axis.

    ``y = (x - mean(x, -1)) / sqrt(var(x, -1) + eps) * gamma + beta``

    ``var`` is the *biased* variance: the mean of the squared deviations, dividing by ``C``
    (not ``C - 1``).

    Args:
        x: array of shape ``(..., C)``, dtype float16, float32 or float64.
        gamma: learned gain (scale) of shape ``(C,)``.
        beta: learned shift (bias) of shape ``(C,)``.
        eps: small constant added *inside* the square root.

    Returns:
        ``y`` with the same shape as ``x`` and **x's dtype, whatever gamma's and beta's**: a
        float32 ``x`` with float64 ``gamma`` and ``beta`` gives a float32 ``y``.

    Must not:
        modify any input in place; change the dtype; use the unbiased variance. For float16
        input, compute in float32 and cast the result back.
    """
    ### BEGIN SOLUTION hint: mean and biased variance over the last axis with keepdims=True, eps inside the sqrt, then gamma times the normalized value plus beta; upcast float16 to float32
    xf = x.astype(np.float32) if x.dtype == np.float16 else x  # (..., C)
    mean = np.mean(xf, axis=-1, keepdims=True)  # (..., 1)
    xc = xf - mean  # (..., C)
    var = np.mean(xc * xc, axis=-1, keepdims=True)  # (..., 1) biased: divide by C
    rstd = 1.0 / np.sqrt(var + eps)  # (..., 1)
    y = xc * rstd * gamma + beta  # (..., C)
    return y.astype(x.dtype)
    ### END SOLUTION


def layernorm_backward(dout, x, gamma, beta, eps=1e-5):
    """Gradients of :func:`layernorm` with respect to ``x``, ``gamma`` and ``beta``.

    With ``xhat = (x - mean) * rstd`` and ``g = dout * gamma``::

        dbeta  = sum over every leading axis of dout
        dgamma = sum over every leading axis of (dout * xhat)
        dx     = rstd * (g - mean(g, -1) - xhat * mean(g * xhat, -1))

    The two subtracted means are the corrections for the mean and the variance depending on
    every element of ``x``.

    Args:
        dout: upstream gradient, same shape as ``x``.
        x: the forward input, shape ``(..., C)``.
        gamma, beta: the forward gain and shift, shape ``(C,)``.
        eps: the forward eps.

    Returns:
        ``(dx, dgamma, dbeta)``: ``dx`` has the shape and dtype of ``x``; ``dgamma`` and
        ``dbeta`` have shape ``(C,)`` and the dtypes of ``gamma`` and ``beta`` (whatever the
        others' dtypes). Inputs are not modified. float16 inputs are computed in float32 and
        the results cast back: a float16 ``x`` gives a float16 ``dx``.
    """
    ### BEGIN SOLUTION hint: recompute mean, rstd and xhat; dbeta and dgamma sum over every axis but the last; dx subtracts mean(g) and xhat * mean(g * xhat) with g = dout * gamma
    wide = np.float32 if x.dtype == np.float16 else x.dtype
    xf, df = x.astype(wide), dout.astype(wide)  # (..., C)
    xc = xf - np.mean(xf, axis=-1, keepdims=True)  # (..., C)
    rstd = 1.0 / np.sqrt(np.mean(xc * xc, axis=-1, keepdims=True) + eps)  # (..., 1)
    xhat = xc * rstd  # (..., C)
    C = x.shape[-1]
    dbeta = df.reshape(-1, C).sum(axis=0)  # (C,)
    dgamma = (df * xhat).reshape(-1, C).sum(axis=0)  # (C,)
    g = df * gamma  # (..., C)
    g_mean = np.mean(g, axis=-1, keepdims=True)  # (..., 1)
    gx_mean = np.mean(g * xhat, axis=-1, keepdims=True)  # (..., 1)
    dx = rstd * (g - g_mean - xhat * gx_mean)  # (..., C)
    return dx.astype(x.dtype), dgamma.astype(gamma.dtype), dbeta.astype(beta.dtype)
    ### END SOLUTION
