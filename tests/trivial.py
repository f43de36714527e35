"""Trivial implementations of every graded function: code that does none of the maths.

Decision 1 of the architecture: a hidden test awards points for a property (inputs untouched,
dtype kept, the sublayer called once, bad input refused, the report's keys) only together with a
correct answer, or one that matches a diagnosed mistake. These submissions have neither, so
every hidden test must give each of them zero. They are generated from the course's own list of
functions and the stubs' signatures, so a function added later is covered without a new case.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import numpy as np

from grader import course
from grader.checks import Sublayer
from grader.course import EXERCISES, MODULE_OF
from grader.reference import Reference

RAISED = ("ValueError", "TypeError", "KeyError", "FileNotFoundError", "NotImplementedError", "ZeroDivisionError")


def _canonical_calls() -> dict[str, tuple[tuple[Any, ...], dict[str, Any]]]:
    """One ordinary call of every graded function (arguments the reference answers)."""
    rng = np.random.default_rng(0)
    x, gamma, beta, dout = (
        rng.standard_normal((3, 8)),
        1 + 0.1 * rng.standard_normal(8),
        rng.standard_normal(8),
        rng.standard_normal((3, 8)),
    )
    reference = Reference(course.solutions_dir())
    params = reference.init_params(n_layers=2, C=8, seed=1)
    port = {
        "eps": 1e-6,
        "port_eps": 1e-5,
        "weight_1": 1 + 0.2 * rng.standard_normal(16),
        "weight_f": 1 + 0.2 * rng.standard_normal(16),
        "w": rng.standard_normal((16, 16)) / 4,
        "b": rng.standard_normal(16),
    }
    probes = reference.probes()
    outputs = {m: [reference.forward(p, port, m) for p in probes] for m in ("match", "eps")}
    reference.close()
    linear = Sublayer("linear", w=rng.standard_normal((8, 8)) * 0.3)
    config = json.loads((course.exercises_dir() / "configs" / "llama-2-7b.json").read_text())
    return {
        "rmsnorm": ((x, gamma), {}),
        "rmsnorm_backward": ((dout, x, gamma), {}),
        "layernorm": ((x, gamma, beta), {}),
        "layernorm_backward": ((dout, x, gamma, beta), {}),
        "block": ((x, linear, gamma), {}),
        "postnorm_block": ((x, linear, gamma), {}),
        "init_params": ((), {"n_layers": 2, "C": 8, "seed": 1}),
        "attention_stub": ((x, params["w_o"][0]), {}),
        "ffn_stub": ((x, params["w_gate"][0], params["w_up"][0], params["w_down"][0]), {}),
        "token_norm": ((x,), {}),
        "stack_forward": ((x, params), {}),
        "stack_forward_postnorm": ((x, params), {}),
        "stack_trace": ((x, params), {}),
        "depth_rms": ((x, params), {}),
        "op_counts": ((16,), {}),
        "shift_response": ((x, 1.0), {}),
        "scale_response": ((x, 2.0), {}),
        "inspect_config": ((config,), {}),
        "sublayer": ((x, params["w_o"][0], beta), {}),
        "sublayer_backward": ((dout, x, params["w_o"][0], beta), {}),
        "lesson_setup": ((), {"n_layers": 3, "C": 8}),
        "block_forward": ((x, params["w_o"][0], beta, "pre"), {}),
        "block_backward": ((dout, x, params["w_o"][0], beta, "post"), {}),
        "gradient_path": ((x, params["w_o"][:2], np.stack([beta, beta]), "pre"), {}),
        "forward": ((rng.standard_normal((3, 16)), port, "eps"), {}),
        "probes": ((), {}),
        "diagnose": ((probes, outputs["match"], outputs["eps"]), {}),
        "quantization_setup": ((), {"n_layers": 2, "C": 8}),
        "quantize": ((x, 4), {}),
        "quantized_stack": ((x, params["w_o"][:2], 4), {}),
        "quantization_report": ((x, params["w_o"][:2]), {}),
    }


def literal(value: Any) -> str:
    """Python source that rebuilds ``value`` (arrays, numbers, strings, containers)."""
    if isinstance(value, np.ndarray):
        return f"np.array({value.tolist()!r}, dtype={value.dtype.name!r})"
    if isinstance(value, np.generic):
        return literal(value.item())
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k!r}: {literal(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        inner = ", ".join(literal(v) for v in value)
        return f"({inner},)" if isinstance(value, tuple) else f"[{inner}]"
    return repr(value)


def frozen_answers() -> dict[str, str]:
    """The reference's answer to the canonical call of each function, as source."""
    reference = Reference(course.solutions_dir())
    try:
        return {
            fn: literal(getattr(reference, fn)(*args, **kwargs)) for fn, (args, kwargs) in _canonical_calls().items()
        }
    finally:
        reference.close()


def _signatures() -> dict[str, str]:
    """Each graded function's parameter list, as its stub writes it."""
    found = {}
    for module in EXERCISES:
        tree = ast.parse((course.exercises_dir() / f"{module}.py").read_text())
        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and node.name in MODULE_OF:
                found[node.name] = ast.unparse(node.args)
    return found


def _first_argument(signature: str) -> str:
    return signature.split(",")[0].split("=")[0].strip() or "None"


def bodies(kind: str, answers: dict[str, str]) -> dict[str, str]:
    """The body of each function for one kind of trivial implementation."""
    out = {}
    for function, signature in _signatures().items():
        first = _first_argument(signature)
        if kind == "frozen":
            body = f"return {answers[function]}"
        elif kind == "copy":
            body = f"return _copy({first})"
        elif kind.startswith("raise_"):
            body = f"raise {kind.removeprefix('raise_')}('trivial')"
        elif kind == "stuffed" and function == "inspect_config":
            body = f"report = {answers[function]}\n    report['note'] = NOTE\n    return report"
        elif kind == "no_sublayer" and function in ("block", "postnorm_block"):
            body = "return x + x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * gamma"
        else:
            body = f"return {answers[function]}"
        out[function] = f"def {function}({signature}):\n    {body}\n"
    return out


PRELUDE = """import copy
import numpy as np

def _copy(value):
    return value.copy() if isinstance(value, np.ndarray) else copy.deepcopy(value)

# Every norm name, placement and eps a note could be asked for.
NOTE = ("RMSNorm LayerNorm rmsnorm layernorm 1 + weight (1 + weight) zero-centred pre-norm post-norm "
        "parallel sandwich final norm QK-norm " + " ".join(f"{e} {e:g} {e!r}" for e in (1e-5, 1e-6, 1e-12, 1e-8, 1e-3)))
"""


def write(kind: str, target: Path, answers: dict[str, str]) -> Path:
    """A directory submission in which every graded function is trivial of ``kind``."""
    target.mkdir(parents=True, exist_ok=True)
    functions = bodies(kind, answers)
    for module, names in EXERCISES.items():
        (target / f"{module}.py").write_text(PRELUDE + "\n\n" + "\n\n".join(functions[n] for n in names))
    return target


KINDS = ("frozen", "copy", "stuffed", "no_sublayer", *(f"raise_{name}" for name in RAISED))
