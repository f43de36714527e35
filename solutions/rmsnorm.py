"""RMSNorm: rescale each token vector by its root-mean-square, then apply a learned gain.

Lab step 1 of the lesson. Every function here normalizes over the **last axis** and accepts
any number of leading axes: a single vector ``(C,)``, a sequence ``(T, C)`` or a batch
``(B, T, C)``.
"""

import numpy as np


def rmsnorm(x, gamma, eps=1e-6):
    """Root-mean-square normalization over the last axis.

    ``y = x / sqrt(mean(x**2, axis=-1) + eps) * gamma``

    Args:
        x: array of shape ``(..., C)``, dtype float16, float32 or float64.
        gamma: learned gain of shape ``(C,)``.
        eps: small constant added *inside* the square root.

    Returns:
        ``y`` with the same shape as ``x`` and **x's dtype, whatever gamma's**: a float32 ``x``
        with a float64 ``gamma`` gives a float32 ``y``.

    Must not:
        modify ``x`` or ``gamma`` in place; change the dtype; subtract the mean (that is
        LayerNorm). For float16 input, compute in float32 and cast the result back to float16,
        so that squaring a large float16 value cannot overflow; float32 and float64 inputs are
        computed in their own precision (a float64 result is checked to about 1e-9).
    """
    ### BEGIN SOLUTION hint: square, average over the last axis (keepdims=True), add eps, take the square root, divide, scale by gamma; for float16, upcast to float32 first
    xf = x.astype(np.float32) if x.dtype == np.float16 else x  # (..., C) float16 squares overflow
    ms = np.mean(xf * xf, axis=-1, keepdims=True)  # (..., 1)
    rstd = 1.0 / np.sqrt(ms + eps)  # (..., 1) eps inside the sqrt: a zero vector gives 0, not NaN
    y = xf * rstd * gamma  # (..., C)
    return y.astype(x.dtype)
    ### END SOLUTION


def rmsnorm_backward(dout, x, gamma, eps=1e-6):
    """Gradients of :func:`rmsnorm` with respect to ``x`` and ``gamma``.

    With ``r = sqrt(mean(x**2, -1) + eps)`` and ``xhat = x / r``::

        dgamma = sum over every leading axis of (dout * xhat)
        g      = dout * gamma
        dx     = (g - xhat * mean(g * xhat, -1)) / r

    The second term of ``dx`` is the correction for ``r`` depending on every element of ``x``.

    Args:
        dout: upstream gradient, same shape as ``x``.
        x: the forward input, shape ``(..., C)``.
        gamma: the forward gain, shape ``(C,)``.
        eps: the forward eps.

    Returns:
        ``(dx, dgamma)``: ``dx`` has the shape and dtype of ``x``; ``dgamma`` has shape
        ``(C,)`` and the dtype of ``gamma`` (whatever the other's dtype). Inputs are not
        modified. float16 inputs are computed in float32 and the results cast back: a float16
        ``x`` gives a float16 ``dx``.
    """
    ### BEGIN SOLUTION hint: recompute rstd and xhat; dgamma sums dout * xhat over every axis but the last; dx needs the correction term xhat * mean(dout * gamma * xhat, -1)
    wide = np.float32 if x.dtype == np.float16 else x.dtype
    xf, df = x.astype(wide), dout.astype(wide)  # (..., C)
    rstd = 1.0 / np.sqrt(np.mean(xf * xf, axis=-1, keepdims=True) + eps)  # (..., 1)
    xhat = xf * rstd  # (..., C)
    dgamma = (df * xhat).reshape(-1, x.shape[-1]).sum(axis=0)  # (C,) every leading axis
    g = df * gamma  # (..., C)
    dx = (g - xhat * np.mean(g * xhat, axis=-1, keepdims=True)) * rstd  # (..., C)
    return dx.astype(x.dtype), dgamma.astype(gamma.dtype)
    ### END SOLUTION
