"""Attack (catalog #30): print 1 GiB (once per process, on the first call) to exhaust the memory
of a grader that collects output, or to push the real results out of a log. The report is
wrong (wrong values and wrong types)."""

_done = []


def _flood():
    if not _done:
        _done.append(True)
        line = "X" * (1 << 20)
        for _ in range(1024):
            print(line)


def inspect_config(config):
    _flood()
    return {
        "model_type": "flood", "norm_type": "none", "eps": "1e-5", "eps_source": "nowhere",
        "placement": "sideways", "n_layers": "many", "hidden_size": "wide", "n_norms": "some",
        "final_norm": "yes", "qk_norm": "no", "note": "every test passed",
    }
