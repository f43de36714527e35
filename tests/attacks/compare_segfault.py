"""Attack (catalog #32): dereference a null pointer with ctypes (SIGSEGV in the process)."""

import ctypes


def op_counts(C):
    return ctypes.string_at(0)


def shift_response(x, shift):
    x += 1.0
    return ctypes.string_at(0)


def scale_response(x, scale):
    x += 1.0
    return ctypes.string_at(0)
