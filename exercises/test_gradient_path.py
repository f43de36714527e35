"""Public tests for gradient_path.py. Run them with ``normlab check`` (or ``pytest`` in this folder)."""

import numpy as np


def _setup(seed, n_layers, C, T=3, scale=0.5, bias=1.0):
    rng = np.random.default_rng(seed)
    weights = rng.standard_normal((n_layers, C, C)) * (scale / np.sqrt(C))
    return rng.standard_normal((T, C)), weights, rng.standard_normal((n_layers, C)) * bias


def test_block_forward_in_each_arrangement(student, expected):
    """One block as "none" (F(x)), "post" (rmsnorm(x + F(x))) and "pre" (x + F(rmsnorm(x))) on (3, 6);
    the provided helpers (lesson_setup, sublayer, sublayer_backward) are unchanged."""
    shapes = [np.shape(a) for a in student.lesson_setup(n_layers=3, C=4, T=2)]
    expected.require(shapes == [(2, 4), (3, 4, 4), (3, 4)], "public.setup_changed", function="lesson_setup")
    x, weights, biases = _setup(7, 1, 6)
    expected.check(student.sublayer, x, weights[0], biases[0], what="sublayer(x, w, b)")
    expected.check(student.sublayer_backward, x, x, weights[0], biases[0], what="sublayer_backward(dy, x, w, b)")
    for arrangement in ("none", "post", "pre"):
        expected.check(
            student.block_forward,
            x,
            weights[0],
            biases[0],
            arrangement,
            what=f"block_forward(x, w, b, {arrangement!r})",
        )


def test_block_backward_in_each_arrangement(student, expected):
    """The gradient of one block with respect to its input, in each arrangement, on (3, 6)."""
    x, weights, biases = _setup(8, 1, 6)
    dout = np.random.default_rng(9).standard_normal(x.shape)
    for arrangement in ("none", "post", "pre"):
        expected.check(
            student.block_backward,
            dout,
            x,
            weights[0],
            biases[0],
            arrangement,
            what=f"block_backward(dout, x, w, b, {arrangement!r})",
        )


def test_gradient_path_of_a_small_stack(student, expected):
    """gradient_path on a stack of 6 blocks of width 8: one norm per depth, in each arrangement."""
    x, weights, biases = _setup(10, 6, 8)
    for arrangement in ("none", "post", "pre"):
        norms = expected.check(
            student.gradient_path, x, weights, biases, arrangement, what=f"gradient_path(x, w, b, {arrangement!r})"
        )
        expected.require(np.shape(norms) == (6,), "public.norms_per_depth", shape=str(np.shape(norms)))
