"""The question bank (``questions.toml``): the lesson's verification questions as data.

One source for the site's question page, the student's answers file, the nbgrader question
cells and the keys and rubrics that grade the answers. A question has auto-graded parts
(``choice``, ``multiple``, ``number``) and, where open-ended, a written part with a rubric.

The keys (``correct``, ``answer``, ``tolerance``), the options' feedback and the rubrics are
hidden: :func:`public_data` is the bank without them, the only form of it that reaches a
student (the student zip carries it as ``questions_public.json``). :func:`load` reads the full
bank where it is installed (the instructor's grader) and the public one elsewhere; a public
bank can say which answers are blank but cannot score them.
"""

from __future__ import annotations

import dataclasses
import json
import textwrap
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from grader import course
from grader.datafiles import load_toml

BANK_FILE = "questions.toml"
PUBLIC_FILE = "questions_public.json"
ANSWERS_FILE = "verification.toml"
"""The student's answers file, beside the exercises (``exercises/verification.toml``)."""


def answers_beside(work: Path) -> Path:
    """Where the answers file of ``work`` (a folder of modules, a notebook, a ``.py`` file) lies."""
    return (work if work.is_dir() else work.parent) / ANSWERS_FILE


NOTEBOOK_PREFIX = "answers_"
"""A notebook answers question ``q1``'s auto-graded parts in ``answers_q1 = {...}``."""
WRITTEN = "written"
"""The key of the written part in the answers file."""
KINDS = ("choice", "multiple", "number")


class BankError(Exception):
    """The question bank is inconsistent (a grader fault, never a student's)."""


@dataclass(frozen=True)
class Option:
    id: str
    """A letter: ``a``, ``b`` ..."""
    text: dict[str, str]
    """The option as the student reads it, per language."""
    correct: bool | None = None
    """Hidden: whether the option is (one of) the right answer(s); None in a public bank."""
    feedback: dict[str, str] | None = None
    """Hidden: why this option is right or wrong, shown only to a student who chose it wrongly."""


@dataclass(frozen=True)
class Part:
    """One auto-graded part of a question."""

    id: str
    kind: str
    """``choice`` (one option), ``multiple`` (tick each option or not) or ``number``."""
    points: float
    prompt: dict[str, str]
    options: tuple[Option, ...] = ()
    answer: float | None = None
    """Hidden: the expected number (``number`` parts)."""
    tolerance: float | None = None
    """Hidden: the largest absolute difference accepted (``number`` parts)."""
    whole: bool = False
    """A ``number`` part whose answer is a whole number (a count), as its prompt says: there a
    separator before three digits groups thousands ("131.072", "131,072" are 131072)."""

    @property
    def letters(self) -> tuple[str, ...]:
        return tuple(o.id for o in self.options)

    @property
    def form(self) -> str:
        """The kind of answer, as the templates name it: ``whole number`` for a count."""
        return "whole number" if self.whole else self.kind


@dataclass(frozen=True)
class RubricItem:
    points: float
    text: str


@dataclass(frozen=True)
class Written:
    """The part graded by a person."""

    points: float
    prompt: dict[str, str]
    rubric: tuple[RubricItem, ...] = ()
    """Hidden: what a grader looks for, item by item; empty in a public bank."""

    def scaled(self, factor: float) -> Written:
        """This part at ``factor`` times its points (a course policy's), the rubric keeping its
        proportions."""
        from grader.policy import scaled

        rubric = tuple(dataclasses.replace(item, points=scaled(item.points, factor)) for item in self.rubric)
        return dataclasses.replace(self, points=scaled(self.points, factor), rubric=rubric)


@dataclass(frozen=True)
class Question:
    id: str
    number: int
    group: str
    text: dict[str, str]
    reread: tuple[dict[str, str], ...]
    """Links to the site's sections that cover the idea: ``page``, then a title per language."""
    parts: tuple[Part, ...]
    written: Written | None

    @property
    def auto_points(self) -> float:
        return sum(p.points for p in self.parts)

    @property
    def points(self) -> float:
        return self.auto_points + (self.written.points if self.written else 0.0)

    @property
    def lesson(self) -> bool:
        """One of the lesson's nine verification questions (not a deliverable)."""
        return self.group != "deliverable"


@dataclass(frozen=True)
class Bank:
    groups: dict[str, dict[str, str]]
    questions: tuple[Question, ...]
    hidden: bool
    """Whether the keys and rubrics are present (the instructor's bank)."""

    def question(self, qid: str) -> Question:
        return next(q for q in self.questions if q.id == qid)

    def heading(self, q: Question, lang: str = "en") -> str:
        """The first line of the question's cell in a notebook released in ``lang``, as
        ``question.md.j2`` writes it (a test holds the two together)."""
        return f"### {q.number}. {self.groups[q.group][lang]}: {q.text[lang]}".splitlines()[0]

    def by_heading(self) -> dict[str, str]:
        """Question ids by their cell's first line, in either language: a notebook whose cell
        metadata is gone (Colab drops nbgrader's) still has its questions where they were."""
        return {self.heading(q, lang).strip(): q.id for q in self.questions for lang in ("en", "pt-BR")}


def _option(data: dict[str, Any]) -> Option:
    text = {lang: data[lang] for lang in ("en", "pt-BR")}
    return Option(data["id"], text, data.get("correct", False) if "feedback" in data else None, data.get("feedback"))


def _part(data: dict[str, Any]) -> Part:
    options = tuple(_option(o) for o in data.get("option", ()))
    return Part(
        data["id"],
        data["kind"],
        float(data["points"]),
        dict(data["prompt"]),
        options,
        float(data["answer"]) if "answer" in data else None,
        float(data["tolerance"]) if "tolerance" in data else None,
        data.get("whole") is True,
    )


def _written(data: dict[str, Any] | None) -> Written | None:
    if data is None:
        return None
    rubric = tuple(RubricItem(float(r["points"]), " ".join(r["text"].split())) for r in data.get("rubric", ()))
    return Written(float(data["points"]), dict(data["prompt"]), rubric)


def _question(data: dict[str, Any]) -> Question:
    return Question(
        data["id"],
        int(data["number"]),
        data["group"],
        dict(data["text"]),
        tuple(dict(r) for r in data.get("reread", ())),
        tuple(_part(p) for p in data.get("part", ())),
        _written(data.get("written")),
    )


def parse(data: dict[str, Any], *, hidden: bool) -> Bank:
    """A bank from its TOML (``hidden``) or public JSON data; raises :class:`BankError`."""
    try:
        bank = Bank(dict(data["groups"]), tuple(_question(q) for q in data["question"]), hidden)
    except (KeyError, TypeError, ValueError) as exc:
        raise BankError(f"the question bank is malformed: {exc!r}") from exc
    validate(bank)
    return bank


def _validate_part(q: Question, part: Part, hidden: bool) -> None:
    where = f"{q.id} part {part.id}"
    if part.kind not in KINDS:
        raise BankError(f"{where}: unknown kind {part.kind!r}")
    if part.kind == "number":
        if hidden and (part.answer is None or part.tolerance is None or part.tolerance < 0):
            raise BankError(f"{where}: a number part needs an answer and a tolerance >= 0")
        if hidden and part.whole and (part.tolerance != 0 or part.answer != int(part.answer or 0)):
            raise BankError(f"{where}: a whole-number part needs a whole answer and a tolerance of 0")
        return
    if part.whole:
        raise BankError(f"{where}: only a number part can be whole")
    if len(part.options) < 2 or len(set(part.letters)) != len(part.letters):
        raise BankError(f"{where}: a choice needs two or more options with distinct letters")
    if hidden and any(o.feedback is None for o in part.options):
        raise BankError(f"{where}: every option needs its feedback, in both languages")
    if hidden and part.kind == "choice" and sum(bool(o.correct) for o in part.options) != 1:
        raise BankError(f"{where}: a single choice has exactly one correct option")


def validate(bank: Bank) -> None:
    """Ids unique, one correct option per single choice, rubric points adding up."""
    ids = [q.id for q in bank.questions]
    if len(set(ids)) != len(ids):
        raise BankError("question ids are not unique")
    for q in bank.questions:
        if q.group not in bank.groups:
            raise BankError(f"{q.id}: unknown group {q.group!r}")
        if len({p.id for p in q.parts}) != len(q.parts) or WRITTEN in {p.id for p in q.parts}:
            raise BankError(f"{q.id}: part ids must be unique and not {WRITTEN!r}")
        for part in q.parts:
            _validate_part(q, part, bank.hidden)
        if (
            bank.hidden
            and q.written is not None
            and abs(sum(r.points for r in q.written.rubric) - q.written.points) > 1e-9
        ):
            raise BankError(f"{q.id}: the rubric's points do not add up to the written part's points")


def public_data(bank: Bank) -> dict[str, Any]:
    """The bank without anything hidden: no key, no option feedback, no rubric."""
    return {
        "groups": bank.groups,
        "question": [
            {
                "id": q.id,
                "number": q.number,
                "group": q.group,
                "text": q.text,
                "reread": list(q.reread),
                "part": [
                    {
                        "id": p.id,
                        "kind": p.kind,
                        **({"whole": True} if p.whole else {}),
                        "points": p.points,
                        "prompt": p.prompt,
                        "option": [{"id": o.id, **o.text} for o in p.options],
                    }
                    for p in q.parts
                ],
                **({"written": {"points": q.written.points, "prompt": q.written.prompt}} if q.written else {}),
            }
            for q in bank.questions
        ],
    }


def public_json(bank: Bank) -> str:
    return json.dumps(public_data(bank), indent=1, ensure_ascii=False, sort_keys=True) + "\n"


@cache
def load() -> Bank:
    """The full bank where the grader has it, else the public bank of a student's copy."""
    full = course.PACKAGE / BANK_FILE
    if full.is_file():
        return parse(load_toml(full), hidden=True)
    public = course.PACKAGE / PUBLIC_FILE
    if public.is_file():
        return parse(json.loads(public.read_text(encoding="utf-8")), hidden=False)
    raise BankError(f"neither {BANK_FILE} nor {PUBLIC_FILE} is installed with the grader")


TEMPLATE_HEAD = """\
# Verification questions: your answers. Edit this file beside your exercises and hand it in
# with them. `normlab check` lists the answers still blank.
# Perguntas de verificação: as suas respostas. Edite este arquivo ao lado dos exercícios e
# entregue-o com eles. `normlab check` lista as respostas ainda em branco.
#
# choice:   one letter in quotes                    uma letra entre aspas          a = "b"
# multiple: every true option, a list of letters    toda opção verdadeira, lista   a = ["a", "c"]
# number:   a number; a decimal comma in quotes      um número; vírgula entre aspas a = 0.25  ou  a = "0,25"
# whole number: a count, no quotes                  uma contagem, sem aspas        a = 64
# written:  your own words, graded by hand          com as suas palavras, à mão    written = \"\"\"...\"\"\"
"""


def _comment(text: str, indent: str = "# ") -> list[str]:
    return [indent + line for line in textwrap.wrap(text, 96 - len(indent))]


def _template_question(bank: Bank, q: Question) -> list[str]:
    group = bank.groups[q.group]
    lines = ["", f"# {'=' * 94}", *_comment(f"{q.number}. ({group['en']}) {q.text['en']}")]
    lines += _comment(f"{q.number}. ({group['pt-BR']}) {q.text['pt-BR']}")
    lines.append(f"[{q.id}]")
    for p in q.parts:
        points = f"{p.points:g} pt"
        lines += ["", *_comment(f"({p.id}) {p.form}, {points}: {p.prompt['en']}")]
        lines += _comment(f"({p.id}) {p.prompt['pt-BR']}")
        for o in p.options:
            both = o.text["en"] if o.text["en"] == o.text["pt-BR"] else f"{o.text['en']}  |  {o.text['pt-BR']}"
            lines += _comment(f"{o.id}) {both}", "#     ")
        lines.append(f'{p.id} = ""')
    if q.written is not None:
        lines += ["", *_comment(f"(written, {q.written.points:g} pt, graded by hand) {q.written.prompt['en']}")]
        lines += _comment(f"(escrita, {q.written.points:g} pt, corrigida à mão) {q.written.prompt['pt-BR']}")
        lines += [f'{WRITTEN} = """', '"""']
    return lines


def answers_template(bank: Bank) -> str:
    """The blank answers file (``exercises/verification.toml``): questions, parts, options."""
    lines = TEMPLATE_HEAD.splitlines()
    for q in bank.questions:
        lines += _template_question(bank, q)
    return "\n".join(lines) + "\n"


def part_name(qid: str, part: str) -> str:
    """The result name of an auto-graded part, e.g. ``q1/hidden/part_a``."""
    return f"{qid}/hidden/part_{part}"


def descriptions() -> dict[str, dict[str, str]]:
    """Each auto-graded part's prompt, per language, by result name (for ``messages.describe``)."""
    try:
        bank = load()
    except BankError:
        return {}
    return {part_name(q.id, p.id): {"pt-BR": p.prompt["pt-BR"]} for q in bank.questions for p in q.parts}


__all__ = [
    "ANSWERS_FILE",
    "Bank",
    "BankError",
    "Option",
    "Part",
    "Question",
    "Written",
    "answers_beside",
    "answers_template",
    "load",
    "parse",
    "public_data",
    "public_json",
]
