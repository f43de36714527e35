"""The message catalog: every message in every language, with the same placeholders."""

import re
import string
from pathlib import Path

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
