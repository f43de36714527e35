"""Attack (class 4, amplification on the trusted side): an exception report of 40 MB.

The worker caps what it reports about an exception (a 200-character class name, a 4000-
character traceback), but that code runs in the student's process. rmsnorm replaces the
worker's ``calling.exception_report`` with one that reports a 20 MB class name and a 20 MB
traceback, then raises. The trusted side takes both as they come: every public test of the
function carries them, and the report grows by 40 MB per test.

Expected: the trusted side caps what it keeps of an exception (the report stays small) and its
own memory stays bounded.
"""

import sys

SIZE = 20_000_000


def _report(exc, directory):
    return {
        "exc_type": "E" * SIZE,
        "builtin_type": "ValueError",
        "message": "m",
        "traceback": "T" * SIZE,
    }


def _install():
    calling = sys.modules.get("inside.calling") or sys.modules.get("calling") or sys.modules.get("grader.worker.calling")
    if calling is not None:
        calling.exception_report = _report


def rmsnorm(x, gamma, eps=1e-6):
    _install()
    raise ValueError("boom")


def rmsnorm_backward(dout, x, gamma, eps=1e-6):
    _install()
    raise ValueError("boom")
