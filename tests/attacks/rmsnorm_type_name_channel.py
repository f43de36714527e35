"""Attack (catalog #37): a side channel through the type name of the answer.

The answer is an instance of a class created on the fly whose name is ``LEAK:`` followed by
the hex bytes of the (hidden) input. If the feedback names the type of a refused answer
without bounding what a student-chosen name may contain, every hidden input leaks in full.
"""


def _leaking(*arrays):
    return type("LEAK:" + "".join(a.tobytes().hex() for a in arrays), (), {})()


def rmsnorm(x, gamma, eps=1e-6):
    answer = _leaking(x, gamma)
    x += 1.0
    return answer


def rmsnorm_backward(dout, x, gamma, eps=1e-6):
    answer = _leaking(dout, x, gamma)
    dout += 1.0
    return answer, answer
