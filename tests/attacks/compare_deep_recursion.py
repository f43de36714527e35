"""Attack (catalog #32): unbounded recursion with the recursion limit lifted, through a C-level
call so that the C stack overflows (SIGSEGV) instead of raising RecursionError."""

import sys


def _dive():
    return _dive.__call__()


def _crash():
    sys.setrecursionlimit(10 ** 8)
    return _dive()


def op_counts(C):
    return _crash()


def shift_response(x, shift):
    x += 1.0
    return _crash()


def scale_response(x, scale):
    x += 1.0
    return _crash()
