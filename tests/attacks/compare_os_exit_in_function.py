"""Attack (catalog #4): os._exit(0) inside every function: the process vanishes with status 0
in the middle of a test, bypassing every exception handler."""

import os


def op_counts(C):
    os._exit(0)


def shift_response(x, shift):
    x += 1.0
    os._exit(0)


def scale_response(x, scale):
    x += 1.0
    os._exit(0)
