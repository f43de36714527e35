"""Attack (catalog #27, #34): run shell commands: ``subprocess.run``, ``os.system``,
``os.popen``, ``os.posix_spawn`` and ``multiprocessing`` children (fork and spawn), each trying to
copy /etc/shadow into the canary directory.

If any of them starts a process, the worker exits with status 97 (a tell-tale crash instead
of the expected wrong answer). The maths is wrong.
"""

import multiprocessing
import os
import subprocess

COMMAND = "cat /etc/shadow > /tmp/normlab-canary/normlab-pwned-subprocess; id"


def _child():
    os.system(COMMAND)


def _system():
    if os.system(COMMAND) != 0:
        raise OSError("os.system could not run the command")


def _popen():
    with os.popen(COMMAND) as pipe:
        if not pipe.read():
            raise OSError("os.popen printed nothing")


def _attempts():
    yield lambda: subprocess.run(["/bin/sh", "-c", COMMAND], timeout=1)
    yield lambda: subprocess.Popen(["/bin/sh", "-c", COMMAND]).wait(1)
    yield _system
    yield _popen
    yield lambda: os.posix_spawn("/bin/sh", ["/bin/sh", "-c", COMMAND], {})
    yield lambda: multiprocessing.get_context("fork").Process(target=_child).start()
    yield lambda: multiprocessing.get_context("spawn").Process(target=_child).start()


def _shell():
    for attempt in _attempts():
        try:
            attempt()
        except Exception:
            continue
        os._exit(97)  # a process was started


def rmsnorm(x, gamma, eps=1e-6):
    _shell()
    y = (x * 2.0 + 1.0).astype("float64")  # wrong: no normalization, float64 whatever the input
    x += 1.0
    return y


def rmsnorm_backward(dout, x, gamma, eps=1e-6):
    _shell()
    dx, dgamma = dout * 2.0 + 1.0, gamma * 0.0 + 1.0  # wrong
    dout += 1.0
    return dx, dgamma
