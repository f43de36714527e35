"""Write the corpus notebooks: complete, correct labs as students write them and editors save them.

    .venv/bin/python tests/corpus/make_notebooks.py            # every notebook
    .venv/bin/python tests/corpus/make_notebooks.py NAME ...   # only these (without .ipynb)

The notebooks are committed; this script is how they were made, kept so that they can be
re-made when the exercises change. Each notebook is described below as its cells (the code a
student typed: the reference functions of ``solutions/``, some rewritten in a student's style,
with the scratch cells, magics, plots and imports real notebooks carry), then **run in a real
kernel on a student's machine** (the ``student`` environment of ``kernels.py``: scipy, pandas,
tqdm, ipywidgets and a stand-in google.colab are there) so that the saved outputs, images and
widget state are the ones the student saw, and finally saved in the shape its editor writes:
JupyterLab 4, VS Code, Colab or the classic Notebook at nbformat 4.0 to 4.4.

The notebooks based on the released assignment are built from a course released on the fly
with ``normlab release`` and ``nbgrader generate_assignment`` (as ``tests/test_nbgrader.py``
does). ``instructor_source.ipynb`` is ``normlab release``'s source notebook, byte for byte.

After changing this file: re-run it, then ``run_in_jupyter.py`` for the ground truth.
"""

from __future__ import annotations

import ast
import copy
import hashlib
import json
import random
import string
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Callable
from pathlib import Path

import nbformat

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT / "tests"))

from kernels import notebook_client  # noqa: E402
from notebooks import cell_index, filled  # noqa: E402

from grader.course import MODULES  # noqa: E402

OUT = HERE / "notebooks"
SOLUTIONS = ROOT / "solutions"
BIN = Path(sys.executable).parent


# --------------------------------------------------------------------------- the student's code


def _function_sources(module: str) -> dict[str, str]:
    """Every top-level function of a reference module, solution markers removed."""
    text = (SOLUTIONS / f"{module}.py").read_text()
    lines = text.splitlines()
    out = {}
    for node in ast.parse(text).body:
        if isinstance(node, ast.FunctionDef):
            body = lines[node.lineno - 1 : node.end_lineno]
            out[node.name] = "\n".join(
                line for line in body if "### BEGIN SOLUTION" not in line and "### END" not in line
            )
    return out


def _without_docstring(source: str) -> str:
    node = ast.parse(source).body[0]
    first = node.body[0]
    if not (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)):
        return source
    lines = source.splitlines()
    return "\n".join(lines[: first.lineno - 1] + lines[first.end_lineno :])


def _constants(module: str) -> str:
    """A reference module's top-level assignments (``WIDTH = 16``...), as a student pastes them."""
    text = (SOLUTIONS / f"{module}.py").read_text()
    lines = text.splitlines()
    return "\n".join(
        "\n".join(lines[node.lineno - 1 : node.end_lineno])
        for node in ast.parse(text).body
        if isinstance(node, ast.Assign)
    )


REF: dict[str, str] = {}
for _module in MODULES:
    REF.update(_function_sources(_module))
CONST: dict[str, str] = {module: _constants(module) for module in MODULES}


def ref(*names: str, doc: bool = False) -> str:
    """The reference functions ``names``, as a student pastes them (docstrings usually gone)."""
    return "\n\n\n".join(REF[n] if doc else _without_docstring(REF[n]) for n in names)


RMS = ("rmsnorm", "rmsnorm_backward")
LN = ("layernorm", "layernorm_backward")
RES = ("block", "postnorm_block")
STACK = (
    "init_params",
    "attention_stub",
    "ffn_stub",
    "_sublayers",
    "token_norm",
    "stack_forward",
    "stack_forward_postnorm",
    "stack_trace",
    "depth_rms",
)
CMP = ("op_counts", "_output_change", "shift_response", "scale_response")
GP = ("sublayer", "sublayer_backward", "lesson_setup", "block_forward", "block_backward", "gradient_path")
PORT = ("forward", "probes", "_gap", "diagnose")
QUANT = ("quantization_setup", "quantize", "quantized_stack", "quantization_report")


def new_modules(doc: bool = False) -> list[str]:
    """The three exercises added after the corpus was first made, one cell's code each (their
    constants first, as the released notebook has them above the functions)."""
    return [
        CONST[module] + "\n\n\n" + ref(*names, doc=doc)
        for module, names in (("gradient_path", GP), ("porting", PORT), ("quantization", QUANT))
    ]


# A student's own versions (each checked against the grader: full marks).
MY_RMSNORM = """DEFAULT_EPS = 1e-6


def _as_compute(x):
    # float16 overflows when squared: do the math in float32
    return x.astype(np.float32) if x.dtype == np.float16 else x


def rmsnorm(x, gamma, eps=DEFAULT_EPS):
    xf = _as_compute(x)
    rms = np.sqrt(np.mean(xf ** 2, axis=-1, keepdims=True) + eps)
    return (xf / rms * gamma).astype(x.dtype)


def rmsnorm_backward(dout, x, gamma, eps=DEFAULT_EPS):
    xf, df = _as_compute(x), _as_compute(dout)
    r = np.sqrt(np.mean(xf ** 2, axis=-1, keepdims=True) + eps)
    xhat = xf / r
    dgamma = np.sum(df * xhat, axis=tuple(range(x.ndim - 1)))
    g = df * gamma
    dx = (g - xhat * np.mean(g * xhat, axis=-1, keepdims=True)) / r
    return dx.astype(x.dtype), dgamma.astype(gamma.dtype)"""

MY_LAYERNORM_WRONG = """def layernorm(x, gamma, beta, eps=1e-5):
    mu = x.mean(axis=-1, keepdims=True)
    var = x.var(axis=-1, keepdims=True, ddof=1)
    return (x - mu) / np.sqrt(var + eps) * gamma + beta"""

MY_LAYERNORM = """def layernorm(x, gamma, beta, eps=1e-5):
    # fixed: biased variance (ddof=0) and float16 handled like rmsnorm
    xf = _as_compute(x)
    mu = xf.mean(axis=-1, keepdims=True)
    var = xf.var(axis=-1, keepdims=True)
    return ((xf - mu) / np.sqrt(var + eps) * gamma + beta).astype(x.dtype)"""

MY_FFN = """def silu(a):
    return a / (1.0 + np.exp(-a))


def ffn_stub(h, w_gate, w_up, w_down):
    return (silu(h @ w_gate) * (h @ w_up)) @ w_down"""

MY_TOKEN_NORM = """def token_norm(v):
    return float(np.sqrt((v.astype(np.float64) ** 2).sum(axis=-1)).mean())"""

MY_OP_COUNTS = """def op_counts(C):
    # RMSNorm: C squares + (C-1 adds + 1 div) + 3 for rstd + C normalize + C gain = 4C + 3
    # LayerNorm: mean C, center C, squares C, mean C, rstd 3, normalize C, gain C, shift C = 7C + 3
    return {
        "rmsnorm": {"flops": 4 * C + 3, "reductions": 1, "params": C},
        "layernorm": {"flops": 7 * C + 3, "reductions": 2, "params": 2 * C},
    }"""

MY_RESPONSES = """def shift_response(x, shift):
    C = x.shape[-1]
    g, b = np.ones(C), np.zeros(C)
    moved = x + shift
    return {
        "layernorm": float(np.abs(layernorm(moved, g, b) - layernorm(x, g, b)).max()),
        "rmsnorm": float(np.abs(rmsnorm(moved, g) - rmsnorm(x, g)).max()),
    }


def scale_response(x, scale):
    C = x.shape[-1]
    g, b = np.ones(C), np.zeros(C)
    moved = x * scale
    return {
        "layernorm": float(np.abs(layernorm(moved, g, b) - layernorm(x, g, b)).max()),
        "rmsnorm": float(np.abs(rmsnorm(moved, g) - rmsnorm(x, g)).max()),
    }"""

SCIPY_FFN = """from scipy.special import expit  # sigmoid; silu(a) = a * sigmoid(a)


def ffn_stub(h, w_gate, w_up, w_down):
    gate = h @ w_gate
    return (gate * expit(gate) * (h @ w_up)) @ w_down"""

DEMO_RMS = """rng = np.random.default_rng(0)
x = rng.standard_normal((2, 4, 8))
g = np.ones(8)
y = rmsnorm(x, g)
print(y.shape, y.dtype)
print("RMS of each output token:", np.sqrt(np.mean(y ** 2, axis=-1)).round(4)[0])"""

DEMO_LN = """y_ln = layernorm(x, np.ones(8), np.zeros(8))
print("mean", y_ln.mean(axis=-1).round(6)[0])
print("var ", y_ln.var(axis=-1).round(4)[0])"""

DEMO_STACK = """params = init_params(n_layers=6, C=16, seed=0)
xs = np.random.default_rng(1).standard_normal((4, 8, 16))
rms = depth_rms(xs, params)
print(np.round(rms, 3))"""

PLOT = """plt.figure(figsize=(3.6, 2.4))
plt.plot(rms[0], marker="o", label="pre-norm")
plt.plot(rms[1], marker="s", label="post-norm")
plt.xlabel("layer")
plt.ylabel("activation RMS")
plt.title("Residual stream RMS by depth")
plt.legend()
plt.tight_layout()
plt.show()"""

DEMO_CONFIGS = """for name in ["llama-3-8b.json", "gemma-2-9b.json", "t5-base.json"]:
    report = inspect_config(f"configs/{name}")
    print(report["model_type"], report["norm_type"], report["eps"], report["n_norms"])"""

DEMO_COMPARE = """print(op_counts(4096))
xc = np.random.default_rng(2).standard_normal((3, 16))
print("shift:", shift_response(xc, 5.0))
print("scale:", scale_response(xc, 3.0))"""

DEMO_GP = """x0, weights, biases = lesson_setup()
grads = {a: gradient_path(x0, weights, biases, a) for a in ARRANGEMENTS}
for arrangement, norms in grads.items():
    print(f"{arrangement:>4}: depth 1 {norms[0]:.2e}, depth 32 {norms[-1]:.2e}")"""

PLOT_GP = """plt.figure(figsize=(3.6, 2.4))
for arrangement, norms in grads.items():
    plt.semilogy(range(1, len(norms) + 1), norms, label=arrangement)
plt.xlabel("depth")
plt.ylabel("|dL/dx|")
plt.title("Gradient reaching the input")
plt.legend()
plt.tight_layout()
plt.show()"""

DEMO_PORT = """rng = np.random.default_rng(3)
port_params = {
    "eps": 1e-6,
    "port_eps": 1e-2,
    "weight_1": 1 + 0.1 * rng.standard_normal(WIDTH),
    "weight_f": 1 + 0.1 * rng.standard_normal(WIDTH),
    "w": rng.standard_normal((WIDTH, WIDTH)) / np.sqrt(WIDTH),
    "b": 0.1 * rng.standard_normal(WIDTH),
}
my_probes = probes()
ref_out = [forward(p, port_params) for p in my_probes]
for label in LABELS:
    print(label, "->", diagnose(my_probes, ref_out, [forward(p, port_params, label) for p in my_probes]))"""

DEMO_QUANT = """xq, wq = quantization_setup()
qreport = quantization_report(xq, wq)
for bits, zeroed, error in zip(BITS, qreport["zeroed"], qreport["error"]):
    print(f"bits={bits}: zeroed {zeroed.mean():.2f}, error after 12 blocks {error[-1]:.3f}")"""

MY_QUANTIZE = """def quantize(w, bits, axis=None, clip=1.0):
    w = np.asarray(w, dtype=np.float64)
    qmax = 2 ** (bits - 1) - 1
    scale = clip * np.abs(w).max(axis=axis, keepdims=True) / qmax
    # an all-zero row has scale 0: leave it at 0 instead of dividing by it
    q = np.divide(w, scale, out=np.zeros_like(w), where=scale > 0)
    return np.clip(np.round(q), -qmax, qmax) * scale"""

ANSWERS = [
    "**Q1.** A residual connection computes `x + F(x)`: each sublayer adds an update to the stream instead "
    "of replacing it, so the gradient has an identity path back to the input and deep stacks still train.",
    "**Q3.** RMSNorm only rescales by the root-mean-square (no mean subtraction, no bias). It is cheaper "
    "(one reduction instead of two) and it is what Llama, Mistral and Qwen use; LayerNorm is the older default.",
    "**Q4.** With pre-norm the identity path is never normalized, so the stream can grow with depth and the "
    "gradient reaches early layers unchanged; post-norm renormalizes the stream after every addition and "
    "needs warm-up to train deep models. My plot above shows the pre-norm RMS growing with depth.",
]


# --------------------------------------------------------------------------- cells


def md(text: str, **meta) -> dict:
    return {"cell_type": "markdown", "source": text, "metadata": meta}


def code(text: str, run: bool = True, **meta) -> dict:
    return {"cell_type": "code", "source": text, "metadata": meta, "run": run}


def _to_node(cell: dict) -> nbformat.NotebookNode:
    if cell["cell_type"] == "markdown":
        node = nbformat.v4.new_markdown_cell(cell["source"], metadata=cell["metadata"])
    else:
        node = nbformat.v4.new_code_cell(cell["source"], metadata=cell["metadata"])
        if not cell.get("run", True):
            node.metadata["corpus_skip"] = True  # never run by the student; removed before saving
    return node


def execute_as_student(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """Run the cells marked to run, in order, in the student environment; keep their outputs."""
    nb = copy.deepcopy(nb)
    with notebook_client(nb, "student", timeout=120) as client:
        for index, cell in enumerate(nb.cells):
            if cell.cell_type == "code" and not cell.metadata.pop("corpus_skip", False):
                client.execute_cell(cell, index)
            elif cell.cell_type == "code":
                cell.execution_count, cell.outputs = None, []
        client.set_widgets_metadata()
    return nb


# --------------------------------------------------------------------------- editors


def _rng(name: str) -> random.Random:
    return random.Random(int(hashlib.sha256(name.encode()).hexdigest()[:12], 16))


def _lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def _source(cell: dict, as_string: bool) -> str | list[str]:
    src = cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
    return src if as_string else _lines(src)


def _outputs(cell: dict, as_string: bool = False) -> list[dict]:
    outs = []
    for out in cell.get("outputs", []):
        out = json.loads(json.dumps(out))
        if not as_string:
            if "text" in out and isinstance(out["text"], str):
                out["text"] = _lines(out["text"])
            for mime, value in out.get("data", {}).items():
                if isinstance(value, str) and (mime.startswith("text/") or mime == "image/svg+xml"):
                    out["data"][mime] = _lines(value)
        outs.append(out)
    return outs


LANGUAGE_INFO = {
    "codemirror_mode": {"name": "ipython", "version": 3},
    "file_extension": ".py",
    "mimetype": "text/x-python",
    "name": "python",
    "nbconvert_exporter": "python",
    "pygments_lexer": "ipython3",
    "version": "3.11.7",
}


def _sorted_dump(nb: dict) -> str:
    return json.dumps(nb, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def jupyterlab(nb: nbformat.NotebookNode, name: str, timing: bool = False) -> str:
    """JupyterLab 4: nbformat 4.5, uuid cell ids, full language_info, widget state kept."""
    rng = _rng(name)
    cells = []
    for i, c in enumerate(nb.cells):
        meta = dict(c.metadata)
        cell = {
            "cell_type": c.cell_type,
            "id": c.get("id") if "nbgrader" in meta else str(uuid.UUID(int=rng.getrandbits(128), version=4)),
            "metadata": meta,
            "source": _source(c, False),
        }
        if c.cell_type == "code":
            cell["execution_count"] = c.execution_count
            cell["outputs"] = _outputs(c)
            if timing and c.execution_count is not None:
                t = f"2026-03-1{1 + i // 40}T14:{(i * 3) % 60:02d}:{(i * 7) % 60:02d}"
                meta["execution"] = {
                    "iopub.execute_input": f"{t}.104521Z",
                    "iopub.status.busy": f"{t}.103987Z",
                    "iopub.status.idle": f"{t}.412370Z",
                    "shell.execute_reply": f"{t}.411856Z",
                }
        cells.append(cell)
    metadata = {
        "kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"},
        "language_info": LANGUAGE_INFO,
    }
    if "widgets" in nb.metadata:
        metadata["widgets"] = nb.metadata["widgets"]
    return _sorted_dump({"cells": cells, "metadata": metadata, "nbformat": 4, "nbformat_minor": 5})


def vscode(nb: nbformat.NotebookNode, name: str, minor: int = 2) -> str:
    """VS Code's Jupyter extension: interpreter hash, its kernelspec, ``metadata: {}`` on new cells."""
    rng = _rng(name)
    cells = []
    for c in nb.cells:
        cell = {"cell_type": c.cell_type, "metadata": dict(c.metadata), "source": _source(c, False)}
        if minor >= 5:
            cell["id"] = (
                c.get("id") if "nbgrader" in c.metadata else "".join(rng.choice("0123456789abcdef") for _ in range(8))
            )
        if c.cell_type == "code":
            cell["execution_count"] = c.execution_count
            cell["outputs"] = _outputs(c)
        cells.append(cell)
    metadata = {
        "kernelspec": {"display_name": ".venv", "language": "python", "name": "python3"},
        "language_info": {**LANGUAGE_INFO, "version": "3.11.7"},
        "orig_nbformat": 4,
        "vscode": {"interpreter": {"hash": hashlib.sha256(name.encode()).hexdigest()}},
    }
    return _sorted_dump({"cells": cells, "metadata": metadata, "nbformat": 4, "nbformat_minor": minor})


def colab(nb: nbformat.NotebookNode, name: str, gpu: bool = True, keep_nbgrader: bool = False) -> str:
    """Google Colab: nbformat 4.0, ids in cell metadata, executionInfo, unsorted keys, indent 2."""
    rng = _rng(name)
    alphabet = string.ascii_letters + string.digits + "-_"
    user = {"displayName": "Ana Souza", "userId": "04312587465531896120"}
    stamp = 1773320000000
    cells = []
    for c in nb.cells:
        meta: dict = {}
        if c.cell_type == "code" and c.outputs:
            meta["colab"] = {"base_uri": "https://localhost:8080/"}
            if any("image/png" in o.get("data", {}) for o in c.outputs):
                meta["colab"].update({"height": 260})
        meta["id"] = "".join(rng.choice(alphabet) for _ in range(12))
        if keep_nbgrader and "nbgrader" in c.metadata:
            meta["nbgrader"] = c.metadata["nbgrader"]
        cell: dict = {"cell_type": c.cell_type, "source": _source(c, False), "metadata": meta}
        if c.cell_type == "code":
            if c.outputs:
                meta["outputId"] = str(uuid.UUID(int=rng.getrandbits(128), version=4))
            if c.execution_count is not None:
                stamp += rng.randint(2000, 90000)
                status = "error" if any(o.output_type == "error" for o in c.outputs) else "ok"
                meta["executionInfo"] = {
                    "status": status,
                    "timestamp": stamp,
                    "user_tz": 180,
                    "elapsed": rng.randint(8, 900),
                    "user": user,
                }
            cell["execution_count"] = c.execution_count
            cell["outputs"] = _outputs(c)
        cells.append(cell)
    metadata: dict = {"colab": {"provenance": [], "toc_visible": True}}
    if gpu:
        metadata["colab"]["gpuType"] = "T4"
    metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
    metadata["language_info"] = {"name": "python"}
    if gpu:
        metadata["accelerator"] = "GPU"
        metadata["gpuClass"] = "standard"
    if "widgets" in nb.metadata:
        metadata["widgets"] = nb.metadata["widgets"]
    return json.dumps(
        {"nbformat": 4, "nbformat_minor": 0, "metadata": metadata, "cells": cells}, indent=2, ensure_ascii=False
    )


def classic(
    nb: nbformat.NotebookNode,
    name: str,
    minor: int,
    as_string: bool | Callable[[int], bool] = False,
    extra_meta: dict | None = None,
    counts: dict[int, int] | None = None,
) -> str:
    """The classic Notebook (4.x, 5.x, 6.x): no cell ids; 4.0/4.1 mark code cells ``collapsed``."""
    cells = []
    for i, c in enumerate(nb.cells):
        string_source = as_string(i) if callable(as_string) else as_string
        meta = {k: v for k, v in c.metadata.items() if k == "nbgrader" and minor >= 3}
        if c.cell_type == "code" and minor <= 1:
            meta["collapsed"] = False
        cell = {"cell_type": c.cell_type, "metadata": meta, "source": _source(c, string_source)}
        if c.cell_type == "code":
            count = c.execution_count
            if counts and count is not None:
                count = counts.get(i, count)
            cell["execution_count"] = count
            cell["outputs"] = _outputs(c, as_string=string_source)
        cells.append(cell)
    version = {0: "3.4.3", 1: "3.5.2", 2: "3.6.5", 3: "3.6.8", 4: "3.7.6"}[minor]
    metadata = {
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {**LANGUAGE_INFO, "version": version},
        **(extra_meta or {}),
    }
    return _sorted_dump({"cells": cells, "metadata": metadata, "nbformat": 4, "nbformat_minor": minor})


# --------------------------------------------------------------------------- the released lab


class Course:
    """A course released on the fly: the instructor's source notebook and the student's copy."""

    def __init__(self) -> None:
        self._tmp = tempfile.TemporaryDirectory(prefix="corpus-course-")
        base = Path(self._tmp.name) / "course"
        env = {"PATH": f"{BIN}:/usr/bin:/bin", "HOME": str(Path.home())}
        subprocess.run(
            [sys.executable, "-m", "grader", "release", "--course-dir", str(base)],
            cwd=ROOT,
            check=True,
            capture_output=True,
        )
        subprocess.run(
            [str(BIN / "nbgrader"), "generate_assignment", "normlab"],
            cwd=base,
            check=True,
            capture_output=True,
            env=env,
        )
        self.source_path = base / "source" / "normlab" / "lab.ipynb"
        self.source = json.loads(self.source_path.read_text())
        self.released = json.loads((base / "release" / "normlab" / "lab.ipynb").read_text())

    def filled(self, overrides: dict[str, str] | None = None) -> nbformat.NotebookNode:
        nb = filled(self.released, self.source, overrides, answers=False)
        answers = [a.split("** ", 1)[1] for a in ANSWERS]
        markdown = [
            c for c in nb["cells"] if c["metadata"].get("nbgrader", {}).get("solution") and c["cell_type"] == "markdown"
        ]
        for number, cell in enumerate(markdown[: len(answers)]):
            cell["source"] = answers[number]
        return nbformat.reads(json.dumps(nb), as_version=4)


def _insert(nb: nbformat.NotebookNode, after_grade_id: str, *cells: dict) -> None:
    at = cell_index(nb, after_grade_id) + 1
    for offset, cell in enumerate(cells):
        nb.cells.insert(at + offset, _to_node(cell))


def _cell(nb: nbformat.NotebookNode, grade_id: str) -> nbformat.NotebookNode:
    return nb.cells[cell_index(nb, grade_id)]


# --------------------------------------------------------------------------- the corpus


def freeform(cells: list[dict]) -> nbformat.NotebookNode:
    return nbformat.v4.new_notebook(cells=[_to_node(c) for c in cells])


def lab_jupyterlab_filled(course: Course) -> str:
    nb = execute_as_student(course.filled())
    return jupyterlab(nb, "lab_jupyterlab_filled")


def lab_jupyterlab_plot_timing(course: Course) -> str:
    nb = course.filled()
    rms_cell = _cell(nb, "rmsnorm-rmsnorm")
    rms_cell.source = "%%time\n" + rms_cell.source
    _insert(
        nb,
        "rmsnorm-rmsnorm_backward",
        code("x = np.random.default_rng(0).standard_normal((32, 128, 512))\ng = np.ones(512)\n%timeit rmsnorm(x, g)"),
    )
    _insert(
        nb,
        "stack-depth_rms",
        code("%matplotlib inline\nimport matplotlib.pyplot as plt"),
        code(DEMO_STACK),
        code(PLOT),
        md("The pre-norm stream grows with depth while post-norm stays at RMS 1 after every layer."),
    )
    return jupyterlab(execute_as_student(nb), "lab_jupyterlab_plot_timing")


def lab_autograded_hidden_tests(course: Course) -> str:
    """nbgrader's autograded copy (hidden tests put back), opened and saved again by the student."""
    nb = course.filled()
    hidden = {
        c["metadata"]["nbgrader"]["grade_id"]: "".join(c["source"])
        for c in course.source["cells"]
        if c["metadata"].get("nbgrader", {}).get("grade_id", "").endswith("-hidden")
    }
    for grade_id, source in hidden.items():
        _cell(nb, grade_id).source = source
        _cell(nb, grade_id).metadata["corpus_skip"] = True
    nb = execute_as_student(nb)
    return jupyterlab(nb, "lab_autograded_hidden_tests")


def lab_vscode_filled(course: Course) -> str:
    nb = course.filled()
    _insert(nb, "rmsnorm-rmsnorm_backward", code("print(rmsnorm(x_test, np.ones(4)))"))
    _insert(
        nb,
        "stack-depth_rms",
        code("import pandas as pd"),
        code(
            "params = init_params()\nx = np.random.default_rng(0).standard_normal((8, 16))\n"
            'pd.DataFrame(stack_trace(x, params), columns=["stream", "update", "sum"]).round(3)'
        ),
    )
    return vscode(execute_as_student(nb), "lab_vscode_filled", minor=5)


def lab_colab_uploaded(course: Course) -> str:
    """The released notebook uploaded to Colab: Colab dropped nbgrader's metadata."""
    nb = course.filled()
    nb.cells.insert(1, _to_node(code("from google.colab import drive\ndrive.mount('/content/drive')")))
    nb.cells.insert(2, _to_node(code("!pip install -q numpy matplotlib")))
    _insert(nb, "inspect_config-inspect_config", code("inspect_config('configs/llama-3-8b.json')"))
    return colab(execute_as_student(nb), "lab_colab_uploaded", gpu=False)


def lab_jupyterlab_moved_cells(course: Course) -> str:
    """Cells moved around, an old wrong version left above the fixed one, a test cell deleted."""
    nb = course.filled()
    block = nb.cells.pop(cell_index(nb, "residual-block"))
    post = nb.cells.pop(cell_index(nb, "residual-postnorm_block"))
    nb.cells.insert(cell_index(nb, "rmsnorm-intro"), post)
    nb.cells.insert(cell_index(nb, "rmsnorm-intro"), block)
    old = _to_node(code("def token_norm(v):\n    return float(np.linalg.norm(v))  # TODO per token?"))
    nb.cells.insert(cell_index(nb, "stack-token_norm"), old)
    nb.cells.pop(cell_index(nb, "stack-hidden"))
    nb = execute_as_student(nb)
    return jupyterlab(nb, "lab_jupyterlab_moved_cells")


def lab_classic_nbformat43(course: Course) -> str:
    """Filled in the classic Notebook 5 with the nbgrader extension: saved as nbformat 4.3, no ids."""
    nb = execute_as_student(course.filled())
    return classic(nb, "lab_classic_nbformat43", minor=3)


def jlab_plots_widgets(course: Course) -> str:
    cells = [
        md("# Lab 7: norms and residuals\n\nMy solutions, one module per cell."),
        code("%matplotlib inline\nimport numpy as np\nimport matplotlib.pyplot as plt"),
        md("## RMSNorm"),
        code(ref(*RMS, doc=True)),
        code(DEMO_RMS),
        md("## LayerNorm"),
        code(ref(*LN)),
        code(DEMO_LN),
        md("## Residual blocks"),
        code(ref(*RES)),
        md("## The stack"),
        code(ref(*STACK)),
        code(DEMO_STACK),
        code(PLOT),
        md("## LayerNorm vs RMSNorm"),
        code(ref(*CMP)),
        code(DEMO_COMPARE),
        md("## Real configs"),
        code("import json\nfrom pathlib import Path\n\n" + ref("inspect_config")),
        code("from tqdm.auto import tqdm"),
        code(
            'reports = {}\nfor path in tqdm(sorted(Path("configs").glob("*.json"))):\n'
            '    reports[path.stem] = inspect_config(path)\nprint(len(reports), "configs")'
        ),
        md("## The gradient path"),
        code(new_modules(doc=True)[0]),
        code(DEMO_GP),
        code(PLOT_GP),
        md("## The porting detective"),
        code(new_modules()[1]),
        code(DEMO_PORT),
        md("## Quantization"),
        code(new_modules()[2]),
        code(DEMO_QUANT),
        md(ANSWERS[2]),
    ]
    return jupyterlab(execute_as_student(freeform(cells)), "jlab_plots_widgets", timing=True)


def jlab_helpers_redefined(course: Course) -> str:
    cells = [
        md("# Norms lab\n\nHelpers first, then the exercises."),
        code("import numpy as np\nimport json\nfrom pathlib import Path"),
        code(MY_RMSNORM),
        code(DEMO_RMS),
        code(MY_LAYERNORM_WRONG),
        code("print(layernorm(x, np.ones(8), np.zeros(8)).var(axis=-1)[0])  # should be 1??"),
        md("The variance is not 1: `np.var` with `ddof=1` divides by C-1. Fixed below."),
        code(MY_LAYERNORM),
        code(ref("layernorm_backward")),
        code(DEMO_LN),
        code(ref(*RES)),
        code(ref("init_params", "attention_stub") + "\n\n\n" + MY_FFN + "\n\n\n" + MY_TOKEN_NORM),
        code(ref("_sublayers", "stack_forward", "stack_forward_postnorm", "stack_trace", "depth_rms")),
        code(DEMO_STACK),
        code(MY_OP_COUNTS + "\n\n\n" + MY_RESPONSES),
        code(DEMO_COMPARE),
        code(ref("inspect_config")),
        code(DEMO_CONFIGS),
        code(new_modules()[0].replace("eps=1e-6", "eps=DEFAULT_EPS")),
        code(DEMO_GP),
        code(new_modules()[1]),
        code(DEMO_PORT),
        code(
            CONST["quantization"]
            + "\n\n\n"
            + ref("quantization_setup")
            + "\n\n\n"
            + MY_QUANTIZE
            + "\n\n\n"
            + ref("quantized_stack", "quantization_report").replace("eps=1e-6", "eps=DEFAULT_EPS")
        ),
        code(DEMO_QUANT),
        md(ANSWERS[0]),
        md(ANSWERS[1]),
    ]
    return jupyterlab(execute_as_student(freeform(cells)), "jlab_helpers_redefined")


def jlab_scratch_errors(course: Course) -> str:
    cells = [
        code("import numpy as np"),
        code(ref(*RMS)),
        code("print(rmsnorm(x, g))"),
        code(
            "x = np.arange(8.0).reshape(2, 4)\ng = np.ones(4)\ny = rmsnorm(x, g)\n"
            "assert np.allclose(y.mean(axis=-1), 0), 'mean should be 0?'"
        ),
        code(ref(*LN)),
        code(ref(*RES) + "\n\nprint(block(x_stream, lambda h: 2 * h, g))"),
        code("ratio = 1 / 0  # how much cheaper is RMSNorm? fill in later\nprint(ratio)"),
        code(ref(*STACK)),
        code("def plot_trace(trace)\n    for row in trace:\n        print(row)"),
        code(ref(*CMP)),
        code("import json\nfrom pathlib import Path\n\n" + ref("inspect_config")),
        code("print(inspect_config('configs/gpt2.json')['note'])"),
        code(new_modules()[0]),
        code("x0, weights, biases = lesson_setup()\nprint(gradient_path(x0, weights, biases, 'prenorm')[-1])"),
        code(new_modules()[1]),
        code(new_modules()[2]),
    ]
    return jupyterlab(execute_as_student(freeform(cells)), "jlab_scratch_errors")


def jlab_cell_magics(course: Course) -> str:
    cells = [
        code("import numpy as np"),
        code("%%time\n" + ref(*RMS)),
        code("%%capture\n" + ref(*LN) + '\n\nprint("layernorm loaded")'),
        code("x = np.random.default_rng(0).standard_normal((64, 256))\ng = np.ones(256)\n%timeit rmsnorm(x, g)"),
        code("%%timeit -n 3 -r 2\n# is a float32 version faster?\n" + ref("rmsnorm_backward")),
        code(ref(*RES)),
        code(ref(*STACK)),
        code(ref(*CMP)),
        code("%%bash\nls configs | head -3\nwc -c configs/gpt2.json"),
        code("%%bash\nnvidia-smi --query-gpu=name --format=csv"),
        code("import json\nfrom pathlib import Path\n\n" + ref("inspect_config")),
        code("%%time\n" + new_modules()[0] + "\n\n\n" + DEMO_GP),
        code(new_modules()[1]),
        code("%%capture\n" + new_modules()[2] + "\n\n\n" + DEMO_QUANT),
        code("%%writefile notes.txt\nllama-3-8b: rmsnorm, eps 1e-05, 65 norms\n"),
        code("%%html\n<b>Done</b> with the lab."),
    ]
    return jupyterlab(execute_as_student(freeform(cells)), "jlab_cell_magics")


def jlab_display_richtext(course: Course) -> str:
    """``display`` (a kernel's builtin) and ``IPython.display`` in cells that also define graded
    functions: every kernel has both, so the definitions count."""
    cells = [
        code("import numpy as np\ndisplay('RMSNorm first')\n" + ref(*RMS)),
        code(
            "from IPython.display import Markdown, display\n\n"
            + ref(*LN)
            + "\n\ndisplay(Markdown('**LayerNorm** done'))"
        ),
        code("from IPython import display as ipd\n\n" + ref(*RES) + "\n\nipd.clear_output(wait=True)"),
        code(ref(*STACK)),
        code("import IPython.display\n" + ref(*CMP) + "\nIPython.display.display(op_counts(4096))"),
        code("import json\nfrom pathlib import Path\n\n" + ref("inspect_config")),
        code(new_modules()[0] + "\n\ndisplay(Markdown('**gradient path** done'))"),
        code(new_modules()[1] + "\n\nipd.display(LABELS)"),
        code(new_modules()[2] + "\n\nIPython.display.display(quantize(np.linspace(-1, 1, 5), 2))"),
    ]
    return jupyterlab(execute_as_student(freeform(cells)), "jlab_display_richtext")


def jlab_timeit_defines_rmsnorm(course: Course) -> str:
    """The only rmsnorm is defined under %%timeit, which runs its body in a function of its own."""
    cells = [
        code("import numpy as np"),
        code("%%timeit\n" + ref("rmsnorm")),
        code(ref("rmsnorm_backward")),
        code(ref(*LN)),
        code(ref(*RES)),
        code(ref(*STACK)),
        code(ref(*CMP)),
        code("import json\nfrom pathlib import Path\n\n" + ref("inspect_config")),
        *(code(source) for source in new_modules()),
        code(DEMO_RMS),
    ]
    return jupyterlab(execute_as_student(freeform(cells)), "jlab_timeit_defines_rmsnorm")


def jlab_main_block_pip(course: Course) -> str:
    cells = [
        code("!pip install numpy"),
        code("%pip install matplotlib"),
        code("import numpy as np\nfrom scipy.special import expit  # for silu later\nimport matplotlib.pyplot as plt"),
        code(ref(*RMS)),
        code(ref(*LN)),
        code(ref(*RES)),
        code(ref(*STACK)),
        code(ref(*CMP)),
        code("import json\nfrom pathlib import Path\n\n" + ref("inspect_config")),
        *(code(source) for source in new_modules()),
        code(
            'if __name__ == "__main__":\n'
            + "\n".join("    " + line for line in (DEMO_RMS + "\n" + DEMO_COMPARE + "\n" + DEMO_QUANT).splitlines())
        ),
        code(DEMO_STACK + "\n" + PLOT),
    ]
    return jupyterlab(execute_as_student(freeform(cells)), "jlab_main_block_pip")


def jlab_writefile_module(course: Course) -> str:
    cells = [
        md("I keep the norms in a module so that I can import them from my project later."),
        code("%%writefile norms_util.py\nimport numpy as np\n\n\n" + ref(*RMS) + "\n\n\n" + ref(*LN) + "\n"),
        code("import numpy as np\nfrom norms_util import rmsnorm, rmsnorm_backward, layernorm, layernorm_backward"),
        code(DEMO_RMS),
        code(ref(*RES)),
        code(ref(*STACK)),
        code(ref(*CMP)),
        code("import json\nfrom pathlib import Path\n\n" + ref("inspect_config")),
        code(new_modules()[0]),
        code(new_modules()[1]),
        md("The quantization experiment goes in a module too; it uses my RMSNorm from `norms_util`."),
        code(
            "%%writefile quant_util.py\nimport numpy as np\nfrom norms_util import rmsnorm\n\n\n"
            + new_modules()[2]
            + "\n"
        ),
        code("from quant_util import BITS, quantization_setup, quantize, quantized_stack, quantization_report"),
        code(DEMO_QUANT),
    ]
    return jupyterlab(execute_as_student(freeform(cells)), "jlab_writefile_module")


def vscode_freeform(course: Course) -> str:
    cells = [
        code("import numpy as np\nimport pandas as pd\n%matplotlib inline\nimport matplotlib.pyplot as plt"),
        code(ref(*RMS)),
        code(DEMO_RMS),
        code(ref(*LN)),
        code(ref(*RES)),
        code(ref(*STACK)),
        code(DEMO_STACK + "\n" + PLOT),
        code("pd.DataFrame(stack_trace(xs, params), columns=['stream', 'update', 'sum']).head()"),
        code(ref(*CMP)),
        code("import json\nfrom pathlib import Path\n\n" + ref("inspect_config")),
        code(DEMO_CONFIGS),
        code(new_modules()[0]),
        code(DEMO_GP + "\n" + PLOT_GP),
        code(new_modules()[1]),
        code(new_modules()[2]),
        code("pd.DataFrame(quantization_report(*quantization_setup())['error'], index=BITS).round(3)"),
        code("", run=False),
    ]
    return vscode(execute_as_student(freeform(cells)), "vscode_freeform", minor=2)


def vscode_unused_scipy(course: Course) -> str:
    """Converted from a .py file with VS Code's '# %%' cells; some cells never run."""
    cells = [
        code("# %%\nimport numpy as np\nimport json\nfrom pathlib import Path"),
        code("# %%\nfrom scipy.special import expit"),
        code("# %% RMSNorm\n" + ref(*RMS)),
        code("# %% LayerNorm\n" + ref(*LN)),
        code("# %% residual\n" + ref(*RES)),
        code("# %% stack\n" + ref(*STACK)),
        code("# %% compare\n" + ref(*CMP)),
        code("# %% configs\n" + ref("inspect_config")),
        code("# %% gradient path\n" + new_modules()[0]),
        code("# %% porting\n" + new_modules()[1]),
        code("# %% quantization\n" + new_modules()[2]),
        code("# %%\n" + DEMO_CONFIGS, run=False),
        code("# %%\n" + DEMO_COMPARE, run=False),
    ]
    return vscode(execute_as_student(freeform(cells)), "vscode_unused_scipy", minor=5)


def colab_drive_mount(course: Course) -> str:
    cells = [
        md("# Lab: LayerNorm, RMSNorm, residuals\n\n[Open in Colab](https://colab.research.google.com/)"),
        code("from google.colab import drive\ndrive.mount('/content/drive')"),
        code("!ls configs | head -5"),
        code("import numpy as np\n%matplotlib inline\nimport matplotlib.pyplot as plt"),
        code("%%time\n" + ref(*RMS)),
        code(ref(*LN)),
        code(ref(*RES)),
        code(ref(*STACK)),
        code(DEMO_STACK),
        code(PLOT),
        code(ref(*CMP)),
        code("import json\nfrom pathlib import Path\n\n" + ref("inspect_config")),
        code(DEMO_CONFIGS),
        code(new_modules()[0]),
        code(DEMO_GP),
        code(PLOT_GP),
        code(new_modules()[1]),
        code("%%time\n" + new_modules()[2]),
        code(DEMO_QUANT),
    ]
    return colab(execute_as_student(freeform(cells)), "colab_drive_mount")


def colab_scipy_silu(course: Course) -> str:
    """ffn_stub uses scipy, which Colab has and the grading environment does not."""
    cells = [
        code("import numpy as np\nimport pandas as pd\nfrom tqdm.auto import tqdm"),
        code(ref(*RMS)),
        code(ref(*LN)),
        code(ref(*RES)),
        code(ref("init_params", "attention_stub")),
        code(SCIPY_FFN),
        code(ref("_sublayers", "token_norm", "stack_forward", "stack_forward_postnorm", "stack_trace", "depth_rms")),
        code(DEMO_STACK),
        code(ref(*CMP)),
        code("import json\nfrom pathlib import Path\n\n" + ref("inspect_config")),
        code(
            'rows = [inspect_config(p) for p in tqdm(sorted(Path("configs").glob("*.json")))]\n'
            'pd.DataFrame(rows)[["model_type", "norm_type", "eps", "placement", "n_norms"]]'
        ),
        *(code(source) for source in new_modules()),
        code(DEMO_QUANT),
    ]
    return colab(execute_as_student(freeform(cells)), "colab_scipy_silu")


def colab_capture_pip(course: Course) -> str:
    cells = [
        code("%%capture\n!pip install numpy matplotlib"),
        code("%load_ext autoreload\n%autoreload 2"),
        code("import numpy as np"),
        code(ref(*RMS, doc=True)),
        code("%%capture\n" + ref(*LN) + "\n" + DEMO_LN.replace("x,", "np.ones((2, 8)),")),
        code(ref(*RES)),
        code(ref(*STACK)),
        code(ref(*CMP)),
        code("import json\nfrom pathlib import Path\n\n" + ref("inspect_config")),
        code(new_modules()[0]),
        code(new_modules()[1]),
        code("%%capture\n" + new_modules()[2] + "\n" + DEMO_QUANT),
        code("from google.colab import files\n# files.download('lab.ipynb')"),
        md(ANSWERS[0]),
        md(ANSWERS[2]),
    ]
    return colab(execute_as_student(freeform(cells)), "colab_capture_pip", gpu=False)


def classic_nbformat40_strings(course: Course) -> str:
    cells = [
        md("Lab 7 -- norms"),
        code("import numpy as np\nimport json\nfrom pathlib import Path"),
        code(ref(*RMS)),
        code(ref(*LN)),
        code(ref(*RES)),
        code(ref(*STACK)),
        code(ref(*CMP)),
        code(ref("inspect_config")),
        *(code(source) for source in new_modules()),
        code(DEMO_RMS),
    ]
    return classic(execute_as_student(freeform(cells)), "classic_nbformat40_strings", minor=0, as_string=True)


def classic_nbformat41_py2_print(course: Course) -> str:
    cells = [
        code("%matplotlib inline\nimport numpy as np\nimport matplotlib.pyplot as plt"),
        code(ref(*RMS)),
        code('print "rmsnorm ok"'),
        code(ref(*LN)),
        code(ref(*RES)),
        code(ref(*STACK)),
        code(DEMO_STACK + "\n" + PLOT),
        code(ref(*CMP)),
        code("import json\nfrom pathlib import Path\n\n" + ref("inspect_config")),
        code(new_modules()[0]),
        code(DEMO_GP + "\n" + PLOT_GP),
        code(new_modules()[1]),
        code(new_modules()[2]),
    ]
    return classic(execute_as_student(freeform(cells)), "classic_nbformat41_py2_print", minor=1)


def classic_nbformat44_nbextensions(course: Course) -> str:
    cells = [
        md('# Table of Contents\n<p><div class="lev1 toc-item"><a href="#RMSNorm">RMSNorm</a></div>'),
        code("%load_ext autoreload\n%autoreload 2\nimport numpy as np"),
        md("# RMSNorm"),
        code(ref(*RMS)),
        code(ref(*LN)),
        code(ref(*RES)),
        code(DEMO_RMS),
        code(ref(*STACK)),
        code(ref(*CMP)),
        code("import json\nfrom pathlib import Path\n\n" + ref("inspect_config")),
        code(DEMO_COMPARE),
        md("# Gradient path, porting, quantization"),
        *(code(source) for source in new_modules()),
    ]
    extra = {
        "toc": {
            "base_numbering": 1,
            "nav_menu": {},
            "number_sections": True,
            "sideBar": True,
            "skip_h1_title": False,
            "title_cell": "Table of Contents",
            "title_sidebar": "Contents",
            "toc_cell": True,
            "toc_position": {},
            "toc_section_display": True,
            "toc_window_display": False,
        },
        "varInspector": {
            "cols": {"lenName": 16, "lenType": 16, "lenVar": 40},
            "kernels_config": {},
            "types_to_exclude": ["module", "function", "builtin_function_or_method"],
            "window_display": False,
        },
    }
    counts = {3: 14, 4: 9, 5: 10, 6: 15, 7: 11, 8: 12, 9: 13, 10: 16, 12: 19, 13: 17, 14: 18}
    return classic(
        execute_as_student(freeform(cells)),
        "classic_nbformat44_nbextensions",
        minor=4,
        as_string=lambda i: i % 3 == 0,
        extra_meta=extra,
        counts=counts,
    )


def _repl(source: str, first: str = ">>> ", more: str = "... ") -> str:
    """``source`` as pasted from a Python (or IPython) prompt: each top-level statement after
    ``first``, the lines continuing it after ``more``."""
    lines = []
    for line in source.splitlines():
        starts = bool(line) and not line[0].isspace() and not line.startswith((")", "]", "}"))
        lines.append((first if starts else more) + line if line else more.rstrip())
    return "\n".join(lines) + "\n"


def jlab_pasted_prompts_and_escapes(course: Course) -> str:
    """Code pasted from a Python prompt (``>>> ``/``... ``) and from IPython's (``In [3]: ``/
    ``...: ``), IPython's other escapes (``?obj`` before a definition, ``/f x``, ``,f a b``), and
    a doctest inside a docstring: IPython strips the prompts and turns the escapes into calls."""
    cells = [
        code("import numpy as np\n?np.sqrt\n" + ref(*RMS)),
        code(_repl(ref(*LN))),
        code(_repl(ref(*RES), "In [7]: ", "   ...: ")),
        code("??np.linalg.norm\n" + ref(*STACK) + "\n/print token_norm(np.ones(3))"),
        code(ref(*CMP, doc=True).replace('"""', '"""\n    >>> op_counts(4)["rmsnorm"]["params"]\n    4\n', 1)),
        code("import json\nfrom pathlib import Path\n\n" + ref("inspect_config") + "\n,print done with the lab"),
        code(_repl(new_modules()[0])),
        code(_repl(new_modules()[1], "In [12]: ", "    ...: ")),
        code("?quantize\n" + new_modules()[2] + "\n/print quantize(np.ones(3),2)"),
    ]
    return jupyterlab(execute_as_student(freeform(cells)), "jlab_pasted_prompts_and_escapes")


def instructor_source(course: Course) -> str:
    return course.source_path.read_text()


CORPUS: dict[str, Callable[[Course], str]] = {
    f.__name__: f
    for f in (
        lab_jupyterlab_filled,
        lab_jupyterlab_plot_timing,
        lab_autograded_hidden_tests,
        lab_vscode_filled,
        lab_colab_uploaded,
        lab_jupyterlab_moved_cells,
        lab_classic_nbformat43,
        instructor_source,
        jlab_plots_widgets,
        jlab_helpers_redefined,
        jlab_scratch_errors,
        jlab_cell_magics,
        jlab_timeit_defines_rmsnorm,
        jlab_display_richtext,
        jlab_main_block_pip,
        jlab_writefile_module,
        jlab_pasted_prompts_and_escapes,
        vscode_freeform,
        vscode_unused_scipy,
        colab_drive_mount,
        colab_scipy_silu,
        colab_capture_pip,
        classic_nbformat40_strings,
        classic_nbformat41_py2_print,
        classic_nbformat44_nbextensions,
    )
}


def main(argv: list[str]) -> int:
    names = [a.removesuffix(".ipynb") for a in argv] or list(CORPUS)
    course = Course()
    OUT.mkdir(parents=True, exist_ok=True)
    for name in names:
        print(f"writing {name}.ipynb ...", file=sys.stderr)
        text = CORPUS[name](course)
        nbformat.validate(nbformat.reads(text, as_version=nbformat.NO_CONVERT))
        (OUT / f"{name}.ipynb").write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
