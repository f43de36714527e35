"""Attack (class 3, a student's value becomes a grader fault): an integer too large for a float,
exactly where the suite converts it.

shift_response answers RMSNorm's response correctly (so the suite reaches the next key) and
``10**400`` for LayerNorm's, whose expected value is "about zero". The suite checks that with
``abs(float(value))``, which raises OverflowError inside the trusted test: the plugin files it
as a grader fault, the run stops and no score is issued (exit 3).
(``tests/attacks/compare_huge_numbers.py`` answers 10**400 everywhere and never gets this far.)

Expected: a wrong answer, scored zero on those tests, for a report with a score.
"""

import numpy as np

HUGE = 10**400


def _rms(x):
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + 1e-6)


def _response(x, moved):
    return float(np.max(np.abs(_rms(moved) - _rms(x))))


def op_counts(C):
    return {norm: {"flops": 0, "reductions": 0, "params": 0} for norm in ("rmsnorm", "layernorm")}


def shift_response(x, shift):
    return {"rmsnorm": _response(x, x + shift), "layernorm": HUGE}


def scale_response(x, scale):
    return {"rmsnorm": _response(x, x * scale), "layernorm": HUGE}
