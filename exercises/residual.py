"""Residual blocks: the pre-norm block modern LLMs use, and the original post-norm block.

Lab step 2 of the lesson. ``sublayer`` stands for attention or the FFN: any callable that maps
an array of shape ``(..., C)`` to an array of the same shape.
"""

from rmsnorm import rmsnorm


def block(x, sublayer, gamma, eps=1e-6):
    """Pre-norm residual block: ``x + sublayer(rmsnorm(x, gamma, eps))``.

    The sublayer reads a normalized copy of the stream; its output is added to the *raw*
    stream ``x``, so the identity path never passes through a normalization.

    Args:
        x: the residual stream, shape ``(..., C)``.
        sublayer: callable mapping ``(..., C)`` to ``(..., C)``; call it exactly once.
        gamma: the RMSNorm gain, shape ``(C,)``.
        eps: the RMSNorm eps.

    Returns:
        The updated stream, same shape and dtype as ``x``: the stream keeps its dtype, so the
        sublayer's output is cast to ``x``'s dtype before it is added. ``x`` is not modified.
    """
    raise NotImplementedError("normalize a copy of x for the sublayer to read, then add the sublayer's output (in x's dtype) to the raw x")


def postnorm_block(x, sublayer, gamma, eps=1e-6):
    """Post-norm residual block (the original Transformer): ``rmsnorm(x + sublayer(x), gamma, eps)``.

    The sublayer reads the raw stream and the *sum* is normalized, so the identity path itself
    passes through a normalization.

    Args:
        x: the residual stream, shape ``(..., C)``.
        sublayer: callable mapping ``(..., C)`` to ``(..., C)``; call it exactly once.
        gamma: the RMSNorm gain, shape ``(C,)``.
        eps: the RMSNorm eps.

    Returns:
        The normalized sum, same shape and dtype as ``x`` (the sublayer's output is cast to
        ``x``'s dtype before it is added). ``x`` is not modified.
    """
    raise NotImplementedError("add the sublayer's output on the raw x (in x's dtype) to x, then normalize the sum")
