"""A 6-layer stub stack: the lab's depth extension and the three-norms debugging habit.

Every layer has two sublayers, each wrapped pre-norm + residual, as in a modern decoder:

    x1 = x  + attention_stub(rmsnorm(x,  attn_gamma[l]), w_o[l])
    x2 = x1 + ffn_stub(rmsnorm(x1, ffn_gamma[l]), w_gate[l], w_up[l], w_down[l])

and the stack ends with a final RMSNorm. The stubs are real computations with tiny weights so
the numbers are reproducible; they are not trained models.

Shapes: ``x`` is ``(..., T, C)`` (a sequence ``(T, C)`` or a batch ``(B, T, C)``); ``L`` is the
number of layers, ``C`` the width, ``H`` the FFN hidden width.

The parameters are one dict of stacked arrays (the layer index comes first):

    =============== ============ =========================================
    key             shape        role
    =============== ============ =========================================
    ``attn_gamma``  ``(L, C)``   RMSNorm gain before the attention stub
    ``w_o``         ``(L, C, C)``  attention stub's output projection
    ``ffn_gamma``   ``(L, C)``   RMSNorm gain before the FFN stub
    ``w_gate``      ``(L, C, H)``  FFN gate projection
    ``w_up``        ``(L, C, H)``  FFN up projection
    ``w_down``      ``(L, H, C)``  FFN down projection
    ``final_gamma`` ``(C,)``     final RMSNorm gain (pre-norm stack only)
    =============== ============ =========================================
"""

import numpy as np
from rmsnorm import rmsnorm


def init_params(n_layers=6, C=16, H=None, seed=0, scale=1.0):
    """Random stack parameters (provided, not graded).

    Projections are drawn from a normal distribution with standard deviation
    ``scale / sqrt(fan_in)``; gains start at 1. ``H`` defaults to ``4 * C``.

    Returns:
        A dict with the keys and shapes listed in the module docstring, all float64.
    """
    H = 4 * C if H is None else H
    rng = np.random.default_rng(seed)

    def proj(fan_in, fan_out):
        return rng.standard_normal((n_layers, fan_in, fan_out)) * (scale / np.sqrt(fan_in))

    return {
        "attn_gamma": np.ones((n_layers, C)),
        "w_o": proj(C, C),
        "ffn_gamma": np.ones((n_layers, C)),
        "w_gate": proj(C, H),
        "w_up": proj(C, H),
        "w_down": proj(H, C),
        "final_gamma": np.ones(C),
    }


def attention_stub(h, w_o):
    """Token-mixing stand-in for attention: a causal running mean, then a projection.

    Position ``t`` of the output is the mean of positions ``0..t`` of ``h`` (each token sees
    itself and the past, never the future), multiplied by ``w_o``.

    Args:
        h: shape ``(..., T, C)``.
        w_o: shape ``(C, C)``.

    Returns:
        Shape ``(..., T, C)``, the dtype of ``h``.
    """
    ### BEGIN SOLUTION hint: a cumulative sum over the token axis (-2) divided by 1, 2, ..., T gives the causal running mean; then matrix-multiply by w_o
    T = h.shape[-2]
    counts = np.arange(1, T + 1, dtype=h.dtype).reshape(T, 1)  # (T, 1)
    causal_mean = np.cumsum(h, axis=-2) / counts  # (..., T, C)
    return (causal_mean @ w_o).astype(h.dtype, copy=False)  # (..., T, C), as h even with a float64 w_o
    ### END SOLUTION


def ffn_stub(h, w_gate, w_up, w_down):
    """Position-wise gated FFN (SwiGLU): ``(silu(h @ w_gate) * (h @ w_up)) @ w_down``.

    ``silu(a) = a / (1 + exp(-a))``. Each position is transformed on its own; tokens do not mix.

    Args:
        h: shape ``(..., T, C)``.
        w_gate, w_up: shape ``(C, H)``.
        w_down: shape ``(H, C)``.

    Returns:
        Shape ``(..., T, C)``, the dtype of ``h``.
    """
    ### BEGIN SOLUTION hint: two projections to width H, silu on the gate one, multiply elementwise, project back with w_down
    gate = h @ w_gate  # (..., T, H)
    silu = gate / (1.0 + np.exp(-gate))  # (..., T, H)
    return ((silu * (h @ w_up)) @ w_down).astype(h.dtype, copy=False)  # (..., T, C), as h even with float64 weights
    ### END SOLUTION


def _sublayers(params, layer):
    """The two sublayers of one layer, with their gains, in execution order."""
    attn = lambda h: attention_stub(h, params["w_o"][layer])  # noqa: E731
    ffn = lambda h: ffn_stub(h, params["w_gate"][layer], params["w_up"][layer], params["w_down"][layer])  # noqa: E731
    return [(attn, params["attn_gamma"][layer]), (ffn, params["ffn_gamma"][layer])]


def token_norm(v):
    """The trace's norm: the Euclidean norm over the last axis, averaged over every token.

    Args:
        v: shape ``(..., C)``.

    Returns:
        A Python float: ``mean(sqrt(sum(v**2, axis=-1)))`` over all leading positions.
    """
    ### BEGIN SOLUTION hint: one L2 norm per token (over the last axis), then the mean of those norms; not one norm of the whole array
    return float(np.mean(np.linalg.norm(v.astype(np.float64), axis=-1)))
    ### END SOLUTION


def stack_forward(x, params, eps=1e-6):
    """The pre-norm stack: ``L`` layers of (attention stub, FFN stub), then a final RMSNorm.

    Each sublayer ``F`` with gain ``g`` updates the stream as ``x = x + F(rmsnorm(x, g, eps))``;
    after the last layer the output is ``rmsnorm(x, final_gamma, eps)``.

    Args:
        x: shape ``(..., T, C)``, float32 or float64.
        params: the dict described in the module docstring; ``L = params["w_o"].shape[0]``.
        eps: eps for every RMSNorm in the stack.

    Returns:
        Shape ``(..., T, C)``, the dtype of ``x``: the stream keeps its dtype through every
        layer (each update is cast to it before it is added), so float64 params do not turn a
        float32 stream into float64. Neither ``x`` nor ``params`` is modified.
    """
    ### BEGIN SOLUTION hint: loop over layers and, inside, over the two sublayers; each is x = x + F(rmsnorm(x, gain)) with the update cast to x's dtype; finish with the final RMSNorm
    for layer in range(params["w_o"].shape[0]):
        for sublayer, gain in _sublayers(params, layer):
            x = x + sublayer(rmsnorm(x, gain, eps)).astype(x.dtype)  # (..., T, C) the stream's dtype
    return rmsnorm(x, params["final_gamma"], eps)
    ### END SOLUTION


def stack_forward_postnorm(x, params, eps=1e-6):
    """The post-norm stack, for comparison: ``x = rmsnorm(x + F(x), g, eps)`` per sublayer.

    Same layers, sublayers and gains as :func:`stack_forward`, but each sublayer reads the raw
    stream and the *sum* is normalized. There is no final norm (the stream leaves the last
    sublayer already normalized), so ``final_gamma`` is not used.

    Args and returns: as :func:`stack_forward`.
    """
    ### BEGIN SOLUTION hint: same loops as stack_forward, but x = rmsnorm(x + F(x), gain), the update in x's dtype; no final norm
    for layer in range(params["w_o"].shape[0]):
        for sublayer, gain in _sublayers(params, layer):
            x = rmsnorm(x + sublayer(x).astype(x.dtype), gain, eps)  # (..., T, C)
    return x
    ### END SOLUTION


def stack_trace(x, params, eps=1e-6, placement="pre"):
    """The three-norms debugging habit: one row per sublayer, in execution order.

    Row ``2*l`` is layer ``l``'s attention sublayer and row ``2*l + 1`` its FFN sublayer. Each
    row holds three :func:`token_norm` values, measured where that sublayer runs:

    0. the stream it reads from, ``x``;
    1. its update ``F(.)``: ``F(rmsnorm(x, g))`` for pre-norm, ``F(x)`` for post-norm;
    2. the sum ``x + F(.)`` (for post-norm, the sum *before* it is normalized).

    Args:
        x, params, eps: as :func:`stack_forward`.
        placement: ``"pre"`` or ``"post"``; anything else raises ``ValueError``.

    Returns:
        A float64 array of shape ``(2 * L, 3)``. The final norm of the pre-norm stack is not a
        sublayer and has no row.
    """
    ### BEGIN SOLUTION hint: run the same loop as the forward pass and, for each sublayer, record token_norm of x, of the update and of their sum
    if placement not in ("pre", "post"):
        raise ValueError(f"placement must be 'pre' or 'post', not {placement!r}")
    rows = []
    for layer in range(params["w_o"].shape[0]):
        for sublayer, gain in _sublayers(params, layer):
            update = sublayer(rmsnorm(x, gain, eps) if placement == "pre" else x).astype(x.dtype)  # (..., T, C)
            total = x + update  # (..., T, C)
            rows.append([token_norm(x), token_norm(update), token_norm(total)])
            x = total if placement == "pre" else rmsnorm(total, gain, eps)
    return np.array(rows, dtype=np.float64)  # (2L, 3)
    ### END SOLUTION


def depth_rms(x, params, eps=1e-6):
    """Activation RMS per depth, pre-norm against post-norm.

    The RMS of an array is ``sqrt(mean(v**2))`` over *all* its elements.

    Returns:
        A float64 array of shape ``(2, L + 1)``. Row 0 is the pre-norm stack, row 1 the
        post-norm stack. Column 0 is the RMS of the input ``x``; column ``l`` is the RMS of the
        stream after layer ``l`` (after its FFN sublayer, before any final norm).
    """
    ### BEGIN SOLUTION hint: run both stacks layer by layer and record the RMS of the whole stream after each layer
    L = params["w_o"].shape[0]
    out = np.empty((2, L + 1))
    for row, placement in enumerate(("pre", "post")):
        h = x
        out[row, 0] = np.sqrt(np.mean(np.square(h, dtype=np.float64)))
        for layer in range(L):
            for sublayer, gain in _sublayers(params, layer):
                if placement == "pre":
                    h = h + sublayer(rmsnorm(h, gain, eps)).astype(h.dtype)
                else:
                    h = rmsnorm(h + sublayer(h).astype(h.dtype), gain, eps)
            out[row, layer + 1] = np.sqrt(np.mean(np.square(h, dtype=np.float64)))
    return out
    ### END SOLUTION
