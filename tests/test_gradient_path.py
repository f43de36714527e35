"""The gradient-path experiment (lab goal (a), questions 1 and 4): the reference is right, its
documented setup shows the lesson's point, and the docstring's "when it does not hold" is true."""

import numpy as np
import pytest

from grader import course
from grader.reference import Reference
from grader.suites import test_gradient_path as suite


@pytest.fixture(scope="module")
def reference():
    ref = Reference(course.solutions_dir())
    yield ref
    ref.close()


def _module(reference):
    """The reference module's globals (its provided helpers: lesson_setup, sublayer...)."""
    return reference._functions["gradient_path"].__globals__


def test_the_hidden_suite_uses_the_documented_setup(reference):
    ours, theirs = suite.lesson_setup(), _module(reference)["lesson_setup"]()
    assert all(np.array_equal(a, b) for a, b in zip(ours, theirs, strict=True))


@pytest.mark.parametrize("arrangement", ["none", "post", "pre"])
def test_block_backward_is_the_gradient_of_block_forward(reference, arrangement):
    rng = np.random.default_rng(3)
    x, w, b = rng.standard_normal((2, 3, 5)), rng.standard_normal((5, 5)), rng.standard_normal(5)
    dout = rng.standard_normal(x.shape)
    dx = reference.block_backward(dout, x, w, b, arrangement)
    numeric = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[i] = 1e-6
        up = reference.block_forward(x + step, w, b, arrangement)
        down = reference.block_forward(x - step, w, b, arrangement)
        numeric[i] = np.sum((up - down) * dout) / 2e-6
    assert np.abs(dx - numeric).max() < 1e-7


def test_the_documented_setup_shows_the_lessons_point(reference):
    """Without a residual the gradient vanishes; post-norm loses it a little at every norm;
    pre-norm keeps it near 1 at every depth."""
    x, weights, biases = suite.lesson_setup()
    none, post, pre = (reference.gradient_path(x, weights, biases, a) for a in ("none", "post", "pre"))
    assert none.shape == post.shape == pre.shape == (32,)
    assert none[-1] < 1e-12 and none[-1] < 1e-10 * none[0]
    assert post[-1] < 0.05 < 0.5 < post[0] and post[-1] < post[15] < post[3]
    assert np.all((0.5 < pre) & (pre < 2.0))


def _path(reference, arrangement, scale, bias, seed=0):
    x, weights, biases = _module(reference)["lesson_setup"](seed=seed, scale=scale, bias=bias)
    return reference.gradient_path(x, weights, biases, arrangement)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_without_the_bias_post_norm_keeps_the_gradient_too(reference, seed):
    """As the module docstring says: the claim about post-norm depends on the setup."""
    post = _path(reference, "post", 0.5, 0.0, seed)
    assert np.all((0.5 < post) & (post < 2.0))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_with_large_weights_every_arrangement_grows(reference, seed):
    """As the module docstring says: with weights of standard deviation 4 / sqrt(C), pre-norm too."""
    growth = {a: (lambda p: p[-1] / p[0])(_path(reference, a, 4.0, 1.0, seed)) for a in ("none", "post", "pre")}
    assert growth["pre"] > 10 and growth["post"] > 100 and growth["none"] > 1000
