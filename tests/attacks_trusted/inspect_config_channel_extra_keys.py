"""Attack (class 2, echo channel): the NUMBER of unexpected keys carries a hidden input.

The report holds the documented keys plus ``hidden_size + SALT`` extra ones. Every hidden test
checks the keys first and prints how many unexpected keys there were: the width of every
hidden config, read straight off the feedback (the issue's example).

Expected: the hidden feedback says there are unexpected keys, never how many.
"""

import json

SALT = 0
KEYS = (
    "model_type", "norm_type", "eps", "eps_source", "placement", "n_layers",
    "hidden_size", "n_norms", "final_norm", "qk_norm", "note",
)


def _config(config):
    if isinstance(config, str):
        with open(config, encoding="utf-8") as handle:
            config = json.load(handle)
    return config if isinstance(config, dict) else {}


def _width(config):
    for scope in (config.get("text_config") or {}, config):
        for key in ("hidden_size", "n_embd", "d_model"):
            if isinstance(scope.get(key), int):
                return scope[key]
    return 7


def inspect_config(config):
    config = _config(config)
    report = {key: 0 for key in KEYS}
    report.update({f"extra_{i}": 0 for i in range(_width(config) + SALT)})
    return report
