"""Attack (catalog #31): try to write 10 GB of files to /tmp, /var/tmp, /dev/shm, the working
directory and the canary directories, in 1 MiB chunks, until the writes fail (on the first
call of the process).

If more than 64 MiB could be written in total the process exits with status 97 (a tell-tale
crash instead of the expected wrong answer). Whatever was written inside the worker is removed
again so that only this exercise is affected. The maths is wrong.
"""

import os

CHUNK = b"\0" * (1 << 20)
LIMIT = 10 * 1000 ** 3


_flooded = []


def _flood():
    if _flooded:  # once per process
        return
    _flooded.append(True)
    written, paths = 0, []
    for directory in ("/tmp/normlab-canary", "/var/tmp/normlab-canary", "/tmp", "/var/tmp", "/dev/shm", "."):
        for n in range(1000):
            path = os.path.join(directory, f"normlab-pwned-disk_flood-{n}")
            try:
                handle = open(path, "wb")
            except OSError:
                break
            paths.append(path)
            try:
                with handle:
                    while written < LIMIT:
                        handle.write(CHUNK)
                        handle.flush()
                        written += len(CHUNK)
            except OSError:
                if n > 2:
                    break
    for path in paths:
        try:
            os.remove(path)
        except OSError:
            pass
    if written > 64 << 20:
        os._exit(97)  # the file size and tmpfs limits did not hold


def rmsnorm(x, gamma, eps=1e-6):
    _flood()
    y = (x * 2.0 + 1.0).astype("float64")  # wrong: no normalization, float64 whatever the input
    x += 1.0
    return y


def rmsnorm_backward(dout, x, gamma, eps=1e-6):
    _flood()
    dx, dgamma = dout * 2.0 + 1.0, gamma * 0.0 + 1.0  # wrong
    dout += 1.0
    return dx, dgamma
