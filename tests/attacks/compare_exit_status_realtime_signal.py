"""Attack (catalog #3, #4, #33): exit with status 128 + 53.

bubblewrap reports a child killed by signal N as exit status 128 + N, so 181 looks like "killed
by signal 53", a real-time signal. Real-time signals are valid signal numbers but have no
``signal.Signals`` member; a grader that converts the number with ``signal.Signals(n)``
raises ValueError while scoring this student.
"""

import os


def op_counts(C):
    os._exit(128 + 53)


def shift_response(x, shift):
    x += 1.0
    os._exit(128 + 40)


def scale_response(x, scale):
    x += 1.0
    os._exit(128 + 64)
