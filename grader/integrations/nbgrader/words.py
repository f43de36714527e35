"""What the released notebook says around the exercises and the questions, in the course's
language: the ``release.*`` entries of the message catalog (``messages.toml``), where every
sentence normlab says lives in both languages. The exercises' own text is the modules'
docstrings and the questions' is the bank's. The test cells' first lines, in either language,
are how a notebook whose metadata an editor stripped still shows its test cells
(``notebook._TEST_CELL_START``)."""

from __future__ import annotations

from dataclasses import dataclass

from grader.messages import catalog, normalize_language

FORMS = ("choice", "multiple", "number", "whole number")
"""The forms of a question's auto-graded part, as the bank names them."""


@dataclass(frozen=True)
class Words:
    """The release's words in one language (a template keeps its ``{placeholders}``)."""

    lang: str

    def say(self, key: str) -> str:
        templates = catalog()[f"release.{key}"]
        return templates.get(normalize_language(self.lang), templates["en"])

    @property
    def kinds(self) -> dict[str, str]:
        """How each form of answer is written, by form."""
        return {form: self.say("kind_" + form.replace(" ", "_")) for form in FORMS}

    def points(self, value: float) -> str:
        return f"{value:g} {self.say('point_word') if value == 1 else self.say('points_word')}"

    def by_hand(self, value: float, after_code: bool) -> str:
        cell = self.say("after_code") if after_code else self.say("below")
        return f"{self.points(value)}, {self.say('by_hand').format(cell=cell)}"

    def answers_comment(self, number: int) -> list[str]:
        return self.say("comment").format(number=number).split("\n")
