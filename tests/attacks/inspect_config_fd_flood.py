"""Attack (catalog #30): write 512 MiB straight to file descriptors 1 and 2 with os.write while
the module is imported, bypassing any sys.stdout capture. The report is wrong."""

import os

_chunk = b"Y" * (1 << 20)
for _ in range(256):
    for _fd in (1, 2):
        try:
            os.write(_fd, _chunk)
        except OSError:
            pass


def inspect_config(config):
    return {
        "model_type": "flood", "norm_type": "none", "eps": "1e-5", "eps_source": "nowhere",
        "placement": "sideways", "n_layers": "many", "hidden_size": "wide", "n_norms": "some",
        "final_norm": "yes", "qk_norm": "no", "note": "every test passed",
    }
