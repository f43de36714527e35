"""An untouched stub's NotImplementedError is asked for once, not once a test; a function that
raises it only for some inputs is called every time; and the worker's word that a function is a
stub never carries one call's answer into feedback that may show it."""

import numpy as np
import pytest

from grader import checks
from grader.faults import StudentFault
from grader.integrations.nbgrader.native import InKernelWorker, local_student
from grader.sandbox.inside.calling import is_untouched_stub


class Counting(InKernelWorker):
    """The in-kernel worker (the sandbox's own calling code), counting the calls it makes."""

    def __init__(self, namespace, scratch, forge=None):
        super().__init__(namespace, scratch)
        self.calls: list[str] = []
        self.forge = forge

    def call(self, function, args, kwargs, seconds=None, start_seconds=None):
        self.calls.append(function)
        reply = super().call(function, args, kwargs, seconds, start_seconds)
        if self.forge is not None:
            reply.message.update(self.forge(args))
        return reply


def _student(namespace, tmp_path, forge=None):
    student = local_student(namespace, str(tmp_path))
    worker = Counting(namespace, str(tmp_path), forge)
    student._worker = worker
    return student, worker


def _raise_on(student, hidden, *args):
    checks.set_hidden(hidden)
    with pytest.raises(StudentFault) as fault:
        student.rmsnorm(*args)
    return fault.value


def rmsnorm_stub(x, gamma, eps=1e-6):
    """As released."""
    # YOUR CODE HERE
    raise NotImplementedError()


def test_the_released_stub_shape_is_recognised_and_nothing_else():
    def with_message(x):
        raise NotImplementedError("later")

    def only_for_float16(x):
        if x.dtype == np.float16:
            raise NotImplementedError("float16")
        return x

    def message_from_input(x):
        raise NotImplementedError(x)

    def prints_first(x):
        print(x)
        raise NotImplementedError

    assert is_untouched_stub(rmsnorm_stub) and is_untouched_stub(with_message)
    assert not any(map(is_untouched_stub, (only_for_float16, message_from_input, prints_first, len)))


def test_an_untouched_stub_is_called_once_for_public_tests_and_once_for_hidden(tmp_path):
    student, worker = _student({"rmsnorm": rmsnorm_stub}, tmp_path)
    x, gamma = np.ones((2, 3)), np.ones(3)
    faults = [_raise_on(student, hidden, x, gamma) for hidden in (False, False, False, True, True)]
    assert worker.calls == ["rmsnorm", "rmsnorm"]
    assert {m.id for f in faults for m in f.messages} == {"fault.not_implemented"}
    assert student.answers == 5  # each given-again answer counts as an answer, as a call's does


def test_a_function_that_raises_for_some_inputs_only_is_called_every_time(tmp_path):
    def rmsnorm(x, gamma, eps=1e-6):
        if x.dtype == np.float16:
            raise NotImplementedError("float16 is next week")
        return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * gamma

    student, worker = _student({"rmsnorm": rmsnorm}, tmp_path)
    _raise_on(student, False, np.ones(3, dtype=np.float16), np.ones(3))
    checks.set_hidden(False)
    assert np.allclose(student.rmsnorm(np.ones(3), np.ones(3)), 1.0)
    assert worker.calls == ["rmsnorm", "rmsnorm"]


def test_a_stub_claim_forged_on_a_hidden_call_never_reaches_a_public_test(tmp_path):
    # The worker runs the student's code, so its word is the student's: here it says "stub" of a
    # function whose message holds its input. A public test must get its own call's answer.
    def rmsnorm(x, gamma, eps=1e-6):
        raise NotImplementedError(f"saw {x.ravel()[0]!r}")

    student, worker = _student({"rmsnorm": rmsnorm}, tmp_path, forge=lambda args: {"stub": True})
    _raise_on(student, True, np.full(3, 0.4375), np.ones(3))
    public = _raise_on(student, False, np.full(3, 2.0), np.ones(3))
    assert worker.calls == ["rmsnorm", "rmsnorm"]
    assert public.exc_message == "saw np.float64(2.0)"
