"""Attack (catalog #22, #23): hang while the module is imported, before any function exists."""

import time

time.sleep(1e9)


def inspect_config(config):
    return {}  # never reached
