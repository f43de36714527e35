"""Every sentence the grader says to a person, in one catalog, in English and Brazilian Portuguese.

Code never builds student-facing prose itself: it creates a :class:`Message` (an id and its
parameters) and a reporter renders it in the reader's language. The catalog lives in
``messages.toml``; a test keeps every id present in every language.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from grader.datafiles import load_toml

LANGUAGES = ("en", "pt-BR")
DEFAULT_LANGUAGE = "en"
PHRASES = {"an exception": "phrase.an_exception", "an object of another type": "phrase.another_type"}
"""The fixed English phrases a message's parameters hold for what may not be named on a hidden
test (``vocabulary.NEUTRAL_EXCEPTION`` ...): said in the reader's language when rendered."""


@dataclass(frozen=True)
class Message:
    """A sentence for a person, not yet in any language."""

    id: str
    """Key in ``messages.toml``."""
    params: dict[str, Any] = field(default_factory=dict)
    """Values for the template's ``{placeholders}``: strings and numbers only, so that a
    message survives a JSON round trip unchanged. Rendered with ``str.format``."""


@cache
def catalog() -> dict[str, dict[str, str]]:
    """The catalog: ``{message id: {language: template}}``."""
    return load_toml(Path(str(resources.files("grader").joinpath("messages.toml"))))


def normalize_language(lang: str | None) -> str:
    """Map ``pt_BR.UTF-8``, ``pt-br``, ``pt`` ... to a catalog language; default English."""
    if not lang:
        return DEFAULT_LANGUAGE
    tag = lang.split(".")[0].replace("_", "-").lower()
    if tag.startswith("pt"):
        return "pt-BR"
    return DEFAULT_LANGUAGE


def chosen_language(lang: str) -> str:
    """A language someone asked for by name (``--lang``, ``NORMLAB_LANG``, the course file): as
    :func:`normalize_language`, but one we do not speak raises ``ValueError`` instead of
    falling back to English without a word. (A machine's locale still falls back quietly.)"""
    tag = lang.split(".")[0].replace("_", "-").lower()
    if not (tag == "en" or tag.startswith(("en-", "pt"))):
        raise ValueError(f"{lang!r} is not a language normlab speaks: use one of {', '.join(LANGUAGES)}")
    return normalize_language(lang)


def render(message: Message, lang: str = DEFAULT_LANGUAGE) -> str:
    """The message in ``lang`` (any spelling of a locale: ``pt_BR.UTF-8`` is ``pt-BR``). An
    unknown id is a grader bug and raises ``KeyError``."""
    templates = catalog()[message.id]
    lang = normalize_language(lang)
    params = {k: _phrase(v, lang) if isinstance(v, str) and v in PHRASES else v for k, v in message.params.items()}
    if lang != DEFAULT_LANGUAGE and isinstance(params.get("what"), str):
        params["what"] = _label(params["what"], lang)
    return templates.get(lang, templates[DEFAULT_LANGUAGE]).format(**params)


def _label(what: str, lang: str) -> str:
    """A call's label (``block(x, silent sublayer, gamma)``) with its English words in ``lang``:
    the ``label.*`` entries of the catalog, longest first; code in it stays as it is."""
    for english, translated in _labels(lang):
        what = what.replace(english, translated)
    return what


@cache
def _labels(lang: str) -> list[tuple[str, str]]:
    found = [(t["en"], t.get(lang, t["en"])) for k, t in catalog().items() if k.startswith("label.")]
    return sorted(found, key=lambda pair: -len(pair[0]))


def _phrase(english: str, lang: str) -> str:
    templates = catalog()[PHRASES[english]]
    return templates.get(lang, english)


@cache
def descriptions() -> dict[str, dict[str, str]]:
    """Translations of the tests' descriptions (their docstrings): ``{test name: {lang: text}}``."""
    from grader import questions  # the auto-graded parts of the questions: their prompts

    path = resources.files("grader").joinpath("descriptions.toml")
    tests = load_toml(Path(str(path))) if path.is_file() else {}
    return {**questions.descriptions(), **tests}


def describe(name: str, english: str, lang: str = DEFAULT_LANGUAGE) -> str:
    """A test's description in ``lang``; the docstring itself is the English text."""
    lang = normalize_language(lang)
    return descriptions().get(name, {}).get(lang, english) if lang != DEFAULT_LANGUAGE else english


LISTED = 10
"""Names a message lists; the rest are counted (an answer may hold 21,000 keys, an upload
thousands of files: listed whole, they made reports of megabytes)."""


def listed(names: list[str]) -> str:
    """The first ``LISTED`` names, and how many more there are: a count reads the same in every
    language."""
    more = f", ... (+{len(names) - LISTED})" if len(names) > LISTED else ""
    return ", ".join(names[:LISTED]) + more


def render_all(messages: tuple[Message, ...] | list[Message], lang: str = DEFAULT_LANGUAGE) -> str:
    """Render several messages as one paragraph per message."""
    return "\n".join(render(m, lang) for m in messages)
