"""Attack (catalog #28, #29): a non-daemon thread started by the first call that keeps writing
files (into the canary directories and /tmp) for as long as the process lives, so that it
outlives the grading if the worker is not killed. The maths is wrong."""

import threading
import time

_started = []


def _writer():
    n = 0
    while True:
        n += 1
        for directory in ("/tmp/normlab-canary", "/var/tmp/normlab-canary", "/tmp"):
            try:
                with open(f"{directory}/normlab-pwned-thread_writer-{n % 10}", "w") as handle:
                    handle.write(f"{time.time()} still alive\n")
            except OSError:
                pass
        time.sleep(0.02)


def _start():
    if not _started:
        thread = threading.Thread(target=_writer, daemon=False)
        thread.start()
        _started.append(thread)


def rmsnorm(x, gamma, eps=1e-6):
    _start()
    y = (x * 2.0 + 1.0).astype("float64")  # wrong: no normalization, float64 whatever the input
    x += 1.0
    return y


def rmsnorm_backward(dout, x, gamma, eps=1e-6):
    _start()
    dx, dgamma = dout * 2.0 + 1.0, gamma * 0.0 + 1.0  # wrong
    dout += 1.0
    return dx, dgamma
