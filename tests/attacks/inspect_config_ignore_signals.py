"""Attack (catalog #24): ignore every catchable signal a supervisor might send to stop the
process (SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGXCPU, SIGALRM, SIGUSR1/2), then loop."""

import signal

for _name in ("SIGTERM", "SIGINT", "SIGHUP", "SIGQUIT", "SIGXCPU", "SIGALRM", "SIGUSR1", "SIGUSR2", "SIGPIPE"):
    try:
        signal.signal(getattr(signal, _name), signal.SIG_IGN)
    except (OSError, ValueError, AttributeError):
        pass


def inspect_config(config):
    while True:
        pass
