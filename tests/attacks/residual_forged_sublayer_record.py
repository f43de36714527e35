"""Attack (catalog #15, #17): tamper with the sublayer object the grader passes in.

The block never calls the sublayer for real; it introspects it (``vars()``), overwrites its
call counter and recorded inputs so that it looks as if it had been called exactly once, on
the raw stream, and replaces its ``__call__``. The maths is wrong and x is modified in place.
"""


def _tamper(sublayer, x):
    try:
        vars(sublayer)
        sublayer.calls = 1
        sublayer.inputs = [x.copy()]
        type(sublayer).__call__ = lambda self, h: h
    except (AttributeError, TypeError):
        pass


def block(x, sublayer, gamma, eps=1e-6):
    _tamper(sublayer, x)
    y = (x * 2.0 + 1.0).astype("float64")  # wrong: no normalization, float64 whatever the input
    x += 1.0
    return y


def postnorm_block(x, sublayer, gamma, eps=1e-6):
    _tamper(sublayer, x)
    y = (x * 2.0 + 1.0).astype("float64")  # wrong: no normalization, float64 whatever the input
    x += 1.0
    return y
