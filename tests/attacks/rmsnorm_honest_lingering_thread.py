"""Control for catalog #29: a CORRECT rmsnorm whose module leaves a non-daemon thread sleeping
forever. The thread must not keep the worker alive past the grading, and it must not cost the
correct answers anything: every test scores."""

import threading
import time

import numpy as np

threading.Thread(target=lambda: time.sleep(1e9), daemon=False).start()


def rmsnorm(x, gamma, eps=1e-6):
    wide = np.float32 if x.dtype == np.float16 else x.dtype
    xw = x.astype(wide)
    scale = 1.0 / np.sqrt(np.mean(xw * xw, axis=-1, keepdims=True) + eps)
    return (xw * scale * gamma).astype(x.dtype)


def rmsnorm_backward(dout, x, gamma, eps=1e-6):
    wide = np.float32 if x.dtype == np.float16 else x.dtype
    xw, dw = x.astype(wide), dout.astype(wide)
    scale = 1.0 / np.sqrt(np.mean(xw * xw, axis=-1, keepdims=True) + eps)
    xhat = xw * scale
    dgamma = (dw * xhat).reshape(-1, x.shape[-1]).sum(axis=0)
    g = dw * gamma
    dx = (g - xhat * np.mean(g * xhat, axis=-1, keepdims=True)) * scale
    return dx.astype(x.dtype), dgamma.astype(gamma.dtype)
