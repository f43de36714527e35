"""Attack (catalog #26): allocate until memory runs out: 100 blocks of 1 GiB, then a single
100 GB array written to. Without a memory limit this takes the host down; with overcommit it
succeeds until something touches the pages. (The 1 GiB blocks are reserved, not written, so
that the attack hits the address-space limit at once instead of spending its time in page
faults.)"""

import numpy as np


def _bomb():
    blocks = [np.empty(1 << 27) for _ in range(100)]  # 100 x 1 GiB
    blocks.append(np.ones(100 * (1 << 30) // 8))  # 100 GB, every page written
    return blocks


def rmsnorm(x, gamma, eps=1e-6):
    x += 1.0
    _bomb()
    return x * 2.0  # wrong (never reached when memory is limited)


def rmsnorm_backward(dout, x, gamma, eps=1e-6):
    dout += 1.0
    _bomb()
    return dout, gamma  # wrong
