"""Attack (class 3, a student's value becomes a grader fault): a lone surrogate in an
exception's message.

rmsnorm raises ValueError whose message holds ``chr(0xDFFF)``, a lone UTF-16 surrogate.
Public tests show the exception's text (and the traceback's last line), so every writer that
encodes the report as UTF-8 raises UnicodeEncodeError: no report, exit 3.
(A class *named* with a surrogate cannot be made: ``type()`` refuses it.)

Expected: a report in every format, the surrogate escaped.
"""

SURROGATE = chr(0xDFFF)


def rmsnorm(x, gamma, eps=1e-6):
    raise ValueError("message with a lone surrogate " + SURROGATE)


def rmsnorm_backward(dout, x, gamma, eps=1e-6):
    raise ValueError(SURROGATE)
