"""The porting detective (question 6): the reference detective is right on every kind of port,
hidden or not; no constant label scores; bad answers are scored results; and a submission cannot
read a port's parameters (only arrays of outputs cross the channel)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from helpers import copy_solutions, message_ids

from grader import course
from grader.reference import Reference
from grader.runner import Options, grade
from grader.suites import test_porting as suite
from grader.vocabulary import allowed_on_hidden


@pytest.fixture(scope="module")
def reference():
    ref = Reference(course.solutions_dir())
    yield ref
    ref.close()


def test_the_suite_agrees_with_the_module(reference):
    module = reference._functions["diagnose"].__globals__
    assert module["LABELS"] == suite.LABELS
    assert (module["WIDTH"], module["MAX_PROBES"], module["MAX_ROWS"]) == (
        suite.WIDTH,
        suite.MAX_PROBES,
        suite.MAX_ROWS,
    )


def test_every_hidden_test_mixes_kinds_and_covers_every_label():
    for case, ports in suite.CASES.items():
        assert len({label for label, _ in ports}) >= 2, case
    assert {label for ports in suite.CASES.values() for label, _ in ports} == set(suite.LABELS)


def test_hidden_ports_go_beyond_the_public_ones():
    """The public tests show eps and missing_final_norm ports (and a match) of one draw; the hidden
    ones add the other four kinds, other eps values, unit gains and a strong sublayer."""
    public = (course.exercises_dir() / "test_porting.py").read_text()
    hidden = {label for ports in suite.CASES.values() for label, _ in ports}
    shown = {label for label in suite.LABELS if f'"{label}"' in public}
    assert shown == {"eps", "match", "missing_final_norm"}
    assert len(hidden - shown) == 4
    eps_values = {setup.get(key) for ports in suite.CASES.values() for _, setup in ports for key in ("eps", "port_eps")}
    assert {1e-8, 1e-4, 1e-3} <= eps_values


@pytest.mark.parametrize("case", sorted(suite.CASES))
def test_the_reference_detective_names_every_hidden_port_on_many_draws(reference, case):
    """Not only on the suite's seed: on 40 other draws of every hidden setup."""
    probes = suite.usable_probes(reference.probes())
    wrong = []
    for seed in range(40):
        rng = np.random.default_rng(100 + seed)
        for truth, setup in suite.CASES[case]:
            params = suite.draw(rng, setup)
            ref = [reference.forward(p, params) for p in probes]
            port = [suite.rounded(reference.forward(p, params, truth), rng) for p in probes]
            got = reference.diagnose(probes, ref, port)
            if got != truth:
                wrong.append((seed, truth, got))
    assert not wrong


def test_each_port_differs_from_the_reference_except_match(reference):
    rng = np.random.default_rng(5)
    probes = suite.usable_probes(reference.probes())
    params = suite.draw(rng, {})
    for label in suite.LABELS:
        gaps = [np.abs(reference.forward(p, params, label) - reference.forward(p, params)).max() for p in probes]
        assert (max(gaps) == 0) == (label == "match"), label


def _porting(report):
    return [r for r in report.results if r.exercise == "porting" and r.visibility.value == "hidden"]


def _submission(tmp_path, name, probes_body=None, diagnose_body=None):
    """The reference, with porting.py's probes() or diagnose() replaced."""
    target = copy_solutions(tmp_path / name)
    path = target / "porting.py"
    source = path.read_text()
    if probes_body is not None:
        source += f"\n\ndef probes():\n{probes_body}\n"
    if diagnose_body is not None:
        source += f"\n\ndef diagnose(probes, reference_outputs, port_outputs):\n{diagnose_body}\n"
    path.write_text(source)
    return target


def test_the_reference_scores_full_marks(tmp_path):
    report = grade(copy_solutions(tmp_path / "ref"), Options(suites=("public", "hidden"), select="porting"))
    results = [r for r in report.results if r.exercise == "porting"]
    assert len(results) == 6 and all(r.score == r.max_score > 0 for r in results)


@pytest.mark.parametrize("label", suite.LABELS)
def test_a_constant_label_scores_zero(tmp_path, label):
    """Always answering one label, the commonest of the hidden ports included, earns nothing."""
    report = grade(
        _submission(tmp_path, label, diagnose_body=f"    return {label!r}"),
        Options(suites=("public", "hidden"), select="porting"),
    )
    results = [r for r in report.results if r.exercise == "porting"]
    assert len(results) == 6 and sum(r.score for r in results) == 0
    commonest = max(suite.LABELS, key=lambda lab: sum(t == lab for ports in suite.CASES.values() for t, _ in ports))
    assert commonest == "eps"  # the hidden ports' commonest kind: covered above like every label


BAD_PROBES = {
    "a_string": ("    return 'probes'", "check.probes_not_list"),
    "too_many": ("    return [np.ones((2, WIDTH))] * (MAX_PROBES + 1)", "check.probes_count"),
    "none_at_all": ("    return []", "check.probes_count"),
    "wrong_width": ("    return [np.ones((2, 8))]", "check.probe_form"),
    "too_many_rows": ("    return [np.ones((MAX_ROWS + 1, WIDTH))]", "check.probe_form"),
    "float32": ("    return [np.ones((2, WIDTH), np.float32)]", "check.probe_form"),
    "not_finite": ("    return [np.full((2, WIDTH), np.inf)]", "check.probe_form"),
    "huge": ("    return [np.ones((100_000, WIDTH))]", "fault.bad_result"),  # the channel refuses it
}


@pytest.mark.parametrize("case", sorted(BAD_PROBES))
def test_bad_probes_are_a_scored_failure_with_a_message(tmp_path, case):
    body, message = BAD_PROBES[case]
    report = grade(_submission(tmp_path, case, probes_body=body), Options(suites=("hidden",), select="porting"))
    results = _porting(report)
    assert len(results) == 4 and all(r.score == 0 and r.status.value == "failed" for r in results)
    assert all(r.messages and all(allowed_on_hidden(m) for m in r.messages) for r in results)
    if message is not None:
        assert message in message_ids(report)


BAD_LABELS = {
    "unknown_label": ("    return 'layernorm'", "check.porting_label"),
    "an_int": ("    return 3", "check.value_type"),
    "none": ("    return None", "check.value_type"),
    "a_list_of_labels": ("    return list(LABELS)", "check.value_type"),
}


@pytest.mark.parametrize("case", sorted(BAD_LABELS))
def test_bad_labels_are_a_scored_failure_with_a_message(tmp_path, case):
    body, message = BAD_LABELS[case]
    report = grade(_submission(tmp_path, case, diagnose_body=body), Options(suites=("hidden",), select="porting"))
    results = _porting(report)
    assert len(results) == 4 and all(r.score == 0 and r.status.value == "failed" for r in results)
    assert message in message_ids(report)


# Runs in the worker. Looks for the port everywhere a submission could: what it was given
# (anything but lists of float64 arrays), the live objects (the parameters' dict), and the
# frames above it (the suite's locals). If it finds anything it says so with an exception of
# its own type (ZeroDivisionError) and answers with the label it read, if any; otherwise it
# answers a label that is never right, so every test fails with the label message.
ATTACK = r"""
    import gc, sys
    found = None
    for given in (probes, reference_outputs, port_outputs):
        if type(given) is not list or any(type(a) is not np.ndarray or a.dtype != np.float64 for a in given):
            found = found or "an object other than a list of float64 arrays"
    for obj in gc.get_objects():
        if isinstance(obj, dict) and ("port_eps" in obj or "weight_1" in obj or "mismatch" in obj):
            found = found or obj.get("mismatch", "a parameters dict")
    frame = sys._getframe(1)
    while frame is not None:
        for name in ("truth", "params", "reference", "CASES", "mismatch", "port_eps"):
            if name in frame.f_locals or name in frame.f_globals:
                found = found or str(frame.f_locals.get(name, name))
        frame = frame.f_back
    for name, module in list(sys.modules.items()):
        if name.startswith("grader") or "suites" in name:
            found = found or name
    if found in LABELS:
        return found
    if found is not None:
        raise ZeroDivisionError("found")
    return "nothing_found"
"""


def test_a_submission_cannot_read_a_ports_parameters(tmp_path):
    report = grade(_submission(tmp_path, "attack", diagnose_body=ATTACK), Options(suites=("hidden",), select="porting"))
    results = _porting(report)
    assert len(results) == 4 and all(r.score == 0 for r in results)
    # Each test failed on its first port, with the label message: the attack found nothing.
    assert all([m.id for m in r.messages] == ["check.porting_label"] for r in results), [r.messages for r in results]


def test_the_attack_would_find_a_leak_if_there_were_one(reference):
    """The attack is not vacuous: run in this (trusted) process, beside the suite's locals, it finds them."""
    namespace = dict(reference._functions["diagnose"].__globals__)
    exec("def attack(probes, reference_outputs, port_outputs):\n" + ATTACK, namespace)
    truth, params = "offset_gain", suite.draw(np.random.default_rng(0), {})  # noqa: F841  (what the attack reads)
    try:
        with warnings.catch_warnings():  # walking every live object touches deprecated attributes (torch's)
            warnings.simplefilter("ignore")
            answer = namespace["attack"]([np.ones((2, 16))], [np.ones((2, 16))], [np.ones((2, 16))])
    except ZeroDivisionError:
        answer = "raised: found something"
    assert answer != "nothing_found"


def test_a_hidden_ports_hint_does_not_tell_its_kind():
    """A diagnose that counts its calls can answer from a table if the hint names the port's
    kind: for any wrong label, the hint must be the same whatever the port's true kind."""
    for wrong in suite.LABELS:
        given = {hint for truth in suite.LABELS for label, hint in suite.hints(truth) if label == wrong != truth}
        assert len(given) == 1, (wrong, given)


def test_a_students_probes_never_grow_the_reference_cache(tmp_path):
    """The reference's answers are kept for the next process (suites/__pycache__); the porting
    suite runs the reference on the student's probes, and random probes grew that file by ~130
    answers a grading until its 8192-answer cap (red team, round 3): answered, never kept."""
    from grader.reference import AnswerFile

    sub = copy_solutions(tmp_path / "sub")
    source = (sub / "porting.py").read_text()
    old = "    rng = np.random.default_rng(6)\n"
    assert old in source
    (sub / "porting.py").write_text(source.replace(old, "    rng = np.random.default_rng()\n", 1))
    kept = AnswerFile(course.suites_dir() / "__pycache__", course.solutions_dir()).path
    grade(sub, Options(select="porting"))
    before = kept.stat().st_size if kept.exists() else 0
    for _ in range(2):
        grade(sub, Options(select="porting"))
    assert (kept.stat().st_size if kept.exists() else 0) == before
