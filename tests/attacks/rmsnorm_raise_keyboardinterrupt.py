"""Attack (catalog #4): raise KeyboardInterrupt / SystemExit, which many harnesses do not catch
(pytest treats KeyboardInterrupt as "stop the whole session")."""


def rmsnorm(x, gamma, eps=1e-6):
    x += 1.0
    raise KeyboardInterrupt


def rmsnorm_backward(dout, x, gamma, eps=1e-6):
    dout += 1.0
    raise SystemExit(0)
