"""The rule of hidden feedback: only our fixed vocabulary, never a value the student chose.

Three layers are tested: the declarations (every message a hidden test may show, and the kind
of each of its parameters, against the catalog's templates), the guard that applies them to
every hidden test, and the suites (every label they give a check is one of ours).
"""

from __future__ import annotations

import ast
import re
import string
from pathlib import Path

import pytest

from grader import vocabulary
from grader.course import suites_dir
from grader.messages import LANGUAGES, Message, catalog

NEUTRAL = vocabulary.NEUTRAL


def placeholders(template: str) -> set[str]:
    return {field for _, field, _, _ in string.Formatter().parse(template) if field}


def test_every_message_allowed_on_hidden_tests_declares_exactly_its_parameters():
    for message_id, kinds in vocabulary.HIDDEN.items():
        assert message_id in catalog(), message_id
        for lang in LANGUAGES:
            assert placeholders(catalog()[message_id][lang]) == set(kinds), (message_id, lang)
        assert set(kinds.values()) <= set(vocabulary.KINDS), message_id


def test_hints_carry_no_values_at_all():
    for message_id, templates in catalog().items():
        if message_id.startswith("hint."):
            assert all(not placeholders(t) for t in templates.values()), message_id


def test_messages_that_echo_the_students_values_are_not_allowed_on_hidden_tests():
    echoing = {"check.values_public", "check.shape", "check.keys", "check.value_public", "check.non_finite"}
    echoing |= {"check.sublayer_calls", "check.assertion", "check.public_error", "fault.exception_text"}
    echoing |= {"fault.traceback", "fault.died_detail", "fault.bad_result_detail", "report.printed"}
    assert not echoing & set(vocabulary.HIDDEN)


@pytest.mark.parametrize(
    "message",
    [
        Message("check.values_hidden", {"what": "rmsnorm(x, gamma, eps)", "index": "(0, 3)"}),  # an extra value
        Message("check.values_public", {"what": "x", "count": 1, "size": 2, "index": "(0,)", "rtol": 1e-9}),
        Message("check.not_array", {"what": "rmsnorm(x, gamma, eps)", "type": "LEAK_4096"}),  # a class name
        Message("check.mutated", {"function": "rmsnorm", "names": "x"}),  # which inputs: the student's choice
        Message("fault.raised", {"function": "rmsnorm", "exc_type": "BlockingIOError"}),  # not one of the few
        Message("check.value_hidden", {"what": "op_counts(4096)"}),  # a literal hidden argument
        Message("fault.raised", {"function": "rmsnorm", "exc_type": "Leak4096Error"}),
        # Trial 62: a built-in type, a stub's name or a dtype chosen by the hidden input's size
        Message("fault.raised", {"function": "rmsnorm", "exc_type": "ValueError"}),
        Message("fault.not_implemented_inside", {"function": "rmsnorm", "inner": "inspect_config"}),
        Message("check.dtype", {"what": "dx", "actual": "uint8", "expected": "float64"}),
        Message("check.not_array", {"what": "rmsnorm(x, gamma, eps)", "type": "list"}),  # a type it chose
        Message("check.probes_not_list", {"type": "dict"}),
        Message("check.bad_kind_hidden", {"what": "rmsnorm(x, gamma, eps)", "dtype": "complex"}),
        Message("fault.missing", {"function": "not_ours", "module": "rmsnorm.py"}),
        Message("hint.eps_outside_sqrt", {"extra": 1}),
        Message("report.printed", {"output": "LEAK"}),
    ],
)
def test_the_guard_replaces_any_message_that_carries_something_not_ours(message):
    assert not vocabulary.allowed_on_hidden(message)
    assert vocabulary.for_hidden([message]) == (NEUTRAL,)


@pytest.mark.parametrize(
    "message",
    [
        Message("check.values_hidden", {"what": "rmsnorm(x, gamma, eps)"}),
        Message("check.dtype_hidden", {"what": "dx", "expected": "float16"}),
        Message(
            "check.not_array", {"what": "stack_trace(x, params, eps, placement)", "type": "an object of another type"}
        ),
        Message("check.mutated_hidden", {"function": "postnorm_block"}),
        Message("fault.raised_hidden", {"function": "rmsnorm"}),
        Message("fault.not_implemented_inside_hidden", {"function": "stack_trace"}),
        Message("check.value_hidden", {"what": 'inspect_config(config)["n_layers"]'}),
        Message("hint.eps_outside_sqrt"),
    ],
)
def test_the_guard_keeps_what_is_ours(message):
    assert vocabulary.for_hidden([message]) == (message,)


def _literal_parts(node: ast.expr) -> list[str] | None:
    """The literal text of a label written in a suite (a string, or an f-string's literal
    parts). What an f-string interpolates is known only when the test runs: the guard checks
    it there, and the trivial-implementation test makes every hidden check fail at least once
    to prove none is withheld."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.JoinedStr):
        return [str(value.value) for value in node.values if isinstance(value, ast.Constant)]
    return None


def test_every_label_a_suite_gives_a_check_is_ours():
    """``what=`` is shown on hidden tests: literal text without sizes or arguments."""
    found = 0
    for path in sorted(Path(suites_dir()).glob("test_*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            for keyword in getattr(node, "keywords", []):
                if keyword.arg != "what":
                    continue
                parts = _literal_parts(keyword.value)
                if parts is None:
                    continue  # a label passed through (a helper's parameter), checked where it is written
                found += 1
                text = "".join(parts)
                assert vocabulary.is_label(text), f"{path.name}:{node.lineno}: {text!r} is not a label"
    assert found > 30


def test_labels_are_letters_and_code_punctuation_and_dtype_names():
    assert vocabulary.is_label('inspect_config(config)["eps"]')
    assert vocabulary.is_label("layernorm(x, gamma, beta, eps) on float16 input")
    assert not vocabulary.is_label("rmsnorm(x[:, 3])")
    assert not vocabulary.is_label("shape (4, 8)")
    assert not re.search(r"\d", "".join(vocabulary.ROLES).replace("4-D", ""))


LITERAL_INPUTS = (
    re.compile(r"\(\s*\d+\s*(?:,\s*\d+\s*)+\)"),  # a literal shape: (2, 1, 3, 7)
    re.compile(r"\b[A-Za-z]\s*=\s*\d"),  # a size given a value: C = 4
    re.compile(r"\b\d+[- ]layers?\b"),  # a literal depth: 6-layer, 3 layers
    re.compile(r"\b\d+e\d+\b"),  # a literal magnitude: 1e4
)


def literal_inputs(text: str) -> list[str]:
    """The literal sizes and arguments a description gives away."""
    return [m.group(0) for pattern in LITERAL_INPUTS for m in pattern.finditer(text)]


def test_the_scanner_finds_literal_sizes_and_arguments():
    assert literal_inputs("e.g. (2, 1, 3, 7) and C = 1, the 6-layer stack, values around 1e4")
    assert literal_inputs("A (B, T, C) batch of float16, eps inside, 1 + weight, C - 1, row 0") == []


def test_hidden_descriptions_name_cases_by_role_not_by_their_sizes():
    """What a hidden test checks is shown to the student; its inputs are not (issue 11)."""
    from grader import discovery
    from grader.course import EXERCISES
    from grader.messages import descriptions

    found = []
    for exercise in EXERCISES:
        for test in discovery.hidden_suite(exercise):
            name = f"{exercise}/hidden/{test.name}"
            texts = [test.description, descriptions().get(name, {}).get("pt-BR", "")]
            found += [f"{name}: {hit}" for text in texts for hit in literal_inputs(text)]
    assert found == []
