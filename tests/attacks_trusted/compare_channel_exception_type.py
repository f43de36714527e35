"""Attack (class 2, echo channel): the TYPE of a raised exception carries a hidden input.

Hidden tests show the nearest built-in exception type. There are about 60 of them, all
"a fixed vocabulary", so the student picks one by the hidden input: about 6 bits per test
(op_counts's width, the shift and the scale of the response tests).

Expected: hidden feedback names an exception type only from a short list the grader chose
(the types a test expects, NotImplementedError), never one of 60 the student chose.
"""

SALT = 0
TYPES = (
    BufferError, EOFError, ProcessLookupError, ChildProcessError, BlockingIOError, UnboundLocalError,
    FloatingPointError, ConnectionResetError, NotADirectoryError, IsADirectoryError, InterruptedError,
    PermissionError, TimeoutError, BrokenPipeError, RecursionError, ReferenceError, SystemError,
    StopAsyncIteration, UnicodeError, ModuleNotFoundError, ResourceWarning, BytesWarning,
)


def _raise(secret):
    raise TYPES[(int(secret) + SALT) % len(TYPES)]("salt")


def op_counts(C):
    _raise(C)


def shift_response(x, shift):
    _raise(abs(shift) * 10)


def scale_response(x, scale):
    _raise(x.shape[-1] + scale * 1000)
