"""What the worker reports as an argument changed in place (``calling.mutated``): values, not
bytes. A function that writes back the same values (``x[...] = x``, ``-0.0`` over ``0.0``, NaN
over NaN) has not changed its input; one that writes any other value, or resizes it, has."""

import numpy as np
import pytest

from grader.sandbox.inside.calling import mutated, snapshot


def _write_back(x):
    x[...] = x


def _negative_zero(x):
    x[x == 0] = -0.0


def _other_nan(x):
    x[np.isnan(x)] = -np.nan  # another NaN's bytes


def _one_value(x):
    x.flat[1] = np.nextafter(x.flat[1], np.inf)  # the smallest change there is


def _resized(x):
    x.resize((x.size + 1,), refcheck=False)


@pytest.mark.parametrize(
    ("change", "named"),
    [(_write_back, False), (_negative_zero, False), (_other_nan, False), (_one_value, True), (_resized, True)],
)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_an_argument_is_changed_when_its_values_are(change, named, dtype):
    x = np.array([[0.0, 1.5, np.nan], [2.0, 0.0, 3.0]], dtype=dtype)
    gamma = np.ones(3, dtype=dtype)
    before = snapshot([x], {"gamma": gamma})
    change(x)
    assert mutated(before, [x], {"gamma": gamma}) == (["arg0"] if named else [])


def test_an_integer_argument_changed_is_named():
    counts = np.arange(6).reshape(2, 3)
    before = snapshot([], {"params": {"counts": counts}})
    counts[1, 2] = 7
    assert mutated(before, [], {"params": {"counts": counts}}) == ["params['counts']"]
