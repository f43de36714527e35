"""Callables that cross the boundary as descriptions: a kind and its weight arrays.

A hidden test cannot hand the worker a Python function (that would need pickle), so it sends
``{"$callable": {"kind": ..., "params": {...}}}`` and this trusted code, running inside the
worker, turns the description back into a function. Each built callable records the inputs
it receives so that the trusted side can diagnose *what* the student fed their sublayer.

The same table is used on the trusted side to evaluate the reference, so both sides agree on
what every kind computes. Standard library and numpy only.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

Array = np.ndarray


def _silu(a: Array) -> Array:
    out: Array = a / (1.0 + np.exp(-a))
    return out


KINDS: dict[str, Callable[[Array, dict[str, Any]], Array]] = {
    "zero": lambda h, p: np.zeros_like(h),
    "scale": lambda h, p: h * p["factor"],
    "linear": lambda h, p: h @ p["w"],
    "tanh_linear": lambda h, p: np.tanh(h @ p["w"]),
    "offset": lambda h, p: h * p["factor"] + p["bias"],
    "swiglu": lambda h, p: (_silu(h @ p["w_gate"]) * (h @ p["w_up"])) @ p["w_down"],
}


class Recorded:
    """A sublayer built from a description, remembering the first inputs it was called with."""

    KEEP = 2  # enough to tell "called once" from "called twice" and to inspect the input

    def __init__(self, kind: str, params: dict[str, Any]) -> None:
        if kind not in KINDS:
            raise ValueError(f"unknown callable kind {kind!r}")
        self.kind, self.params = kind, params
        self.calls = 0
        self.inputs: list[Array] = []

    def __call__(self, h: Array) -> Array:
        self.calls += 1
        if len(self.inputs) < self.KEEP and isinstance(h, np.ndarray):
            self.inputs.append(np.array(h, copy=True))
        return KINDS[self.kind](h, self.params)


def build(description: dict[str, Any]) -> Recorded:
    """Turn ``{"kind": ..., "params": {...}}`` into a :class:`Recorded` callable."""
    return Recorded(str(description["kind"]), dict(description.get("params") or {}))
