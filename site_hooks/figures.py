"""The site's figures, computed from the reference solutions in ``solutions/`` when the site is built.

No number in a figure is typed by hand: each figure runs the reference code on fixed inputs, and
the same computation prints its table on the command line::

    python site_hooks/figures.py                 # list the figures
    python site_hooks/figures.py depth-rms       # the numbers behind one figure

The MkDocs hook (``normlab_site.py``) draws every figure of :data:`FIGURES` as SVG, once per
language, and puts its table on the page where the page asks for it.

Adding a figure (for example gradient norms through depth, once the lab has a gradient
experiment in ``solutions/``): write a ``compute`` function that returns a :class:`Table` and a
``draw`` function that plots it on a matplotlib ``Axes`` pair, add a :class:`Figure` to
:data:`FIGURES`, and embed ``figures/<name>.svg`` on a page in both languages.
"""

from __future__ import annotations

import importlib
import io
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
SOLUTIONS = ROOT / "solutions"
LANGUAGES = ("en", "pt-BR")

# The lab's stub stack, fixed inputs: a batch of 4 sequences of 8 tokens, width 16.
WIDTH = 16
PARAMS_SEED = 0
INPUT_SEED = 1
INPUT_SHAPE = (4, 8, WIDTH)


@dataclass(frozen=True)
class Table:
    """A figure's numbers: one header per language and float rows."""

    headers: dict[str, tuple[str, ...]]
    """Language -> column headers."""
    rows: tuple[tuple[float, ...], ...]
    formats: tuple[str, ...]
    """One ``format()`` spec per column (``"d"`` prints an integer)."""

    def cells(self) -> list[list[str]]:
        def cell(value: float, spec: str) -> str:
            return format(int(value) if spec == "d" else value, spec)

        return [[cell(v, f) for v, f in zip(row, self.formats, strict=True)] for row in self.rows]

    def text(self, lang: str = "en") -> str:
        """Aligned plain text, as the command line prints it."""
        lines = [list(self.headers[lang]), *self.cells()]
        widths = [max(len(line[i]) for line in lines) for i in range(len(lines[0]))]
        return "\n".join("  ".join(cell.rjust(w) for cell, w in zip(line, widths, strict=True)) for line in lines)

    def markdown(self, lang: str) -> str:
        """A Markdown table, for the page."""
        head = self.headers[lang]
        out = ["| " + " | ".join(head) + " |", "|" + " --: |" * len(head)]
        out += ["| " + " | ".join(row) + " |" for row in self.cells()]
        return "\n".join(out)


@dataclass(frozen=True)
class Figure:
    """One figure of the site."""

    name: str
    """File name (``figures/<name>.svg``) and command-line name."""
    summary: str
    """One line for ``figures.py`` without arguments."""
    compute: Callable[[], Table]
    draw: Callable[[Table, object, str], None]
    """Draws the table on a matplotlib Figure, with labels in the given language."""


# --- the reference ----------------------------------------------------------------------------


def reference(module: str) -> ModuleType:
    """A module of ``solutions/``, imported without leaving its plain names in ``sys.modules``.

    The solution modules import each other by plain name (``from rmsnorm import rmsnorm``), so
    ``solutions/`` goes on ``sys.path`` for the import only; afterwards the names ``rmsnorm``,
    ``stack``... are taken out again, so nothing else in the MkDocs process picks them up.
    """
    saved_path = list(sys.path)
    names = [p.stem for p in SOLUTIONS.glob("*.py")]
    saved = {n: sys.modules.pop(n) for n in names if n in sys.modules}
    try:
        sys.path.insert(0, str(SOLUTIONS))
        return importlib.import_module(module)
    finally:
        sys.path[:] = saved_path
        for n in names:
            sys.modules.pop(n, None)
        sys.modules.update(saved)


def lab_inputs(n_layers: int) -> tuple[np.ndarray, dict]:
    stack = reference("stack")
    params = stack.init_params(n_layers=n_layers, C=WIDTH, seed=PARAMS_SEED)
    x = np.random.default_rng(INPUT_SEED).standard_normal(INPUT_SHAPE)  # (B, T, C)
    return x, params


# --- activation RMS through depth ---------------------------------------------------------------

DEPTH_LAYERS = 24  # the lab's stack is 6 layers deep; 24 shows the trend more clearly


def depth_rms_table() -> Table:
    x, params = lab_inputs(DEPTH_LAYERS)
    rms = reference("stack").depth_rms(x, params)  # (2, L + 1)
    return Table(
        headers={
            "en": ("layer", "pre-norm RMS", "post-norm RMS"),
            "pt-BR": ("camada", "RMS pre-norm", "RMS post-norm"),
        },
        rows=tuple((layer, pre, post) for layer, (pre, post) in enumerate(rms.T)),
        formats=("d", ".3f", ".3f"),
    )


def draw_depth_rms(table: Table, fig, lang: str) -> None:
    layer, pre, post = np.array(table.rows).T
    ax = fig.subplots()
    ax.plot(layer, pre, marker="o", markersize=3, label=table.headers[lang][1])
    ax.plot(layer, post, marker="s", markersize=3, label=table.headers[lang][2])
    ax.set_xlabel({"en": "layer (0 = the input)", "pt-BR": "camada (0 = a entrada)"}[lang])
    ax.set_ylabel({"en": "RMS of the stream", "pt-BR": "RMS do stream"}[lang])
    ax.set_ylim(bottom=0)
    ax.legend()


# --- the three-norms trace ----------------------------------------------------------------------

TRACE_LAYERS = 6  # the lab's stack


def stack_trace_table() -> Table:
    x, params = lab_inputs(TRACE_LAYERS)
    stack = reference("stack")
    pre = stack.stack_trace(x, params, placement="pre")  # (2L, 3)
    post = stack.stack_trace(x, params, placement="post")  # (2L, 3)
    return Table(
        headers={
            "en": ("sublayer", "pre ‖x‖", "pre ‖F‖", "pre ‖x+F‖", "post ‖x‖", "post ‖F‖", "post ‖x+F‖"),
            "pt-BR": ("subcamada", "pre ‖x‖", "pre ‖F‖", "pre ‖x+F‖", "post ‖x‖", "post ‖F‖", "post ‖x+F‖"),
        },
        rows=tuple((i + 1, *a, *b) for i, (a, b) in enumerate(zip(pre, post, strict=True))),
        formats=("d", ".3f", ".3f", ".3f", ".3f", ".3f", ".3f"),
    )


def draw_stack_trace(table: Table, fig, lang: str) -> None:
    data = np.array(table.rows)
    sublayer = data[:, 0]
    names = {
        "en": ("stream it reads ‖x‖", "its update ‖F(·)‖", "the sum ‖x + F(·)‖"),
        "pt-BR": ("stream que ela lê ‖x‖", "sua atualização ‖F(·)‖", "a soma ‖x + F(·)‖"),
    }[lang]
    axes = fig.subplots(1, 2, sharey=True)
    for ax, first, title in zip(axes, (1, 4), ("pre-norm", "post-norm"), strict=True):
        for column, name, marker in zip(range(first, first + 3), names, "o^s", strict=True):
            ax.plot(sublayer, data[:, column], marker=marker, markersize=3, label=name)
        # A vector whose RMS is 1 has an L2 norm of sqrt(C): the post-norm stream sits on this line.
        ax.axhline(np.sqrt(WIDTH), color="grey", linestyle=":", linewidth=1)
        ax.text(sublayer[-1], np.sqrt(WIDTH) + 0.15, "√C = 4", ha="right", va="bottom", color="grey")
        ax.set_title(title)
        ax.set_xlabel({"en": "sublayer (odd: mixer, even: FFN)", "pt-BR": "subcamada (ímpar: mixer, par: FFN)"}[lang])
        ax.set_xticks(sublayer)
    axes[0].set_ylabel({"en": "L2 norm per token (mean)", "pt-BR": "norma L2 por token (média)"}[lang])
    axes[0].set_ylim(bottom=0)
    axes[0].legend(loc="upper left", fontsize="small")


# --- epsilon inside or outside the root ---------------------------------------------------------

EPS = 1e-6  # the lesson's rms_norm_eps
INPUT_RMS = tuple(10.0**k for k in np.arange(0.0, -8.5, -0.5))


def eps_placement_table() -> Table:
    rmsnorm = reference("rmsnorm").rmsnorm
    direction = np.random.default_rng(INPUT_SEED).standard_normal(WIDTH)  # (C,)
    direction /= np.sqrt(np.mean(direction**2))  # RMS exactly 1: the scale below is the input's RMS
    gamma = np.ones(WIDTH)
    rows = []
    for scale in INPUT_RMS:
        x = scale * direction  # (C,)
        inside = rmsnorm(x, gamma, EPS)  # the reference: sqrt(mean(x^2) + eps)
        outside = x / (np.sqrt(np.mean(x**2)) + EPS)  # the porting mistake: sqrt(mean(x^2)) + eps
        rows.append((scale, np.sqrt(np.mean(inside**2)), np.sqrt(np.mean(outside**2))))
    return Table(
        headers={
            "en": ("input RMS", "output RMS, eps inside", "output RMS, eps outside"),
            "pt-BR": ("RMS da entrada", "RMS da saída, eps dentro", "RMS da saída, eps fora"),
        },
        rows=tuple(rows),
        formats=(".1e", ".4f", ".4f"),
    )


def draw_eps_placement(table: Table, fig, lang: str) -> None:
    scale, inside, outside = np.array(table.rows).T
    ax = fig.subplots()
    ax.semilogx(scale, inside, marker="o", markersize=3, label=table.headers[lang][1])
    ax.semilogx(scale, outside, marker="s", markersize=3, label=table.headers[lang][2])
    for value, text in ((np.sqrt(EPS), "√ε"), (EPS, "ε")):
        ax.axvline(value, color="grey", linestyle=":", linewidth=1)
        ax.text(value * 1.3, 0.05, text, color="grey")
    ax.invert_xaxis()  # read left to right as the input shrinks
    ax.set_xlabel({"en": f"RMS of the input (ε = {EPS:g})", "pt-BR": f"RMS da entrada (ε = {EPS:g})"}[lang])
    ax.set_ylabel({"en": "RMS of RMSNorm's output", "pt-BR": "RMS da saída do RMSNorm"}[lang])
    ax.set_ylim(0, 1.1)
    ax.legend(loc="lower left")



# --- the gradient path (lab goal (a)) -----------------------------------------------------------

GRAD_ARRANGEMENTS = ("none", "post", "pre")


def grad_depth_table() -> Table:
    """The gradient norm reaching the input per depth, on the documented setup of
    ``solutions/gradient_path.py`` (``lesson_setup()``: 32 blocks of width 32)."""
    module = reference("gradient_path")
    x, weights, biases = module.lesson_setup()
    paths = [module.gradient_path(x, weights, biases, a) for a in GRAD_ARRANGEMENTS]
    return Table(
        headers={
            "en": ("depth", "no residual", "post-norm", "pre-norm"),
            "pt-BR": ("profundidade", "sem residual", "post-norm", "pre-norm"),
        },
        rows=tuple((depth + 1, *values) for depth, values in enumerate(zip(*paths, strict=True))),
        formats=("d", ".2e", ".3f", ".3f"),
    )


def draw_grad_depth(table: Table, fig, lang: str) -> None:
    depth, *paths = np.array(table.rows).T
    ax = fig.subplots()
    for values, header, marker in zip(paths, table.headers[lang][1:], ("^", "s", "o"), strict=True):
        ax.semilogy(depth, values, marker=marker, markersize=3, label=header)
    ax.set_xlabel({"en": "depth (blocks)", "pt-BR": "profundidade (blocos)"}[lang])
    ax.set_ylabel({"en": "gradient norm at the input", "pt-BR": "norma do gradiente na entrada"}[lang])
    ax.legend()


# --- the registry -------------------------------------------------------------------------------

FIGURES = {
    f.name: f
    for f in (
        Figure(
            "depth-rms",
            "activation RMS after each layer, pre-norm vs post-norm",
            depth_rms_table,
            draw_depth_rms,
        ),
        Figure(
            "stack-trace",
            "the three norms of every sublayer, pre-norm and post-norm",
            stack_trace_table,
            draw_stack_trace,
        ),
        Figure(
            "eps-placement",
            "RMSNorm's output as the input shrinks, eps inside vs outside",
            eps_placement_table,
            draw_eps_placement,
        ),
        Figure(
            "grad-depth",
            "the gradient norm reaching the input per depth: no residual, post-norm, pre-norm",
            grad_depth_table,
            draw_grad_depth,
        ),
    )
}


def svg(figure: Figure, table: Table, lang: str) -> bytes:
    """The figure as a self-contained, reproducible SVG (no date, fixed element ids)."""
    import matplotlib

    matplotlib.use("Agg")  # no display: the build runs headless
    from matplotlib.figure import Figure as MplFigure

    with matplotlib.rc_context(
        {
            "svg.hashsalt": figure.name,  # fixed ids, so the same numbers give the same bytes
            "svg.fonttype": "none",  # text stays text: small, sharp and in the page's font
            "font.family": "sans-serif",
            "font.size": 11,
            "axes.grid": True,
            "grid.alpha": 0.3,
        }
    ):
        fig = MplFigure(figsize=(7.5, 4.2), layout="constrained")
        figure.draw(table, fig, lang)
        out = io.BytesIO()
        fig.savefig(out, format="svg", metadata={"Date": None, "Creator": None})
    return out.getvalue()


def main(argv: list[str]) -> int:
    if not argv:
        for f in FIGURES.values():
            print(f"{f.name:15} {f.summary}")
        return 0
    if argv[0] not in FIGURES:
        print(f"unknown figure {argv[0]!r}; one of: {', '.join(FIGURES)}", file=sys.stderr)
        return 2
    print(FIGURES[argv[0]].compute().text())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
