"""Attack (catalog #22): burn CPU forever (``while True: pass``)."""


def inspect_config(config):
    while True:
        pass
