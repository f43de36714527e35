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


def _probes(student):
    probes = student.probes()
    assert isinstance(probes, (list, tuple)), f"probes() should return a list, not {type(probes).__name__}"
    assert 1 <= len(probes) <= MAX_PROBES, f"probes() returned {len(probes)} probes: 1 to {MAX_PROBES}"
    for i, p in enumerate(probes):
        assert isinstance(p, np.ndarray), f"probe {i} is a {type(p).__name__}, not a numpy array"
        assert p.ndim == 2 and p.shape[1] == WIDTH and 1 <= p.shape[0] <= MAX_ROWS, (
            f"probe {i} has shape {p.shape}: (T, {WIDTH}) with 1 <= T <= {MAX_ROWS}"
        )
        assert p.dtype == np.float64 and np.all(np.isfinite(p)), f"probe {i}: float64 and finite ({p.dtype})"
    return [p.copy() for p in probes]


def _diagnose(student, probes, p, port):
    """The port's outputs are a few units in the last place off, as another framework rounds."""
    rng = np.random.default_rng(3)
    outputs = [port(q) * (1.0 + 4e-16 * rng.standard_normal(q.shape)) for q in probes]
    return student.diagnose([q.copy() for q in probes], [_block(q, p) for q in probes], outputs)


def test_a_port_with_another_eps(student):
    """A port whose norms use eps = 1e-5 instead of 1e-6 is "eps"; the reference itself is "match"."""
    probes, p = _probes(student), _params(1)
    got = _diagnose(student, probes, p, lambda q: _block(q, p, eps=1e-5))
    assert got == "eps", f"diagnose named the eps port {got!r}"
    got = _diagnose(student, probes, p, lambda q: _block(q, p))
    assert got == "match", f"diagnose named a port without mismatch {got!r}"


def test_a_port_without_its_final_norm(student):
    """A port that returns the residual stream without the final norm is "missing_final_norm"; one whose
    norms use eps = 1e-2 is "eps". The provided forward() builds the reference and both ports as here."""
    probes, p = _probes(student), _params(2)
    got = _diagnose(student, probes, p, lambda q: _block(q, p, final=False))
    assert got == "missing_final_norm", f"diagnose named the port without a final norm {got!r}"
    got = _diagnose(student, probes, p, lambda q: _block(q, p, eps=1e-2))
    assert got == "eps", f"diagnose named the eps port {got!r}"
    x = np.random.default_rng(4).standard_normal((3, WIDTH))
    wants = {"match": _block(x, p), "eps": _block(x, p, eps=1e-2), "missing_final_norm": _block(x, p, final=False)}
    for mismatch, want in wants.items():
        got = np.asarray(student.forward(x, p, mismatch))
        assert got.shape == want.shape and np.allclose(got, want, rtol=1e-9, atol=1e-12), (
            f"forward(x, params, {mismatch!r}) is not the expected block: forward() is provided (keep it as it"
            " was) and calls your rmsnorm and layernorm, so check those first"
        )
