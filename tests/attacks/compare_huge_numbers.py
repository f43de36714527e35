"""Attack (extra, catalog #7/#12 for scalar answers): answer with integers too large for a
float (10**400).

A trusted check that converts the answer with ``float()`` raises OverflowError in the grader
instead of failing this student's test.
"""

HUGE = 10 ** 400


def op_counts(C):
    return {norm: {"flops": HUGE, "reductions": HUGE, "params": HUGE} for norm in ("rmsnorm", "layernorm")}


def shift_response(x, shift):
    x += 1.0
    return {"layernorm": HUGE, "rmsnorm": HUGE}


def scale_response(x, scale):
    x += 1.0
    return {"layernorm": HUGE, "rmsnorm": HUGE}
