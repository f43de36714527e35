"""The porting detective (question 6): find a port's mismatch by experiment.

Someone ported the lesson's block to another framework, and its outputs do not match. You cannot
read the port: you choose the inputs (:func:`probes`), the grader runs the reference block and the
port on them, and your :func:`diagnose` names the mismatch from the outputs alone.

The reference block, on an input ``x`` of shape ``(T, C)`` with ``C = WIDTH``::

    h = norm(x, weight_1)                 the sublayer's input is normalized (pre-norm)
    z = x + F(h)                          the residual adds the sublayer's output to the raw x
    y = norm(z, weight_f)                 a final norm before the head

where ``norm`` is RMSNorm scaling by ``weight`` (Llama's block), with one ``eps``, and
``F(h) = tanh(h @ w + b)`` a sublayer whose weights you never see. :func:`forward` (provided,
not graded) computes it, and each port it can build. A port differs from the reference in
exactly one way, or not at all:

==========================  ====================================================================
``"norm_type"``             every norm is a LayerNorm (bias zero, same weight and eps)
``"eps"``                   every norm uses another eps
``"placement"``             post-norm: ``z = norm(x + F(x), weight_1)`` instead of pre-norm
``"offset_gain"``           every norm scales by ``1 + weight`` instead of ``weight``
``"missing_final_norm"``    ``y = z``: no final norm
``"residual_on_normalized"`` ``z = h + F(h)``: the residual adds the normalized copy, not ``x``
``"match"``                 no mismatch
==========================  ====================================================================

The graded ports use weights, gains and eps values you have not seen, so a detective that works must use properties that hold whatever
they are: what a norm does not see (a common scale, or a common shift for LayerNorm), when eps
matters (inputs whose mean square is near eps), and what a norm leaves of its input.
"""

import numpy as np
from layernorm import layernorm
from rmsnorm import rmsnorm

WIDTH = 16
"""C: the width of every probe, of the reference block and of every port."""
MAX_PROBES = 16
"""At most this many probes..."""
MAX_ROWS = 64
"""...each of shape ``(T, WIDTH)`` with ``1 <= T <= MAX_ROWS``, float64 and finite."""
LABELS = (
    "norm_type",
    "eps",
    "placement",
    "offset_gain",
    "missing_final_norm",
    "residual_on_normalized",
    "match",
)


def forward(x, params, mismatch="match"):
    """The reference block on ``x`` (provided, not graded), or the port with ``mismatch``.

    Args:
        x: shape ``(T, C)``, float64.
        params: a dict with ``"eps"``, ``"weight_1"`` and ``"weight_f"`` (shape ``(C,)``), ``"w"`` (``(C, C)``), ``"b"``
            (``(C,)``), and ``"port_eps"`` (the eps of an ``"eps"`` port).
        mismatch: one of ``LABELS``.

    Returns:
        The block's output, shape ``(T, C)``.
    """
    if mismatch not in LABELS:
        raise ValueError(f"mismatch must be one of {LABELS}, not {mismatch!r}")
    eps = params["port_eps"] if mismatch == "eps" else params["eps"]

    def norm(v, weight):
        gain = 1.0 + weight if mismatch == "offset_gain" else weight
        if mismatch == "norm_type":
            return layernorm(v, gain, np.zeros_like(gain), eps)
        return rmsnorm(v, gain, eps)

    def sub(h):
        return np.tanh(h @ params["w"] + params["b"])

    if mismatch == "placement":
        z = norm(x + sub(x), params["weight_1"])
    elif mismatch == "residual_on_normalized":
        h = norm(x, params["weight_1"])
        z = h + sub(h)
    else:
        z = x + sub(norm(x, params["weight_1"]))
    return z if mismatch == "missing_final_norm" else norm(z, params["weight_f"])


def probes():
    """The inputs you want both blocks run on.

    Returns:
        A list of at most ``MAX_PROBES`` float64 arrays, each of shape ``(T, WIDTH)`` with
        ``1 <= T <= MAX_ROWS`` and finite values. :func:`diagnose` receives them back in the same
        order, so their order can mean what you decide.
    """
    ### BEGIN SOLUTION hint: choose inputs that each answer one question: the same input scaled, shifted, made very small or very large
    rng = np.random.default_rng(6)
    base = 3.0 * rng.standard_normal((8, WIDTH)) + np.linspace(-2.0, 2.0, 8)[:, None]  # (T, C) rows of other means
    return [base, 4.0 * base, base + 3.0, 1e-3 * base, 1e4 * base]
    ### END SOLUTION


def _gap(a, b):
    """How far ``b`` is from ``a``, relative to ``a``'s largest entry."""
    return float(np.max(np.abs(a - b)) / (np.max(np.abs(a)) + 1e-300))


def diagnose(probes, reference_outputs, port_outputs):
    """Name the port's mismatch from the outputs on your probes.

    Args:
        probes: the list :func:`probes` returned.
        reference_outputs: the reference block's output on each probe (a list, same order).
        port_outputs: the port's output on each probe (a list, same order).

    Returns:
        One of ``LABELS`` (a ``str``).
    """
    ### BEGIN SOLUTION hint: compare the outputs probe by probe: which mismatch leaves the port's output unchanged by a shift or a scale of its input, and which one vanishes on huge inputs?
    base, scaled, shifted, tiny, huge = probes
    ref, port = reference_outputs, port_outputs
    if max(_gap(r, p) for r, p in zip(ref, port, strict=True)) < 1e-9:
        return "match"
    if _gap(port[0], port[2]) < 1e-6:
        return "norm_type"  # the port ignores a common shift: a LayerNorm (an RMSNorm does not)
    if _gap(ref[4], port[4]) < 1e-7 and _gap(ref[3], port[3]) > 1e-3:
        return "eps"  # eps matters only where the mean square is near it
    if _gap(port[0], port[1]) < 1e-3 < _gap(ref[0], ref[1]):
        return "residual_on_normalized"  # the port ignores the input's scale
    if _gap(port[0] - base, port[1] - scaled) < 1e-3:
        return "missing_final_norm"  # port(x) = x + F(norm(x)), and norm ignores the scale
    ratio = np.sum(port[4] * ref[4], axis=0) / np.sum(ref[4] * ref[4], axis=0)  # (C,) per-channel factor
    if _gap(port[4], ref[4] * ratio) < 1e-3 and np.max(np.abs(ratio - 1.0)) > 1e-2:
        return "offset_gain"  # on huge inputs both are norm(x) up to the gain
    return "placement"
    ### END SOLUTION
