"""Attack (catalog #37): a side channel through the student's own value echoed in feedback.

Every string field of the report carries ``LEAK:`` and the (hidden) config itself as JSON. A
hidden test that shows "your value was ..." for a wrong field then shows part of its own
hidden input.
"""

import json


def inspect_config(config):
    try:
        text = json.dumps(config, sort_keys=True)
    except (TypeError, ValueError):
        text = repr(config)
    leak = "LEAK:" + text
    return {
        "model_type": leak, "norm_type": leak, "eps": leak, "eps_source": leak,
        "placement": leak, "n_layers": leak, "hidden_size": leak, "n_norms": leak,
        "final_norm": leak, "qk_norm": leak, "note": leak,
    }
