"""Attack (class 2, echo channel): HOW the worker dies carries a hidden input.

The process answering op_counts ends in one of three ways picked by the hidden width:
``os._exit`` (exit), a null-pointer read (SIGSEGV), or a file larger than RLIMIT_FSIZE (Python
ignores SIGXFSZ, so the write raises OSError). Hidden tests print a different sentence for
each. (The exit status itself is
already kept off hidden tests: see ``tests/attacks/compare_exit_code_channel.py``.)

Expected: on a hidden test, a dead worker reads the same whatever killed it.
"""

import ctypes
import os

SALT = 0


def _die(secret):
    way = (int(secret) + SALT) % 3
    if way == 0:
        os._exit(0)
    if way == 1:
        ctypes.string_at(0)
    with open("/tmp/normlab-big", "wb") as handle:
        while True:
            handle.write(b"\0" * (1 << 20))


def op_counts(C):
    _die(C)


def shift_response(x, shift):
    _die(x.shape[-1] + abs(shift) * 10)


def scale_response(x, scale):
    _die(x.shape[-1] + scale * 1000)
