"""The reference solutions, which every hidden test trusts, against PyTorch's own norms.

An independent implementation (torch.nn.functional and autograd, CPU build) must agree with
ours on forward values and on gradients, for several shapes, dtypes and eps values.
"""

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from grader import course
from grader.reference import Reference

REF = Reference(course.solutions_dir())
CASES = [
    ((7, 16), np.float64, 1e-6),
    ((2, 3, 5), np.float64, 1e-2),
    ((33,), np.float32, 1e-5),
    ((2, 1, 4, 9), np.float64, 0.0),
]


def _inputs(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(shape) * 3 + 0.5).astype(dtype)
    gamma = (1 + 0.5 * rng.standard_normal(shape[-1])).astype(dtype)
    beta = rng.standard_normal(shape[-1]).astype(dtype)
    dout = rng.standard_normal(shape).astype(dtype)
    return x, gamma, beta, dout


def _t(a):
    return torch.tensor(a, requires_grad=True)


def _tol(dtype):
    return dict(rtol=1e-10, atol=1e-12) if dtype == np.float64 else dict(rtol=2e-5, atol=2e-6)


@pytest.mark.parametrize(("shape", "dtype", "eps"), CASES)
def test_rmsnorm_forward_and_backward_match_torch(shape, dtype, eps):
    x, gamma, _, dout = _inputs(shape, dtype, 1)
    tx, tg = _t(x), _t(gamma)
    out = F.rms_norm(tx, (shape[-1],), weight=tg, eps=eps)
    (out * torch.tensor(dout)).sum().backward()
    np.testing.assert_allclose(REF.rmsnorm(x, gamma, eps=eps), out.detach().numpy(), **_tol(dtype))
    dx, dgamma = REF.rmsnorm_backward(dout, x, gamma, eps=eps)
    np.testing.assert_allclose(dx, tx.grad.numpy(), **_tol(dtype))
    np.testing.assert_allclose(dgamma, tg.grad.numpy(), **_tol(dtype))


@pytest.mark.parametrize(("shape", "dtype", "eps"), CASES)
def test_layernorm_forward_and_backward_match_torch(shape, dtype, eps):
    x, gamma, beta, dout = _inputs(shape, dtype, 2)
    eps = eps or 1e-12  # a zero-variance token needs some eps; these inputs have none
    tx, tg, tb = _t(x), _t(gamma), _t(beta)
    out = F.layer_norm(tx, (shape[-1],), weight=tg, bias=tb, eps=eps)
    (out * torch.tensor(dout)).sum().backward()
    np.testing.assert_allclose(REF.layernorm(x, gamma, beta, eps=eps), out.detach().numpy(), **_tol(dtype))
    dx, dgamma, dbeta = REF.layernorm_backward(dout, x, gamma, beta, eps=eps)
    np.testing.assert_allclose(dx, tx.grad.numpy(), **_tol(dtype))
    np.testing.assert_allclose(dgamma, tg.grad.numpy(), **_tol(dtype))
    np.testing.assert_allclose(dbeta, tb.grad.numpy(), **_tol(dtype))


def test_float16_reference_matches_torch_in_float32():
    rng = np.random.default_rng(3)
    x = np.clip(rng.standard_normal((4, 32)) * 2e4, -6e4, 6e4).astype(np.float16)
    gamma = np.ones(32, dtype=np.float16)
    want = F.rms_norm(torch.tensor(x, dtype=torch.float32), (32,), weight=torch.ones(32), eps=1e-6)
    got = REF.rmsnorm(x, gamma)
    assert got.dtype == np.float16 and np.isfinite(got).all()
    np.testing.assert_allclose(got.astype(np.float32), want.numpy(), rtol=2e-3, atol=2e-3)


def test_prenorm_block_and_stack_match_torch():
    from grader.checks import Sublayer

    rng = np.random.default_rng(4)
    x, w = rng.standard_normal((5, 8)), rng.standard_normal((8, 8)) * 0.3
    gamma = 1 + 0.2 * rng.standard_normal(8)
    tx = torch.tensor(x)
    want = tx + F.rms_norm(tx, (8,), weight=torch.tensor(gamma), eps=1e-6) @ torch.tensor(w)
    np.testing.assert_allclose(REF.block(x, Sublayer("linear", w=w), gamma), want.numpy(), rtol=1e-12)

    params = REF.init_params(n_layers=3, C=8, seed=5)
    h = torch.tensor(x)
    for layer in range(3):
        a = F.rms_norm(h, (8,), weight=torch.tensor(params["attn_gamma"][layer]), eps=1e-6)
        mean = torch.cumsum(a, dim=-2) / torch.arange(1, 6, dtype=torch.float64)[:, None]
        h = h + mean @ torch.tensor(params["w_o"][layer])
        f = F.rms_norm(h, (8,), weight=torch.tensor(params["ffn_gamma"][layer]), eps=1e-6)
        gate = F.silu(f @ torch.tensor(params["w_gate"][layer]))
        h = h + (gate * (f @ torch.tensor(params["w_up"][layer]))) @ torch.tensor(params["w_down"][layer])
    want = F.rms_norm(h, (8,), weight=torch.tensor(params["final_gamma"]), eps=1e-6)
    np.testing.assert_allclose(REF.stack_forward(x, params), want.numpy(), rtol=1e-10)
