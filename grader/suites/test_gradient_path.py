"""Hidden tests for gradient_path.py. Docstrings are what the student sees; inputs stay here."""

from typing import Any

import numpy as np
import pytest

from grader.checks import TOLERANCES, deferred, expect_array, expect_attempt, expect_raises, expect_untouched
from grader.proxy import StudentProxy
from grader.reference import Reference
from grader.suites import _mistakes as m

EPS = 1e-6
ARRANGEMENTS = ("none", "post", "pre")
TOL = TOLERANCES["algorithm"]  # dozens of blocks accumulate rounding differently per order


def _setup(
    rng: np.random.Generator, n_layers: int, C: int, shape: tuple[int, ...], scale: float = 0.5, bias: float = 1.0
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    weights = rng.standard_normal((n_layers, C, C)) * (scale / np.sqrt(C))
    return rng.standard_normal((*shape, C)), weights, rng.standard_normal((n_layers, C)) * bias


def lesson_setup() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """solutions/gradient_path.py's documented setup, drawn the same way (a test keeps them equal)."""
    draw = np.random.default_rng(0).standard_normal
    weights = draw((32, 32, 32)) * (0.5 / np.sqrt(32))
    biases = draw((32, 32))
    return draw((4, 32)), weights, biases


def _check_backward(
    student: StudentProxy, reference: Reference, rng: np.random.Generator, arrangement: str, eps: float = EPS
) -> None:
    x, weights, biases = _setup(rng, 1, 10, (2, 5), scale=1.0)
    dout = rng.standard_normal(x.shape)
    expect_array(
        student.block_backward(dout, x, weights[0], biases[0], arrangement, eps=eps),
        reference.block_backward(dout, x, weights[0], biases[0], arrangement, eps=eps),
        what=f"block_backward(dout, x, w, b, {arrangement!r}, eps)",
        hints=m.block_backward_variants(dout, x, weights[0], biases[0], arrangement, eps),
    )


@pytest.mark.points(2)
def test_block_forward_batch(student: StudentProxy, reference: Reference, rng: np.random.Generator) -> None:
    """block_forward in each arrangement on a (B, T, C) batch, with another eps."""
    x, weights, biases = _setup(rng, 1, 9, (2, 4), scale=1.5)
    for arrangement in ARRANGEMENTS:
        expect_array(
            student.block_forward(x, weights[0], biases[0], arrangement, eps=1e-4),
            reference.block_forward(x, weights[0], biases[0], arrangement, eps=1e-4),
            what=f"block_forward(x, w, b, {arrangement!r}, eps)",
            hints=[(x + np.tanh(x @ weights[0] + biases[0]), "hint.unnormalized_sublayer_input")]
            if arrangement == "pre"
            else [],
        )


@pytest.mark.points(1)
def test_block_backward_without_residual(student: StudentProxy, reference: Reference, rng: np.random.Generator) -> None:
    """block_backward for "none": back through the sublayer only, on (B, T, C)."""
    _check_backward(student, reference, rng, "none")


@pytest.mark.points(2)
def test_block_backward_postnorm(student: StudentProxy, reference: Reference, rng: np.random.Generator) -> None:
    """block_backward for "post": through the norm first, then the identity and the sublayer routes."""
    _check_backward(student, reference, rng, "post")


@pytest.mark.points(2)
def test_block_backward_prenorm(student: StudentProxy, reference: Reference, rng: np.random.Generator) -> None:
    """block_backward for "pre": the residual route plus the normalized branch."""
    _check_backward(student, reference, rng, "pre")


@pytest.mark.points(1)
def test_block_backward_passes_eps(student: StudentProxy, reference: Reference, rng: np.random.Generator) -> None:
    """block_backward uses the eps it is given (a large eps, which changes the result), post and pre."""
    for arrangement in ("post", "pre"):
        _check_backward(student, reference, rng, arrangement, eps=0.5)


@deferred
def _path_hints(
    reference: Reference, x: np.ndarray, weights: np.ndarray, biases: np.ndarray, arrangement: str
) -> list[tuple[np.ndarray, str]]:
    right = reference.gradient_path(x, weights, biases, arrangement)
    return [(right * np.sqrt(x.size), "hint.upstream_not_unit")]


def _check_paths(
    student: StudentProxy, reference: Reference, x: Any, weights: Any, biases: Any, arguments: str
) -> None:
    """gradient_path in each arrangement against the reference; ``arguments`` names the call."""
    for arrangement in ARRANGEMENTS:
        expect_array(
            student.gradient_path(x, weights, biases, arrangement),
            reference.gradient_path(x, weights, biases, arrangement),
            what=f"gradient_path({arguments}, {arrangement!r})",
            tol=TOL,
            hints=_path_hints(reference, x, weights, biases, arrangement),
        )


@pytest.mark.points(3)
def test_gradient_path_on_other_stacks(student: StudentProxy, reference: Reference, rng: np.random.Generator) -> None:
    """gradient_path on stacks of other depths, widths and scales, a (B, T, C) input, each
    arrangement, and on a second stack of the first one's sizes."""
    # mistake: a forward pass kept in a global, keyed by the shapes, reused for the next stack (trial 63)
    sizes = ((10, 12, (2, 3), 1.0, 0.5), (7, 6, (5,), 0.3, 2.0))
    for n_layers, C, shape, scale, bias in (*sizes, sizes[0]):
        x, weights, biases = _setup(rng, n_layers, C, shape, scale, bias)
        _check_paths(student, reference, x, weights, biases, "x, weights, biases")


@pytest.mark.points(2)
def test_gradient_path_of_the_lesson_setup(student: StudentProxy, reference: Reference) -> None:
    """gradient_path on the documented setup (lesson_setup()): 32 blocks, each arrangement."""
    x, weights, biases = lesson_setup()
    _check_paths(student, reference, x, weights, biases, "*lesson_setup()")


@pytest.mark.points(1)
def test_gradient_path_uses_eps(student: StudentProxy, reference: Reference, rng: np.random.Generator) -> None:
    """gradient_path passes its eps to every block, forward and backward (a large eps, post and pre)."""
    x, weights, biases = _setup(rng, 4, 8, (3,), scale=1.0)
    for arrangement in ("post", "pre"):
        expect_array(
            student.gradient_path(x, weights, biases, arrangement, eps=0.5),
            reference.gradient_path(x, weights, biases, arrangement, eps=0.5),
            what=f"gradient_path(x, weights, biases, {arrangement!r}, eps)",
            tol=TOL,
        )


@pytest.mark.points(1)
def test_block_backward_leaves_its_inputs_unchanged(
    student: StudentProxy, reference: Reference, rng: np.random.Generator
) -> None:
    """block_forward and block_backward leave x, w, b (and dout) unchanged, in each arrangement (no in-place
    operations)."""
    x, weights, biases = _setup(rng, 1, 8, (3,), scale=1.0)
    dout = rng.standard_normal(x.shape)
    for arrangement in ARRANGEMENTS:
        # mistake: x += sublayer(...) in block_forward; a gradient_path that copies each block's
        # input before the call still gets every gradient right
        got = student.block_forward(x, weights[0], biases[0], arrangement, eps=EPS)
        changed = student.recorded().mutated
        expect_attempt(
            got,
            reference.block_forward(x, weights[0], biases[0], arrangement, eps=EPS),
            what=f"block_forward(x, w, b, {arrangement!r}, eps)",
            hints=[],
        )
        expect_untouched(changed, function="block_forward")
        got = student.block_backward(dout, x, weights[0], biases[0], arrangement, eps=EPS)
        changed = student.recorded().mutated
        expect_attempt(
            got,
            reference.block_backward(dout, x, weights[0], biases[0], arrangement, eps=EPS),
            what=f"block_backward(dout, x, w, b, {arrangement!r}, eps)",
            hints=m.block_backward_variants(dout, x, weights[0], biases[0], arrangement, EPS),
        )
        expect_untouched(changed, function="block_backward")


@pytest.mark.points(1)
def test_block_forward_refuses_an_unknown_arrangement(
    student: StudentProxy, reference: Reference, rng: np.random.Generator
) -> None:
    """block_forward raises ValueError for an arrangement that is not "none", "post" or "pre"."""
    x, weights, biases = _setup(rng, 1, 6, (2,))
    # Only an honest attempt earns this point: code that raises ValueError for everything does not.
    expect_attempt(
        student.block_forward(x, weights[0], biases[0], "pre"),
        reference.block_forward(x, weights[0], biases[0], "pre"),
        what='block_forward(x, w, b, "pre")',
        hints=[],
    )
    with expect_raises(ValueError, what='block_forward(x, w, b, "sandwich")'):
        student.block_forward(x, weights[0], biases[0], "sandwich")


@pytest.mark.points(1)
def test_blocks_default_eps(student: StudentProxy, reference: Reference, rng: np.random.Generator) -> None:
    """block_forward and block_backward called without eps use the documented default, 1e-6, post and pre."""
    x, weights, biases = _setup(rng, 1, 8, (3,), scale=1.0, bias=0.0)
    x = x * 0.002
    dout = rng.standard_normal(x.shape)
    for arrangement in ("post", "pre"):
        expect_array(
            student.block_forward(x, weights[0], biases[0], arrangement),
            reference.block_forward(x, weights[0], biases[0], arrangement),
            what=f"block_forward(x, w, b, {arrangement!r})",
        )
        expect_array(
            student.block_backward(dout, x, weights[0], biases[0], arrangement),
            reference.block_backward(dout, x, weights[0], biases[0], arrangement),
            what=f"block_backward(dout, x, w, b, {arrangement!r})",
            hints=m.block_backward_variants(dout, x, weights[0], biases[0], arrangement, EPS),
        )
