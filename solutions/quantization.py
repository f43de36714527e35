"""Quantization and norms: what reaches each norm when a stack runs at k bits (question 7).

Question 7 of the lesson: *output becomes unstable after aggressive 2-bit quantization; how
might norms be involved?* You measure it. :func:`quantize` is symmetric uniform quantization
("fake" quantization: the result is dequantized back to float64 so the rest stays numpy)::

    qmax  = 2**(bits - 1) - 1                  # 8 bits: 127, 4 bits: 7, 2 bits: 1
    scale = clip * max|w| / qmax               # per tensor, or one scale per slice (axis)
    q     = clamp(round(w / scale), -qmax, qmax)
    w_q   = q * scale

The stack (:func:`quantized_stack`) is pre-norm with a linear sublayer and unit-gain norms,
``x = x + quantize(rmsnorm(x)) @ quantize(W)``: the sublayer's input (the norm's output) is
quantized per token (one scale per row, ``axis=-1``) and each weight per tensor
(``axis=None``) or per output channel (``axis=0``, one scale per column of ``W``). The
residual stream and the norms stay in float64 here (quantization libraries keep the norms in
higher precision than the weights), so what changes is what the sublayers write.

The setup (:func:`quantization_setup`): 12 blocks of width 64 on 8 tokens. Channel 0 of the
input is an *outlier feature* of about 100 (the other channels are about 1), and every
``W[l][0, 0]`` is 2 while the other weights have standard deviation ``1 / sqrt(C)``: the stack
feeds the outlier channel, which grows by about 16 a block. Real models have both: a few
feature dimensions of the residual stream far larger than the rest, in the same dimensions in
every layer (Dettmers et al. 2022, *LLM.int8()*, arXiv:2208.07339; Sun et al. 2024, *Massive
Activations in Large Language Models*, arXiv:2402.17762), and single weights that create them
(Yu et al. 2024, *The Super Weight in Large Language Models*, arXiv:2411.07191).

There, with the reference solution (:func:`quantization_report`, per-tensor weights):

* every norm's input has a max-abs about 9 times its RMS: the outlier sets the norm's statistic;
* the norm's output, quantized per token, has its scale set by the outlier too: at 4 and at
  2 bits 98 % of its entries round to zero (every channel but the outlier), against about
  25 % at 8 bits;
* the ordinary channels of the stream drift from the float64 run: a median relative error of
  about 0.05 at 8 bits, 0.6 at 4 bits and 0.9 at 2 bits after 12 blocks (0.03, 0.14 and 0.6
  with per-channel weights, ``axis=0``: the super weight no longer sets every column's scale);
* from the 10th norm on, tokens' sums of squares exceed 65504, the largest float16: a norm
  that squares and sums in float16 returns inf there, at every bit width, which is why
  serving code computes the norm in float32 (Hugging Face's ``LlamaRMSNorm.forward`` casts the
  hidden states to float32 before ``pow(2).mean(-1)``).

When it does not hold: without the outliers (``outlier=1, super_weight=1/8``) per-token
quantization zeroes about 1 % of the norm's output at 8 bits, 15 % at 4 bits and 82 % at 2 bits
(a 2-bit grid has only -1, 0 and 1 times the scale), and nothing overflows: the damage at 2 bits
is then rounding noise that the small grid makes large everywhere, not the outlier that sets
the norm's statistic and the quantization scale.
"""

import numpy as np
from rmsnorm import rmsnorm

FLOAT16_MAX = 65504.0
"""The largest finite float16."""

BITS = (None, 8, 4, 2)
"""The bit widths of the report; ``None`` is the float64 run every other row is compared with."""


def quantization_setup(seed=0, n_layers=12, C=64, T=8, outlier=100.0, super_weight=2.0):
    """The documented setup (provided): ``(x, weights)`` with shapes ``(T, C)`` and
    ``(L, C, C)``, float64. Channel 0 of ``x`` is about ``outlier``; ``weights[l][0, 0]`` is
    ``super_weight``."""
    rng = np.random.default_rng(seed)
    weights = rng.standard_normal((n_layers, C, C)) / np.sqrt(C)
    weights[:, 0, 0] = super_weight
    x = rng.standard_normal((T, C))
    x[:, 0] = outlier * (1.0 + 0.1 * rng.standard_normal(T))
    return x, weights


def quantize(w, bits, axis=None, clip=1.0):
    """Symmetric uniform quantization to ``bits`` bits, returned dequantized (module docstring).

    Args:
        w: any float array.
        bits: an integer >= 2; the integer grid is ``-qmax .. qmax`` with
            ``qmax = 2**(bits - 1) - 1`` (symmetric: no zero point, ``-qmax - 1`` unused).
        axis: ``None`` for one scale for the whole tensor, or the axis the maximum is taken
            along (``-1``: one scale per row; ``0``: one scale per column).
        clip: the scale is ``clip * max|w| / qmax``; with ``clip < 1`` the largest values
            saturate at ``+-qmax * scale``.

    Returns:
        ``q * scale`` as float64, shape of ``w``. Round to the nearest integer (``np.round``).
        A slice that is all zeros stays zeros (its scale is 0: no division by it). ``w`` is
        not modified.
    """
    ### BEGIN SOLUTION hint: qmax = 2**(bits - 1) - 1; scale = clip * max|w| / qmax (keepdims along axis); round, clamp to [-qmax, qmax], multiply back
    w = np.asarray(w, dtype=np.float64)
    qmax = 2 ** (bits - 1) - 1  # symmetric: as many levels above zero as below
    scale = clip * np.max(np.abs(w), axis=axis, keepdims=True) / qmax  # (1, ...) or per slice
    safe = np.where(scale > 0, scale, 1.0)  # an all-zero slice: any scale gives zeros
    q = np.clip(np.round(w / safe), -qmax, qmax)  # clamp: clip < 1 saturates the largest values
    return q * scale
    ### END SOLUTION


def quantized_stack(x, weights, bits, axis=None, eps=1e-6):
    """The pre-norm stack at ``bits`` bits; what reaches each norm, and the zeros it feeds on.

    Block ``l`` computes ``h = quantize(rmsnorm(x, ones), bits, axis=-1)`` (the norm's output
    quantized per token) and ``x = x + h @ quantize(weights[l], bits, axis)``. With
    ``bits=None`` nothing is quantized (the float64 run).

    Args:
        x: the stack's input, shape ``(..., C)``, float64.
        weights: shape ``(L, C, C)``.
        bits: an integer >= 2, or ``None``.
        axis: the weights' quantization axis (``None``: per tensor, ``0``: per column).
        eps: eps of every RMSNorm.

    Returns:
        ``(norm_inputs, zeroed)``: ``norm_inputs`` has shape ``(L + 1, ..., C)``, the stream
        that reaches each block's norm and, last, the final norm; ``zeroed`` has shape
        ``(L,)``, the fraction of block ``l``'s ``h`` that is exactly zero. Both float64;
        inputs are not modified.
    """
    ### BEGIN SOLUTION hint: keep every block's input; quantize rmsnorm's output with axis=-1 and the weight with the given axis, unless bits is None
    ones = np.ones(x.shape[-1])  # (C,) unit gain
    inputs, zeroed = [x], []
    for w in weights:
        h = rmsnorm(inputs[-1], ones, eps)  # (..., C)
        if bits is not None:
            h, w = quantize(h, bits, axis=-1), quantize(w, bits, axis)
        zeroed.append(np.mean(h == 0))
        inputs.append(inputs[-1] + h @ w)  # (..., C) the residual stays float64
    return np.stack(inputs), np.asarray(zeroed, dtype=np.float64)
    ### END SOLUTION


def quantization_report(x, weights, bits=BITS, axis=None, eps=1e-6):
    """The numbers of the experiment, one row per entry of ``bits``, one column per norm.

    Every statistic is over the whole stream that reaches the norm (all tokens, all channels):

    * ``"rms"``: ``sqrt(mean(s**2))``; ``"max_abs"``: ``max|s|``;
      ``"outlier_ratio"``: ``max_abs / rms``;
    * ``"error"``: the drift from the float64 run (``bits=None``) of the ordinary channels:
      for each channel ``c``, ``sqrt(mean_t (s - f)**2) / sqrt(mean_t f**2)`` over the
      tokens, then the median over channels (an outlier channel does not move a median);
    * ``"overflows"``: how many tokens have a sum of squares ``sum_c s**2`` above
      ``FLOAT16_MAX`` (float16's largest value): where a norm that squares and sums in
      float16 gets inf;
    * ``"zeroed"``: :func:`quantized_stack`'s ``zeroed``, shape ``(K, L)``.

    Args:
        x, weights, axis, eps: as for :func:`quantized_stack`.
        bits: a tuple of bit widths; ``None`` is the float64 run.

    Returns:
        A dict of float64 arrays of shape ``(K, L + 1)`` (``K = len(bits)``), except
        ``"zeroed"``, ``(K, L)``. Inputs are not modified.
    """
    ### BEGIN SOLUTION hint: run quantized_stack once with bits=None for the reference stream f, then once per entry of bits; reduce over every axis but the first
    f, _ = quantized_stack(x, weights, None, axis, eps)  # (L + 1, ..., C) float64 run
    over = tuple(range(1, f.ndim))  # every axis but the norm's index
    tokens = tuple(range(1, f.ndim - 1))  # every axis but the norm's and the channel
    rows = {key: [] for key in ("rms", "max_abs", "outlier_ratio", "error", "overflows", "zeroed")}
    for k in bits:
        s, zeroed = quantized_stack(x, weights, k, axis, eps)
        rms = np.sqrt(np.mean(s**2, axis=over))  # (L + 1,)
        rows["rms"].append(rms)
        rows["max_abs"].append(np.max(np.abs(s), axis=over))
        rows["outlier_ratio"].append(rows["max_abs"][-1] / rms)
        drift = np.sqrt(np.mean((s - f) ** 2, axis=tokens)) / np.sqrt(np.mean(f**2, axis=tokens))  # (L + 1, C)
        rows["error"].append(np.median(drift, axis=-1))
        rows["overflows"].append(np.sum(np.sum(s**2, axis=-1) > FLOAT16_MAX, axis=tokens).astype(np.float64))
        rows["zeroed"].append(zeroed)
    return {key: np.asarray(value, dtype=np.float64) for key, value in rows.items()}
    ### END SOLUTION
