"""Attack (class 2, a fixed vocabulary chosen by the student): HOW the worker dies carries a
hidden input.

The process answering op_counts ends in one of three ways picked by the hidden width:
``os._exit`` (exit), a null-pointer read (SIGSEGV), or a file larger than RLIMIT_FSIZE (Python
ignores SIGXFSZ, so the write raises OSError). Hidden tests print a different sentence for
each. (The exit status itself is
already kept off hidden tests: see ``tests/attacks/compare_exit_code_channel.py``.)

Measured, not asserted: the reasons are the grader's own short vocabulary (exit, segv, abort,
killed, syscall, file_size, signal, cpu), and raising versus crashing is a status a student will
always see, so this is a channel of a few bits per test that Decision 2 allows as long as the
vocabulary stays short. Kept to show the size of that channel (FINDINGS.md).
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
