"""Attack (catalog #28): double fork + setsid, leaving a daemon that outlives the grading and
keeps writing files into the shared canary directories."""

import os
import time


def _daemonize():
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            while True:
                for directory in ("/tmp/normlab-canary", "/var/tmp/normlab-canary", "/tmp"):
                    try:
                        with open(f"{directory}/normlab-pwned-double_fork_daemon-{os.getpid()}", "a") as handle:
                            handle.write(f"{time.time()} still alive\n")
                    except OSError:
                        pass
                time.sleep(0.05)
        os._exit(0)


def rmsnorm(x, gamma, eps=1e-6):
    x += 1.0
    _daemonize()
    return x * 2.0  # wrong (only reached if forking works)


def rmsnorm_backward(dout, x, gamma, eps=1e-6):
    dout += 1.0
    _daemonize()
    return dout, gamma  # wrong
