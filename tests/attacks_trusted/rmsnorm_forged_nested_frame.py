"""Attack (class 4, amplification on the trusted side): an 18 MB frame of nested lists.

The student's code can write to the worker's response pipe. Before answering, rmsnorm writes
one extra, well-formed frame whose JSON header is ``[[],[],[],...]``: 6 million empty lists in
18 MB, under the 64 MiB frame cap. The trusted reader decodes every frame in full (``json.loads``
and then a copy of the tree) before it looks at the nonce that would make it drop the frame, so
18 MB of input become most of a gigabyte in the grading process, once per call.

Expected: the frame is refused or dropped before it is decoded (size, shape and depth checked
first, streaming parse); the grading process stays well under 500 MB.
"""

import struct
import sys

import numpy as np

COUNT = 6_000_000
_sent = []


def _flood():
    harness = sys.modules.get("__main__")
    protocol = sys.modules.get("protocol")
    if harness is None or protocol is None or not hasattr(harness, "RESPONSES") or _sent:
        return
    header = b"[" + b"[]," * (COUNT - 1) + b"[]]"
    protocol.write_frame(harness.RESPONSES, struct.pack(">I", len(header)) + header)
    _sent.append(1)


def rmsnorm(x, gamma, eps=1e-6):
    _flood()
    return x * 2.0 + 1.0


def rmsnorm_backward(dout, x, gamma, eps=1e-6):
    return dout * 2.0, gamma * 2.0
