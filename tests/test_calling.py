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


def _cast_in_place(params):
    for key in params:
        params[key] = params[key].astype(np.float64)  # a copy of equal values, in the caller's dict


@pytest.mark.parametrize(
    ("change", "named"),
    [
        (_cast_in_place, ["params"]),
        (lambda params: params.setdefault("eps", 1e-6), ["params"]),
        (lambda params: params.pop("w"), ["params", "params['w']"]),
        (lambda params: params["w"].__imul__(2.0), ["params['w']"]),
        (lambda params: dict(params).update(w=np.zeros(3)), []),  # a copy of theirs: the caller's is as it was
    ],
)
def test_a_dict_argument_is_changed_when_its_entries_are(change, named):
    # Trial 60: stack_forward replaced each array of params by a cast copy of equal values; the
    # caller's dict was changed for good, and "leaves params exactly as it was" passed.
    params = {"w": np.arange(3.0), "b": np.ones(3)}
    before = snapshot([], {"params": params})
    change(params)
    assert sorted(mutated(before, [], {"params": params})) == sorted(named)


def test_a_list_argument_is_changed_when_its_entries_or_their_values_are():
    weights = [np.eye(2), np.ones((2, 2))]
    before = snapshot([np.zeros(2), weights], {})
    weights[1] *= 3.0
    assert mutated(before, [np.zeros(2), weights], {}) == ["arg1[1]"]
    before = snapshot([np.zeros(2), weights], {})
    weights[0] = weights[0].copy()
    assert mutated(before, [np.zeros(2), weights], {}) == ["arg1"]


def test_a_key_the_students_code_put_in_a_dict_is_never_compared_with_its_own_eq():
    class Hostile:
        def __eq__(self, other):
            raise RuntimeError("runs outside the call's time limit")

        __hash__ = object.__hash__

    params = {"w": np.ones(2)}
    before = snapshot([], {"params": params})
    w = params.pop("w")
    params[Hostile()], params["w"] = 1, w  # the key compared where "w" was is the student's
    assert mutated(before, [], {"params": params}) == ["params"]
