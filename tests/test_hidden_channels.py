"""Hidden feedback does not depend on which word the student's code chose (trial 62).

A hostile rmsnorm picks an outcome from the hidden input's size: which built-in exception to
raise, which of its own stubs to call, how to die, which type or dtype to return (never the expected
one: whether it is right is the one thing every test must say). If the feedback named the
choice, each hidden test would send a few bits of its input back to the student. Two
submissions that differ only in how sizes map to choices must read the same on every hidden test.
"""

import pytest
from helpers import patched

from grader.model import Visibility
from grader.runner import Options, grade

ORIGINAL = "def rmsnorm(x, gamma, eps=1e-6):\n"

CHANNELS = {
    "exception": (
        "    kinds = [ValueError, TypeError, IndexError, KeyError, AttributeError, ZeroDivisionError,\n"
        "             RuntimeError, OverflowError, LookupError, ArithmeticError, NameError, OSError]\n"
        "    raise kinds[(np.shape(x)[-1] + SHIFT) % len(kinds)]('size')\n"
    ),
    "stub": (
        "    def inspect_config(config):\n        raise NotImplementedError\n"
        "    def probes(C):\n        raise NotImplementedError\n"
        "    def quantize(w):\n        raise NotImplementedError\n"
        "    return [inspect_config, probes, quantize][(np.shape(x)[-1] + SHIFT) % 3](x)\n"
    ),
    "crash": (
        "    import os\n"
        "    ways = [lambda: os._exit(3), os.abort, lambda: os._exit(1)]\n"
        "    ways[(np.shape(x)[-1] + SHIFT) % len(ways)]()\n"
    ),
    "type": (
        "    kinds = [list, tuple, dict, set, str, float, int, bool, complex, bytes]\n"
        "    return kinds[(np.shape(x)[-1] + SHIFT) % len(kinds)]()\n"
    ),
    "dtype": (
        "    kinds = [np.uint8, np.int8, np.int16, np.int32, np.int64, np.uint16, np.uint32]\n"
        "    return np.zeros(np.shape(x), dtype=kinds[(np.shape(x)[0] + SHIFT) % len(kinds)])\n"
    ),
}


def _hidden_feedback(folder):
    report = grade(folder, Options(suites=("hidden",), select="rmsnorm and not backward"))
    hidden = [r for r in report.results if r.visibility is Visibility.HIDDEN]
    assert hidden and all(r.score == 0 for r in hidden)
    return {r.name: [(m.id, sorted(m.params.items())) for m in r.messages] for r in hidden}


@pytest.mark.parametrize("channel", sorted(CHANNELS))
def test_hidden_feedback_does_not_say_which_outcome_the_code_chose(tmp_path, channel):
    feedback = [
        _hidden_feedback(patched(tmp_path / str(shift), "rmsnorm", ORIGINAL, ORIGINAL + body))
        for shift in (0, 1)
        for body in [CHANNELS[channel].replace("SHIFT", str(shift))]
    ]
    assert feedback[0] == feedback[1]
