"""The message catalog: every message in every language, with the same placeholders."""

import re
import string
from pathlib import Path

import numpy as np
import pytest

from grader import messages
from grader.messages import Message, normalize_language, render

PACKAGE = Path(messages.__file__).resolve().parent


def _fields(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


@pytest.mark.parametrize("message_id", sorted(messages.catalog()))
def test_every_language_has_the_message_with_the_same_fields(message_id):
    entry = messages.catalog()[message_id]
    assert set(entry) == set(messages.LANGUAGES)
    assert _fields(entry["en"]) == _fields(entry["pt-BR"])
    assert entry["en"] != entry["pt-BR"] or message_id in {"report.total"}


def test_every_id_used_in_the_code_exists():
    used = set()
    for path in PACKAGE.rglob("*.py"):
        text = path.read_text()
        used |= set(re.findall(r"Message\(\s*\"([a-z_]+\.[a-z0-9_]+)\"", text))
        used |= set(re.findall(r"\"((?:hint|check|fault|submission|report|result)\.[a-z0-9_]+)\"", text))
    dynamic = {f"fault.died_{r}" for r in ("cpu", "segv", "abort", "killed", "syscall", "file_size", "signal", "exit")}
    missing = (used | dynamic) - set(messages.catalog())
    assert not missing


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("pt_BR.UTF-8", "pt-BR"),
        ("pt-br", "pt-BR"),
        ("pt", "pt-BR"),
        ("en_US.UTF-8", "en"),
        ("", "en"),
        (None, "en"),
        ("fr_FR", "en"),
    ],
)
def test_language_names_are_normalized(given, expected):
    assert normalize_language(given) == expected


def test_render_fills_placeholders_in_each_language():
    message = Message("fault.not_implemented", {"function": "rmsnorm"})
    assert render(message) == "rmsnorm is not implemented yet: it raises NotImplementedError."
    assert render(message, "pt-BR").startswith("rmsnorm ainda não foi implementada")


def test_every_test_has_a_portuguese_description():
    from grader import course
    from grader.runner import FINAL, Options, grade

    names = {r.name for r in grade(course.solutions_dir(), Options(suites=FINAL)).results}
    catalog = messages.descriptions()
    assert set(catalog) == names
    assert all(set(entry) == {"pt-BR"} and entry["pt-BR"].strip() for entry in catalog.values())


def test_descriptions_render_in_the_reader_language():
    name = "rmsnorm/hidden/test_sequence_of_tokens"
    english = "A (T, C) float64 sequence matches the formula."
    assert messages.describe(name, english, "en") == english
    assert messages.describe(name, english, "pt-BR") == messages.descriptions()[name]["pt-BR"]


def test_the_neutral_phrases_of_hidden_feedback_are_said_in_the_readers_language():
    from grader.vocabulary import NEUTRAL_EXCEPTION, NEUTRAL_TYPE

    raised = Message("fault.raised", {"function": "rmsnorm", "exc_type": NEUTRAL_EXCEPTION})
    assert render(raised, "en") == "rmsnorm raised an exception."
    assert render(raised, "pt-BR") == "rmsnorm lançou uma exceção."
    odd = Message("fault.not_callable", {"function": "rmsnorm", "module": "rmsnorm.py", "found": NEUTRAL_TYPE})
    assert "um objeto de outro tipo" in render(odd, "pt-BR")
    assert render(Message("fault.raised", {"function": "rmsnorm", "exc_type": "ValueError"}), "pt-BR").endswith(
        "lançou ValueError."
    )


def test_hints_that_agree_on_an_input_are_introduced_as_alternatives():
    """With a silent sublayer, post-norm and a normalized residual give the same answer: a
    student read the two hints as contradicting advice. A line before them says the input
    cannot tell them apart; a single matching hint stands alone."""
    from grader.checks import Mismatch, expect_array
    from grader.suites._mistakes import block_hints, rms

    rng = np.random.default_rng(0)
    x, gamma = rng.standard_normal((3, 8)), np.ones(8)
    for sublayer, wanted in ((np.zeros_like, ["check.hints_agree", "hint.postnorm_instead_of_prenorm"]), (np.tanh, [])):
        postnorm = rms(x + sublayer(x), gamma, 1e-6)
        right = x + sublayer(rms(x, gamma, 1e-6))
        with pytest.raises(Mismatch) as raised:
            expect_array(postnorm, right, what="block(x)", hints=block_hints(x, sublayer, gamma, 1e-6))
        ids = [m.id for m in raised.value.messages]
        assert ids[1 : len(wanted) + 1] == wanted if wanted else ids.count("check.hints_agree") == 0
        assert ("hint.normalized_residual" in ids) == bool(wanted)


def test_hints_are_worked_out_only_for_a_wrong_answer_and_once():
    """A right answer never pays for the mistakes' maths; a wrong one gets the same hints as
    when they were worked out beforehand, and reading them twice does not build them twice."""
    from grader.checks import Mismatch, deferred, expect_array

    built: list[str] = []

    @deferred
    def doubled(x: np.ndarray) -> list[tuple[np.ndarray, str]]:
        built.append("doubled")
        return [(2 * x, "hint.eps_outside_sqrt")]

    x = np.arange(1.0, 5.0)
    expect_array(x.copy(), x, what="f(x)", hints=doubled(x))
    assert built == []
    hints = doubled(x)
    with pytest.raises(Mismatch) as raised:
        expect_array(2 * x, x, what="f(x)", hints=hints)
    assert "hint.eps_outside_sqrt" in [m.id for m in raised.value.messages]
    assert len(hints) == 1 and hints[0][1] == "hint.eps_outside_sqrt" and built == ["doubled"]


def test_the_tests_call_labels_have_no_english_words_in_portuguese():
    """A pt-BR student read "rmsnorm(x, gamma) on a float32 batch está errado" and "block(x,
    silent sublayer, gamma)": every label a suite or public test gives (``what=``) is said in
    Portuguese, but for its code."""
    from grader import course
    from grader.messages import _label

    sources = [*course.suites_dir().glob("test_*.py"), *course.solutions_dir().glob("test_*.py")]
    labels = {m for path in sources for m in re.findall(r'what=f?"([^"]*)"', path.read_text())}
    english = re.compile(
        r"\b(silent|small|update|tiny|with|later|changed|unknown|family|without|on a|batch|inputs|from|of)\b"
    )
    assert len(labels) > 30
    left = {label: _label(label, "pt-BR") for label in labels if english.search(_label(label, "pt-BR"))}
    assert not left
    assert render(
        Message("check.not_array", {"what": "block(x, silent sublayer, gamma)", "type": "list"}), "en"
    ).startswith("block(x, silent sublayer, gamma)")


def test_the_feedback_page_says_each_status_in_its_readers_language():
    """Trial 49: a pt-BR feedback page marked its tests PASS and FAIL in English."""
    from grader.model import CheckResult, Report, Status, Visibility
    from grader.report.feedback import feedback_html

    results = tuple(
        CheckResult(f"rmsnorm/public/test_{s.value}", "rmsnorm", "d", Visibility.PUBLIC, s, 0.0, 1.0)
        for s in (Status.PASSED, Status.FAILED, Status.TIMEOUT)
    )
    report = Report(submission="lab.ipynb", results=results, suites=("public",))
    portuguese = feedback_html(report, student="ana", assignment="normlab", lang="pt-BR")
    assert all(f">{word}<" in portuguese for word in ("passou", "falhou", "tempo esgotado")), portuguese
    assert ">FAIL<" not in portuguese
    assert ">FAIL<" in feedback_html(report, student="ana", assignment="normlab", lang="en")
