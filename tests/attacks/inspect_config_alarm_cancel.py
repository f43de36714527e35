"""Attack (catalog #25): cancel in-process timers (``signal.alarm(0)``, ``setitimer``, the
faulthandler watchdog) so that a timeout implemented inside the process never fires, then
sleep past any limit."""

import faulthandler
import signal
import time


def _cancel_timers():
    signal.alarm(0)
    for timer in (signal.ITIMER_REAL, signal.ITIMER_VIRTUAL, signal.ITIMER_PROF):
        signal.setitimer(timer, 0)
    faulthandler.cancel_dump_traceback_later()
    signal.signal(signal.SIGALRM, signal.SIG_IGN)


def inspect_config(config):
    _cancel_timers()
    deadline = time.monotonic() + 1e6
    while time.monotonic() < deadline:
        _cancel_timers()
        time.sleep(0.01)
