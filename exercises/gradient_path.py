"""The gradient path: how much gradient reaches a stack's input, with and without residuals.

Lab goal (a) of the lesson: *demonstrate that residuals preserve a gradient path*. You build it
from your own backward pass (``rmsnorm_backward``): backpropagate through stacks of 1, 2, ...,
``L`` blocks and measure the gradient that reaches the input, for three arrangements of the
same block. Every RMSNorm here has a unit gain (``gamma = 1``), and the sublayer is
``F(h) = tanh(h @ w + b)`` (:func:`sublayer`, provided with its backward pass)::

    "none":  y = F(x)                   no residual, no norm: a plain deep network
    "post":  y = rmsnorm(x + F(x))      post-norm: the sum is normalized
    "pre":   y = x + F(rmsnorm(x))      pre-norm: only the sublayer's input is normalized

The setup (:func:`lesson_setup`): ``L = 32`` blocks of width ``C = 32`` on a ``(4, 32)``
input; weights with standard deviation ``0.5 / sqrt(C)`` and a bias of standard deviation 1,
so that part of each sublayer's output does not depend on its input (real attention and FFN
outputs have such a part). There, with the reference solution, the gradient reaching the
input after 32 blocks is about 1e-16 of the output's without a residual, about 0.01 with
post-norm (every norm on the identity path shrinks it a little) and about 1 with pre-norm:
the residual's ``+ x`` is a path the gradient takes unchanged.

When it does not hold: the claim is about this setup, not a theorem. Without the bias (a
zero-mean sublayer at small scale), post-norm keeps the gradient about as well as pre-norm;
with large weights (standard deviation 4 / sqrt(C)) the gradient *grows* with depth in every
arrangement, pre-norm included (tens of times over 32 blocks; thousands without pre-norm).
"""

import numpy as np
from rmsnorm import rmsnorm, rmsnorm_backward

ARRANGEMENTS = ("none", "post", "pre")


def sublayer(h, w, b):
    """The sublayer (provided, not graded): ``tanh(h @ w + b)``, shape ``(..., C)``."""
    return np.tanh(h @ w + b)


def sublayer_backward(dy, h, w, b):
    """The gradient of :func:`sublayer` with respect to ``h`` (provided, not graded)."""
    y = np.tanh(h @ w + b)  # (..., C)
    return (dy * (1.0 - y * y)) @ w.T  # (..., C) tanh' = 1 - tanh**2


def lesson_setup(seed=0, n_layers=32, C=32, T=4, scale=0.5, bias=1.0):
    """The documented setup (provided): ``(x, weights, biases)`` with shapes ``(T, C)``,
    ``(L, C, C)`` and ``(L, C)``, all float64."""
    rng = np.random.default_rng(seed)
    weights = rng.standard_normal((n_layers, C, C)) * (scale / np.sqrt(C))
    biases = rng.standard_normal((n_layers, C)) * bias
    x = rng.standard_normal((T, C))
    return x, weights, biases


def block_forward(x, w, b, arrangement, eps=1e-6):
    """One block in the given arrangement: ``"none"``, ``"post"`` or ``"pre"`` (module docstring).

    Args:
        x: the block's input, shape ``(..., C)``, float64.
        w: the sublayer's weight, shape ``(C, C)``; b: its bias, shape ``(C,)``.
        arrangement: one of ``ARRANGEMENTS``.
        eps: eps of the block's unit-gain RMSNorm.

    Returns:
        The block's output, shape and dtype of ``x``. ``x`` is not modified. An unknown
        arrangement raises ``ValueError``.
    """
    raise NotImplementedError('"none" is F(x); "post" normalizes x + F(x); "pre" adds F(rmsnorm(x)) to the raw x; every RMSNorm has gamma = np.ones(C)')


def block_backward(dout, x, w, b, arrangement, eps=1e-6):
    """The gradient of :func:`block_forward` with respect to its input ``x``.

    Use your own ``rmsnorm_backward`` (gain ``np.ones(C)``) and the provided
    :func:`sublayer_backward`. In ``"pre"`` the gradient reaches ``x`` by two routes, the
    residual's ``+ x`` and the normalized branch; in ``"post"`` it passes the norm first, then
    splits between ``x`` and the sublayer.

    Args:
        dout: the gradient of the block's output, shape of ``x``.
        x, w, b, arrangement, eps: as for :func:`block_forward`.

    Returns:
        ``dx``, shape and dtype of ``x``. Inputs are not modified.
    """
    raise NotImplementedError('"none": back through the sublayer; "post": back through the norm (at x + F(x)), then add the identity and the sublayer routes; "pre": dout itself plus the normalized branch (sublayer at rmsnorm(x), then rmsnorm_backward at x)')


def gradient_path(x, weights, biases, arrangement, eps=1e-6):
    """The gradient norm reaching the input of stacks of 1, 2, ..., L blocks.

    For each depth ``d``, run ``x`` through the first ``d`` blocks (block ``l`` uses
    ``weights[l]`` and ``biases[l]``), start from the upstream gradient
    ``np.ones(x.shape) / sqrt(x.size)`` at block ``d``'s output (norm 1), backpropagate it
    through blocks ``d-1, ..., 0`` with :func:`block_backward`, and take the Euclidean norm of
    the whole gradient array that reaches ``x``.

    Args:
        x: the stack's input, shape ``(..., C)``, float64.
        weights: shape ``(L, C, C)``; biases: shape ``(L, C)``.
        arrangement: one of ``ARRANGEMENTS``, the same for every block.
        eps: eps of every RMSNorm.

    Returns:
        A float64 array of shape ``(L,)``: entry ``d - 1`` is the norm for depth ``d``. Inputs
        are not modified.
    """
    raise NotImplementedError("one forward pass keeps every block's input; then, for each depth d, start from ones / sqrt(x.size) and apply block_backward from block d-1 down to block 0")
