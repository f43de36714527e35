"""Attack (class 3, a student's value becomes a grader fault): a lone UTF-16 surrogate in what
the student's code prints.

``print(chr(0xD800))`` is legal Python; the worker captures the text and the trusted side shows
it on public tests. Every writer that encodes the report as UTF-8 then raises
UnicodeEncodeError: ``--format text``/``json``/``gradescope`` on stdout and with ``-o``. No
report at all (exit 3), and under Gradescope an empty ``results.json``.

Expected: a report in every format, the surrogate escaped.
"""

import numpy as np


def rmsnorm(x, gamma, eps=1e-6):
    print("output with a lone surrogate: " + chr(0xD800))
    return np.asarray(x, dtype=np.float64) * 2 + 1


def rmsnorm_backward(dout, x, gamma, eps=1e-6):
    print(chr(0xD800))
    return dout * 2, gamma * 2
