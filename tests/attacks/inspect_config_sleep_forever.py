"""Attack (catalog #23): sleep forever: no CPU time is used, so a CPU limit never fires."""

import time


def inspect_config(config):
    time.sleep(1e9)
