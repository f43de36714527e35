"""LayerNorm against RMSNorm: what each costs and how each behaves.

The lab's extension "compare LayerNorm's cost and behaviour to RMSNorm's". Everything here is
graded on its *outputs*: operation counts under a fixed convention and measured behaviour on
shifted and scaled inputs. No wall-clock timing is graded: it depends on the machine.
"""

import numpy as np
from layernorm import layernorm
from rmsnorm import rmsnorm


def op_counts(C):
    """Arithmetic cost of one forward pass over a single token vector of width ``C``.

    Count every scalar addition, subtraction, multiplication, division and square root, with
    this convention (the same for both norms):

    * a mean over ``C`` values costs ``C - 1`` additions and 1 division;
    * ``rstd = 1 / sqrt(ms + eps)`` costs 3 (one addition, one square root, one division);
    * normalizing is ``C`` multiplications by ``rstd``;
    * the gain is ``C`` multiplications; the shift (LayerNorm only) is ``C`` additions.

    RMSNorm squares ``x`` (``C`` multiplications) and takes their mean. LayerNorm takes the
    mean of ``x``, subtracts it (``C`` subtractions), squares the centered values (``C``
    multiplications) and takes their mean.

    A *reduction* is one mean over the ``C`` values; *params* counts learned scalars.

    Args:
        C: the width, an integer >= 1.

    Returns:
        ``{"rmsnorm": {"flops": int, "reductions": int, "params": int},
        "layernorm": {"flops": int, "reductions": int, "params": int}}``
    """
    raise NotImplementedError('add up the listed steps for each norm; both counts are linear in C')


def _output_change(x, moved):
    """Largest absolute change of each norm's output between ``x`` and ``moved``."""
    raise NotImplementedError("unit gain, zero shift, default eps; the max absolute difference of each norm's outputs")


def shift_response(x, shift):
    """How much each norm's output moves when a constant is added to every feature.

    Compare ``norm(x + shift)`` with ``norm(x)`` using unit gain (``gamma = 1``), zero shift
    (``beta = 0``) and each function's default eps.

    Args:
        x: shape ``(..., C)``, float64.
        shift: a Python float added to every element.

    Returns:
        ``{"layernorm": float, "rmsnorm": float}``: the largest absolute difference between the
        two outputs, over all elements. LayerNorm subtracts the mean, so its answer is close to
        0; RMSNorm does not, so its answer is not. ``x`` is not modified.
    """
    raise NotImplementedError('compare the norms of x + shift with the norms of x')


def scale_response(x, scale):
    """How much each norm's output moves when every feature is multiplied by ``scale``.

    Same convention as :func:`shift_response`, comparing ``norm(x * scale)`` with ``norm(x)``.
    For ``scale > 0`` both norms are (up to eps) scale invariant, so both answers are small.

    Returns:
        ``{"layernorm": float, "rmsnorm": float}``.
    """
    raise NotImplementedError('compare the norms of x * scale with the norms of x')
