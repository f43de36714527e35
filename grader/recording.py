"""Record the reference's answers to the public tests: the ``answers.json`` students receive.

``normlab stubs`` runs every public test of ``solutions/`` once, in this process, against the
reference. Each ``expected.check`` call computes the reference's answer and the answers of the
common mistakes (``suites/_mistakes.py``) to that very call, and records them under the call's
key (see ``expected.key``). Only public inputs are ever recorded: the file tells a student
nothing the public tests do not already show, and no hidden input goes near it.

The file is deterministic (sorted keys, exact bytes of every array), so ``stubs --check`` can
compare it byte for byte.
"""

from __future__ import annotations

import importlib.util
import inspect
import json
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from grader import checks, expected, public
from grader.faults import GraderFault
from grader.messages import LANGUAGES, catalog, descriptions
from grader.reference import Reference


class Recorder:
    """Stands in for :class:`expected.Expected` while the public tests run on the reference."""

    def __init__(self, reference: Reference) -> None:
        self.reference = reference
        self.answers: dict[str, Any] = {}

    def check(
        self,
        function: Callable[..., Any],
        *args: Any,
        what: str,
        names: Iterable[str] = (),
        rel: float | None = None,
        skip: Iterable[str] = (),
        **kwargs: Any,
    ) -> Any:
        from grader.suites._mistakes import CANDIDATES, WITH_REFERENCE  # the mistakes stay out of students' copies

        del what, names, rel  # how the answer is judged is the student side's business
        answer = function(*args, **kwargs)
        name = function.__name__
        kept = {k: v for k, v in answer.items() if k not in set(skip)} if isinstance(answer, dict) else answer
        convert = self.reference.converted
        own_args, own_kwargs = convert(list(args)), convert(kwargs)
        hints: Sequence[tuple[Any, str]] = []
        if name in CANDIDATES:
            hints = CANDIDATES[name](*own_args, **own_kwargs)
        elif name in WITH_REFERENCE:
            hints = WITH_REFERENCE[name](self.reference, *own_args, **own_kwargs)
        self.answers[public.key(name, args, kwargs)] = {
            "function": name,
            "answer": public.encode(kept),  # a skipped part (inspect_config's note) is no one's to copy
            "hints": [[hint, public.encode(candidate)] for candidate, hint in hints],
        }
        return answer

    require = staticmethod(expected.Expected.require)
    untouched = staticmethod(expected.Expected.untouched)
    raises = staticmethod(expected.Expected.raises)
    note = staticmethod(expected.Expected.note)


def _load(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"normlab_public_{path.stem}", path)
    if spec is None or spec.loader is None:
        raise GraderFault(f"cannot load the public test file {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _public_tests(path: Path) -> list[Callable[..., None]]:
    module = _load(path)
    found = [fn for name, fn in vars(module).items() if name.startswith("test_") and inspect.isfunction(fn)]
    return sorted(found, key=lambda fn: fn.__code__.co_firstlineno)


def record(solutions: Path) -> dict[str, Any]:
    """Run every public test of ``solutions`` on the reference; the answers they check."""
    reference = Reference(solutions)
    recorder = Recorder(reference)
    fixtures = {"student": reference, "sublayer": checks.Sublayer, "expected": recorder}
    try:
        for path in sorted(solutions.glob("test_*.py")):
            for test in _public_tests(path):
                wanted = inspect.signature(test).parameters
                try:
                    test(**{name: fixtures[name] for name in wanted})
                except Exception as exc:
                    where = f"{path.name}::{test.__name__}"
                    raise GraderFault(f"the public test {where} fails on the reference: {exc!r}") from exc
    finally:
        reference.close()
    return recorder.answers


def answers_json(solutions: Path) -> bytes:
    """``answers.json`` for the student tree, byte for byte the same on every run: the calls,
    and the text of every hint they carry (for the plain checks of ``public.py``)."""
    calls = record(solutions)
    used = sorted({hint for entry in calls.values() for hint, _ in entry["hints"]})
    texts = {hint: {lang: catalog()[hint].get(lang, catalog()[hint]["en"]) for lang in LANGUAGES} for hint in used}
    # The public tests' own conditions (expected.require), for the plain checks too.
    own = {k: {la: t.get(la, t["en"]) for la in LANGUAGES} for k, t in catalog().items() if k.startswith("public.")}
    # The public tests' descriptions in the other languages, by test name (the docstring is English).
    described = {
        name.rsplit("/", 1)[-1]: {la: t[la] for la in LANGUAGES if la in t}
        for name, t in descriptions().items()
        if "/public/" in name
    }
    data = {"calls": calls, "hints": texts, "messages": own, "descriptions": described}
    return (json.dumps(data, sort_keys=True, indent=1) + "\n").encode("utf-8")
