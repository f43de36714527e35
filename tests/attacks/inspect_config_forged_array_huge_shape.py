"""Attack (catalog #6): a forged response frame in the wire format's own array encoding whose
node declares 2**45 float64 elements (256 TiB) but whose blob carries 64 bytes.

Dtype and shape travel in the JSON tree, beside the blob; a reader that trusted the declared
shape and allocated it before comparing it with the blob's length runs out of memory in the
trusted process. The report is wrong anyway.
"""

import json
import os
import struct
import sys


def _forge():
    node = {"$array": 0, "dtype": "<f8", "shape": [1 << 45], "type": "numpy.ndarray"}
    tree = json.dumps({"$dict": {"status": "ok", "result": node}}).encode()
    blob = b"\0" * 64
    payload = struct.pack(">I", len(tree)) + tree + struct.pack(">Q", len(blob)) + blob
    try:
        os.write(int(sys.argv[-1]), struct.pack(">Q", len(payload)) + payload)
    except (OSError, ValueError):
        pass


def inspect_config(config):
    _forge()
    return {  # wrong values, and wrong types for eps, counts and flags
        "model_type": "forged", "norm_type": "none", "eps": "1e-5", "eps_source": "nowhere",
        "placement": "sideways", "n_layers": "many", "hidden_size": "wide", "n_norms": "some",
        "final_norm": "yes", "qk_norm": "no", "note": "every test passed",
    }
