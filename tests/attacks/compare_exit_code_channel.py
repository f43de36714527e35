"""Attack (catalog #37): a side channel through the exit status.

Each function exits with a status that encodes its (hidden) input: op_counts(C) exits with
``C % 120 + 2``, the response functions with seven bits of ``x``'s data. If the feedback of a hidden
test echoes the exit status, seven bits of hidden input leak per test and per submission.
"""

import os
import zlib


def op_counts(C):
    os._exit(int(C) % 120 + 2)


def shift_response(x, shift):
    os._exit(zlib.crc32(x.tobytes()) % 120 + 2)


def scale_response(x, scale):
    os._exit(zlib.crc32(x.tobytes()) % 120 + 2)
