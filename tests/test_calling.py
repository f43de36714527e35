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


@pytest.mark.parametrize(
    "change",
    [
        lambda config: config["text_config"].setdefault("rms_norm_eps", 1e-6),
        lambda config: config["text_config"].update(hidden_size=16),
        lambda config: config["rope_scaling"]["factors"].append(1.0),
        lambda config: config["text_config"].pop("num_hidden_layers"),
    ],
)
def test_a_container_inside_a_dict_argument_is_followed(change):
    # A config's text_config filled in with setdefault changed the caller's config, two levels
    # down, where the check looked at the top level only.
    config = {
        "model_type": "gemma3",
        "text_config": {"hidden_size": 8, "num_hidden_layers": 2},
        "rope_scaling": {"factors": [1.0, 2.0]},
    }
    before = snapshot([config], {})
    assert mutated(before, [config], {}) == []
    change(config)
    assert mutated(before, [config], {}) == ["arg0"]


def test_a_new_container_in_place_of_ours_is_a_change_without_being_walked():
    class Endless(list):
        def __len__(self):
            raise RuntimeError("walked outside the call's time limit")

    config = {"text_config": {"hidden_size": 8}}
    before = snapshot([config], {})
    config["text_config"] = Endless()  # a subclass: walking it would run the student's code
    assert mutated(before, [config], {}) == ["arg0"]


def test_an_equal_string_or_number_written_back_is_no_change():
    # Trial 63: model_type lower-cased in place. An equal value written back (a new str object)
    # leaves the caller's config as it was; a different one, or an equal value of another type
    # (1 for 1.0), does not.
    config = {"model_type": "llama", "rms_norm_eps": 1e-5, "text_config": {"hidden_size": 4096}}
    before = snapshot([config], {})
    config["model_type"] = "".join(["lla", "ma"])
    config["rms_norm_eps"] = float("1e-5")
    config["text_config"]["hidden_size"] = int("4096")
    assert mutated(before, [config], {}) == []
    config["model_type"] = "LLAMA"
    assert mutated(before, [config], {}) == ["arg0"]
    config["model_type"], config["rms_norm_eps"] = "llama", 1
    assert mutated(before, [config], {}) == ["arg0"]
