"""Attack (points without the maths): a report with exactly the documented keys, each of the
documented type, and the same made-up values for every model (and ValueError for nothing)."""


def inspect_config(config):
    return {
        "model_type": "unknown", "norm_type": "rmsnorm", "eps": 0.5, "eps_source": "guess",
        "placement": "pre", "n_layers": 1, "hidden_size": 1, "n_norms": 1,
        "final_norm": False, "qk_norm": False, "note": "RMSNorm 0.5",
    }
