"""Attack (catalog #6): a forged response frame holding an ``.npy`` blob (the wire format's array
encoding before dtype and shape moved into the JSON tree) whose header declares
2**45 float64 elements (256 TiB) but carries 64 bytes.

The frame itself is small, so a frame-size cap does not stop it; a reader that allocates the
declared shape before reading the data runs out of memory in the trusted process. The report
is wrong anyway.
"""

import json
import os
import struct
import sys


def _forge():
    header = "{'descr': '<f8', 'fortran_order': False, 'shape': (%d,), }" % (1 << 45)
    header += " " * (117 - len(header)) + "\n"
    blob = b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + b"\0" * 64
    tree = json.dumps({"$dict": {"status": "ok", "result": {"$array": 0, "type": "numpy.ndarray"}}}).encode()
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
