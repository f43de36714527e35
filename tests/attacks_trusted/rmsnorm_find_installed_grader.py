"""Attack (also seen, the sandbox's view): look for an installed copy of the grader in the
site-packages layouts the sandbox does not hide.

The sandbox binds /usr whole and hides the grader where it knows to look
(``lib/python3*/site-packages``, ``lib/python3*/dist-packages``, ``local/lib/python3*/dist-packages``
under each interpreter root). ``pip install`` into a python of its own under /usr/local (the
layout of the official Docker images) puts it in ``/usr/local/lib/python3.X/site-packages``,
which is not on that list. rmsnorm lists what it finds there and raises with it; public tests
show the exception's text.

Expected: no installed copy of the grader (hidden suites, reference) is readable in the sandbox.
"""

import glob
import os

PATTERNS = (
    "/usr/local/lib/python3*/site-packages/grader/suites/*",
    "/usr/local/lib/python3*/site-packages/grader/_course/solutions/*",
    "/usr/lib/python3*/site-packages/grader/suites/*",
    "/usr/local/lib64/python3*/site-packages/grader/suites/*",
)


def _found():
    hits = []
    for pattern in PATTERNS:
        for path in sorted(glob.glob(pattern)):
            try:
                with open(path, encoding="utf-8", errors="replace") as handle:
                    hits.append(f"{path}: {handle.read(120)!r}")
            except OSError:
                hits.append(path)
    return hits


def rmsnorm(x, gamma, eps=1e-6):
    hits = _found()
    raise RuntimeError("LEAK: " + " | ".join(hits) if hits else "nothing found")


def rmsnorm_backward(dout, x, gamma, eps=1e-6):
    return rmsnorm(x, gamma, eps)
