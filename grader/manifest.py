"""The exercises: which module holds which graded functions, in lesson order.

This is the contract between the stubs, the suites and the worker: a directory submission
provides ``<module>.py`` files, a single file or notebook provides the functions by name.
A test checks it against the public functions of ``solutions/``.
"""

from __future__ import annotations

EXERCISES: dict[str, tuple[str, ...]] = {
    "rmsnorm": ("rmsnorm", "rmsnorm_backward"),
    "layernorm": ("layernorm", "layernorm_backward"),
    "residual": ("block", "postnorm_block"),
    "stack": (
        "init_params",
        "attention_stub",
        "ffn_stub",
        "token_norm",
        "stack_forward",
        "stack_forward_postnorm",
        "stack_trace",
        "depth_rms",
    ),
    "compare": ("op_counts", "shift_response", "scale_response"),
    "inspect_config": ("inspect_config",),
}

MODULE_OF: dict[str, str] = {fn: module for module, fns in EXERCISES.items() for fn in fns}
"""Function name -> the module (and exercise) that defines it."""

MODULES: tuple[str, ...] = tuple(EXERCISES)
