"""Public tests for porting.py. Run them with ``normlab check`` (or ``pytest`` in this folder).

The two public ports are built here, in plain numpy, so you can read how; the graded ports are
built the same way with other weights, gains and eps values, and other mismatches."""

import numpy as np

WIDTH, MAX_PROBES, MAX_ROWS = 16, 16, 64


def _rms(v, gain, eps):
    return v / np.sqrt(np.mean(v * v, axis=-1, keepdims=True) + eps) * gain


def _block(x, p, eps=None, final=True):
    """The reference block: rmsnorm(x + tanh(rmsnorm(x) @ w + b)); another eps, or no final norm."""
    eps = p["eps"] if eps is None else eps
    z = x + np.tanh(_rms(x, p["weight_1"], eps) @ p["w"] + p["b"])
    return _rms(z, p["weight_f"], eps) if final else z


def _params(seed):
    rng = np.random.default_rng(seed)
    gains = 1.0 + 0.2 * rng.standard_normal((2, WIDTH))
    w, b = rng.standard_normal((WIDTH, WIDTH)) / np.sqrt(WIDTH), rng.standard_normal(WIDTH)
    return {"eps": 1e-6, "port_eps": 1e-2, "weight_1": gains[0], "weight_f": gains[1], "w": w, "b": b}


def _probes(student, expected):
    probes = student.probes()
    expected.require(isinstance(probes, (list, tuple)), "public.probes_not_list", type=type(probes).__name__)
    expected.require(1 <= len(probes) <= MAX_PROBES, "public.probes_count", count=len(probes), most=MAX_PROBES)
    for i, p in enumerate(probes):
        expected.require(isinstance(p, np.ndarray), "public.probe_not_array", index=i, type=type(p).__name__)
        shaped = p.ndim == 2 and p.shape[1] == WIDTH and 1 <= p.shape[0] <= MAX_ROWS
        expected.require(shaped, "public.probe_shape", index=i, shape=str(p.shape), width=WIDTH, rows=MAX_ROWS)
        finite = p.dtype == np.float64 and bool(np.all(np.isfinite(p)))
        expected.require(finite, "public.probe_dtype", index=i, dtype=str(p.dtype))
    return [p.copy() for p in probes]


def _named(expected, got, port):
    expected.require(isinstance(got, str) and got == port, "public.diagnose_named", port=port, got=repr(got)[:80])


def _diagnose(student, probes, p, port):
    """The port's outputs are a few units in the last place off, as another framework rounds."""
    rng = np.random.default_rng(3)
    outputs = [port(q) * (1.0 + 4e-16 * rng.standard_normal(q.shape)) for q in probes]
    return student.diagnose([q.copy() for q in probes], [_block(q, p) for q in probes], outputs)


def test_a_port_with_another_eps(student, expected):
    """A port whose norms use eps = 1e-5 instead of 1e-6 is "eps"; the reference itself is "match"."""
    probes, p = _probes(student, expected), _params(1)
    got = _diagnose(student, probes, p, lambda q: _block(q, p, eps=1e-5))
    _named(expected, got, "eps")
    got = _diagnose(student, probes, p, lambda q: _block(q, p))
    _named(expected, got, "match")


def test_a_port_without_its_final_norm(student, expected):
    """A port that returns the residual stream without the final norm is "missing_final_norm"; one whose
    norms use eps = 1e-2 is "eps". The provided forward() builds the reference and both ports as here."""
    probes, p = _probes(student, expected), _params(2)
    got = _diagnose(student, probes, p, lambda q: _block(q, p, final=False))
    _named(expected, got, "missing_final_norm")
    got = _diagnose(student, probes, p, lambda q: _block(q, p, eps=1e-2))
    _named(expected, got, "eps")
    x = np.random.default_rng(4).standard_normal((3, WIDTH))
    wants = {"match": _block(x, p), "eps": _block(x, p, eps=1e-2), "missing_final_norm": _block(x, p, final=False)}
    for mismatch, want in wants.items():
        got = np.asarray(student.forward(x, p, mismatch))
        same = got.shape == want.shape and np.allclose(got, want, rtol=1e-9, atol=1e-12)
        expected.require(same, "public.forward_changed", mismatch=mismatch)
