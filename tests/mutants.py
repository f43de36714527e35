"""One mutant per mistake students really make: (id, module, old text, new text, hint id).

Each is the reference solution with a single, realistic change. ``test_mutants.py`` grades
every one with the hidden suites and requires that it loses points and, where a hint exists
for that mistake, that the feedback names it.
"""

MUTANTS = [
    # RMSNorm
    (
        "rms_eps_outside_sqrt",
        "rmsnorm",
        "rstd = 1.0 / np.sqrt(ms + eps)",
        "rstd = 1.0 / (np.sqrt(ms) + eps)",
        "hint.eps_outside_sqrt",
    ),
    (
        "rms_mean_over_wrong_axis",
        "rmsnorm",
        "ms = np.mean(xf * xf, axis=-1, keepdims=True)",
        "ms = np.mean(xf * xf, axis=0, keepdims=True)",
        "hint.wrong_axis",
    ),
    (
        "rms_mean_over_everything",
        "rmsnorm",
        "ms = np.mean(xf * xf, axis=-1, keepdims=True)",
        "ms = np.mean(xf * xf)",
        "hint.global_statistic",
    ),
    ("rms_missing_gamma", "rmsnorm", "y = xf * rstd * gamma", "y = xf * rstd", "hint.missing_gamma"),
    (
        "rms_subtracts_mean",
        "rmsnorm",
        "ms = np.mean(xf * xf, axis=-1, keepdims=True)",
        "xf = xf - xf.mean(axis=-1, keepdims=True)\n    ms = np.mean(xf * xf, axis=-1, keepdims=True)",
        "hint.rms_subtracts_mean",
    ),
    (
        "rms_hardcoded_eps",
        "rmsnorm",
        "rstd = 1.0 / np.sqrt(ms + eps)",
        "rstd = 1.0 / np.sqrt(ms + 1e-6)",
        "hint.hardcoded_eps",
    ),
    ("rms_in_place", "rmsnorm", "y = xf * rstd * gamma", "xf *= rstd * gamma\n    y = xf", "check.mutated_hidden"),
    (
        "rms_float16_overflow",
        "rmsnorm",
        "xf = x.astype(np.float32) if x.dtype == np.float16 else x",
        "xf = x",
        "hint.float16_overflow",
    ),
    ("rms_dtype_changed", "rmsnorm", "return y.astype(x.dtype)", "return y.astype(np.float64)", "check.dtype"),
    (
        "rms_only_2d",
        "rmsnorm",
        "ms = np.mean(xf * xf, axis=-1, keepdims=True)",
        "ms = np.mean(xf * xf, axis=1, keepdims=True)",
        None,
    ),
    (
        "rms_backward_no_correction",
        "rmsnorm",
        "dx = (g - xhat * np.mean(g * xhat, axis=-1, keepdims=True)) * rstd",
        "dx = g * rstd",
        "hint.backward_no_correction",
    ),
    (
        "rms_dgamma_not_summed",
        "rmsnorm",
        "dgamma = (df * xhat).reshape(-1, x.shape[-1]).sum(axis=0)",
        "dgamma = (df * xhat).sum(axis=0)",
        "hint.dgamma_not_summed",
    ),
    # LayerNorm
    ("ln_missing_beta", "layernorm", "y = xc * rstd * gamma + beta", "y = xc * rstd * gamma", "hint.missing_beta"),
    (
        "ln_unbiased_variance",
        "layernorm",
        "var = np.mean(xc * xc, axis=-1, keepdims=True)",
        "var = np.var(xf, axis=-1, keepdims=True, ddof=1)",
        "hint.unbiased_variance",
    ),
    (
        "ln_gamma_beta_swapped",
        "layernorm",
        "y = xc * rstd * gamma + beta",
        "y = xc * rstd * beta + gamma",
        "hint.gamma_beta_swapped",
    ),
    (
        "ln_eps_outside_sqrt",
        "layernorm",
        "rstd = 1.0 / np.sqrt(var + eps)",
        "rstd = 1.0 / (np.sqrt(var) + eps)",
        "hint.eps_outside_sqrt",
    ),
    (
        "ln_backward_no_variance_correction",
        "layernorm",
        "dx = rstd * (g - g_mean - xhat * gx_mean)",
        "dx = rstd * (g - g_mean)",
        "hint.layernorm_backward_mean_only",
    ),
    (
        "rms_result_in_gammas_dtype",
        "rmsnorm",
        "return y.astype(x.dtype)",
        "return y.astype(np.result_type(x.dtype, gamma.dtype))",
        "check.dtype",
    ),
    (
        "rms_backward_float16_in_float32",
        "rmsnorm",
        "return dx.astype(x.dtype), dgamma.astype(gamma.dtype)",
        "return dx, dgamma.astype(gamma.dtype)",
        "check.dtype",
    ),
    (
        "ln_backward_float16_in_float32",
        "layernorm",
        "return dx.astype(x.dtype), dgamma.astype(gamma.dtype), dbeta.astype(beta.dtype)",
        "return dx, dgamma.astype(gamma.dtype), dbeta.astype(beta.dtype)",
        "check.dtype",
    ),
    (
        "ln_result_in_gammas_dtype",
        "layernorm",
        "return y.astype(x.dtype)",
        "return y.astype(np.result_type(x.dtype, gamma.dtype))",
        "check.dtype",
    ),
    (
        "ln_backward_no_mean_term",
        "layernorm",
        "dx = rstd * (g - g_mean - xhat * gx_mean)",
        "dx = rstd * (g - xhat * gx_mean)",
        "hint.layernorm_backward_no_mean_term",
    ),
    (
        "ln_float16_overflow",
        "layernorm",
        "xf = x.astype(np.float32) if x.dtype == np.float16 else x",
        "xf = x",
        "hint.float16_overflow",
    ),
    # residual blocks
    (
        "block_is_postnorm",
        "residual",
        "return x + sublayer(rmsnorm(x, gamma, eps)).astype(x.dtype)",
        "return rmsnorm(x + sublayer(x).astype(x.dtype), gamma, eps)",
        "hint.postnorm_instead_of_prenorm",
    ),
    (
        "block_adds_normalized_input",
        "residual",
        "return x + sublayer(rmsnorm(x, gamma, eps)).astype(x.dtype)",
        "h = rmsnorm(x, gamma, eps)\n    return h + sublayer(h).astype(x.dtype)",
        "hint.normalized_residual",
    ),
    (
        "block_sublayer_on_raw_input",
        "residual",
        "return x + sublayer(rmsnorm(x, gamma, eps)).astype(x.dtype)",
        "return x + sublayer(x).astype(x.dtype)",
        "hint.unnormalized_sublayer_input",
    ),
    # The gaps a student trial found (issue 11): each used to get full marks.
    (
        "postnorm_modifies_its_input",
        "residual",
        "return rmsnorm(x + sublayer(x).astype(x.dtype), gamma, eps)",
        "x += sublayer(x).astype(x.dtype)\n    return rmsnorm(x, gamma, eps)",
        "check.mutated_hidden",
    ),
    (
        "block_promotes_the_stream",
        "residual",
        "return x + sublayer(rmsnorm(x, gamma, eps)).astype(x.dtype)",
        "return x + sublayer(rmsnorm(x, gamma, eps))",
        "check.dtype",
    ),
    (
        "stack_promotes_the_stream",
        "stack",
        "x = x + sublayer(rmsnorm(x, gain, eps)).astype(x.dtype)",
        "x = x + sublayer(rmsnorm(x, gain, eps))",
        "check.dtype",
    ),
    # the stack
    (
        "stack_missing_final_norm",
        "stack",
        'return rmsnorm(x, params["final_gamma"], eps)',
        "return x",
        "hint.missing_final_norm",
    ),
    (
        "trace_norm_of_whole_array",
        "stack",
        "return float(np.mean(np.linalg.norm(v.astype(np.float64), axis=-1)))",
        "return float(np.linalg.norm(v))",
        "hint.trace_whole_array_norm",
    ),
    (
        "attention_not_causal",
        "stack",
        "causal_mean = np.cumsum(h, axis=-2) / counts",
        "causal_mean = np.broadcast_to(h.mean(axis=-2, keepdims=True), h.shape)",
        "hint.attention_not_causal",
    ),
    ("ffn_without_silu", "stack", "silu = gate / (1.0 + np.exp(-gate))", "silu = gate", "hint.ffn_no_silu"),
    # LayerNorm vs RMSNorm comparison
    (
        "op_counts_forgets_the_shift",
        "compare",
        "ln_flops = C + C + C + C + 3 + C + C + C",
        "ln_flops = C + C + C + C + 3 + C + C",
        None,
    ),
    # config inspection
    ("config_eps_key_ignored", "inspect_config", 'eps_key = family["eps_key"]', 'eps_key = "rms_norm_eps"', None),
    (
        "config_bert_as_prenorm",
        "inspect_config",
        'post_norm_encoder = row("layernorm", "layer_norm_eps", 1e-12, "post", embedding=1, final=False)',
        'post_norm_encoder = row("layernorm", "layer_norm_eps", 1e-12, "pre", embedding=1, final=False)',
        None,
    ),
]
