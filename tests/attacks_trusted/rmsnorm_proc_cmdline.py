"""Attack (also seen, the sandbox's view): read the host's paths off the sandbox's PID 1.

Inside the PID namespace, PID 1 is bubblewrap itself, and ``/proc/1/cmdline`` is its whole
command line: every ``--ro-bind HOST_PATH ...`` and ``--tmpfs HOST_PATH``, including the host
path of this submission's private copy and of the directories hidden with a tmpfs (where the
hidden suites live). rmsnorm raises an exception carrying those paths; public tests show the
exception's text.

Expected: the sandbox's own processes show no host path of the grading (no submission copy,
no hidden directory, no harness location).
"""

import os


def _interesting():
    found = []
    for pid in ("1", "self"):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as handle:
                argv = handle.read().split(b"\0")
        except OSError:
            continue
        for arg in argv:
            text = arg.decode("utf-8", "replace")
            if text.startswith("/") and text not in found and not text.startswith(("/usr", "/proc", "/dev")):
                found.append(text)
    return found


def rmsnorm(x, gamma, eps=1e-6):
    raise RuntimeError("LEAK: " + " ".join(_interesting()))


def rmsnorm_backward(dout, x, gamma, eps=1e-6):
    raise RuntimeError("LEAK: " + " ".join(_interesting()))
