"""A repeated call to a ``course.REPEATABLE`` function gets its first answer; nothing else is reused."""

import pytest

from grader.course import REPEATABLE
from grader.faults import StudentFault
from grader.integrations.nbgrader.native import InKernelWorker, local_student


class Counting(InKernelWorker):
    """The in-kernel worker, counting the calls that reach the student's code."""

    def __init__(self, namespace, scratch):
        super().__init__(namespace, scratch)
        self.calls: list[str] = []

    def call(self, function, args, kwargs, seconds=None, start_seconds=None):
        self.calls.append(function)
        return super().call(function, args, kwargs, seconds, start_seconds)


def _student(namespace, tmp_path):
    student = local_student(namespace, str(tmp_path))
    worker = Counting(namespace, str(tmp_path))
    student._worker = worker
    return student, worker


def test_the_same_config_is_asked_once_and_answered_the_same(tmp_path):
    asked = []

    def inspect_config(config):
        asked.append(config["model_type"])
        print("reading", config["model_type"])
        return {"model_type": config["model_type"], "n_layers": len(asked)}  # changes call to call

    student, worker = _student({"inspect_config": inspect_config}, tmp_path)
    first = student.inspect_config({"model_type": "llama"})
    first["n_layers"] = 99  # a test changing its copy changes nobody else's
    again = student.inspect_config({"model_type": "llama"})
    other = student.inspect_config({"model_type": "gemma2"})
    assert worker.calls == ["inspect_config", "inspect_config"] and asked == ["llama", "gemma2"]
    assert again == {"model_type": "llama", "n_layers": 1} and other["n_layers"] == 2
    assert student.recorded().function == "inspect_config" and student.output == ["reading llama\n"] * 2 + [
        "reading gemma2\n"
    ]


def test_a_call_that_raised_is_made_again(tmp_path):
    def inspect_config(config):
        raise KeyError("num_hidden_layers")

    student, worker = _student({"inspect_config": inspect_config}, tmp_path)
    for _ in range(2):
        with pytest.raises(StudentFault):
            student.inspect_config({"model_type": "llama"})
    assert worker.calls == ["inspect_config"] * 2


def test_other_functions_are_always_called(tmp_path):
    import numpy as np

    assert "rmsnorm" not in REPEATABLE
    student, worker = _student({"rmsnorm": lambda x, gamma, eps=1e-6: x * gamma}, tmp_path)
    for _ in range(3):
        student.rmsnorm(np.ones((2, 3)), np.ones(3))
    assert worker.calls == ["rmsnorm"] * 3


def test_a_huge_answer_is_made_again_not_kept(tmp_path):
    # Kept answers live as long as the grading: a student answering with megabytes per config
    # must not make the grading process hold a copy of each.
    import numpy as np

    def inspect_config(config):
        return {"model_type": config["model_type"], "blob": np.zeros(1_000_000)}

    student, worker = _student({"inspect_config": inspect_config}, tmp_path)
    for _ in range(2):
        student.inspect_config({"model_type": "llama"})
    assert worker.calls == ["inspect_config", "inspect_config"] and not student._answered
