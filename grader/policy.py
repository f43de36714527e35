"""The course's grading policy: what each exercise and question is worth, and what is dropped.

An instructor sets it in the course file (``normlab.toml``)::

    [policy]
    drop = ["porting"]          # graded and shown, but worth nothing in this course

    [policy.points]             # the total of an item's automatic tests (public + hidden)
    layernorm = 20
    q3 = 2                      # a question's auto-graded parts

    [policy.written]            # a question's written part, graded by hand
    q1 = 4

An item's tests keep their relative weights: each is scaled by the same factor, so partial
credit stays as the suites define it. The stored reports keep the suites' own points; the policy
is applied when a report is shown or published, so a change of policy re-scores a class without
running any student's code again (Decision 10). The release writes the same points into the
notebook's grade cells, and ``normlab autograde`` refuses a course whose released notebook
disagrees with its policy (nbgrader keeps each cell's maximum from the release).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from grader.messages import Message
from grader.model import ManualPart, Report

DIGITS = 6
"""Scaled points are rounded to this many decimals, as a report's totals are."""


class PolicyError(ValueError):
    """The ``[policy]`` section cannot be used; the message says which key and why."""


@dataclass(frozen=True)
class Policy:
    points: Mapping[str, float] = field(default_factory=dict)
    """Item (an exercise or a question id) -> the total points of its automatic tests."""
    written: Mapping[str, float] = field(default_factory=dict)
    """Question id -> the points of its written part."""
    drop: frozenset[str] = frozenset()
    """Items worth nothing in this course (their results are still shown)."""

    @property
    def is_default(self) -> bool:
        return not (self.points or self.written or self.drop)

    def as_data(self) -> dict[str, Any]:
        """The policy as JSON data (what :meth:`from_data` reads back)."""
        return {"points": dict(self.points), "written": dict(self.written), "drop": sorted(self.drop)}

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> Policy:
        return cls(dict(data.get("points", {})), dict(data.get("written", {})), frozenset(data.get("drop", ())))

    def fingerprint(self) -> str:
        """Changes exactly when the policy does: part of a student's scoring key."""
        return hashlib.sha256(json.dumps(self.as_data(), sort_keys=True).encode()).hexdigest()[:16]

    def factor(self, item: str, raw_total: float) -> float:
        """What each of ``item``'s points is multiplied by, its tests totalling ``raw_total``."""
        if item in self.drop:
            return 0.0
        if item not in self.points or raw_total <= 0:
            return 1.0
        return self.points[item] / raw_total

    def written_points(self, qid: str, default: float) -> float:
        if qid in self.drop:
            return 0.0
        return self.written.get(qid, default)

    def written_factor(self, qid: str, default: float) -> float:
        """What each rubric item's points are multiplied by (the rubric keeps its proportions)."""
        return self.written_points(qid, default) / default if default > 0 else 1.0


def scaled(points: float, factor: float) -> float:
    return round(points * factor, DIGITS) if factor != 1.0 else points


def known_items() -> tuple[set[str], set[str]]:
    """(every item the policy may name, the questions among them)."""
    from grader import questions
    from grader.course import EXERCISES

    qids = {q.id for q in questions.load().questions}
    return set(EXERCISES) | qids, qids


def _number(where: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        raise PolicyError(f"{where} = {value!r}: points must be a number, 0 or more")
    return float(value)


def _unknown(where: str, unknown: list[str], known: set[str]) -> str:
    return f"{where} names {', '.join(unknown)}, which this course does not have; known: {', '.join(sorted(known))}"


def _table(section: Mapping[str, Any], name: str, allowed: set[str]) -> dict[str, float]:
    table = section.get(name, {})
    if not isinstance(table, Mapping):
        raise PolicyError(f"[policy.{name}] must be a table of item = points")
    unknown = sorted(set(table) - allowed)
    if unknown:
        raise PolicyError(_unknown(f"[policy.{name}]", unknown, allowed))
    return {item: _number(f"[policy.{name}] {item}", value) for item, value in table.items()}


def parse(section: Mapping[str, Any]) -> Policy:
    """The ``[policy]`` section of a course file, checked against the course's items."""
    unknown_keys = sorted(set(section) - {"points", "written", "drop"})
    if unknown_keys:
        raise PolicyError(f"unknown key(s) in [policy]: {', '.join(unknown_keys)}; known: drop, points, written")
    if not section:
        return Policy()
    items, qids = known_items()
    drop = section.get("drop", [])
    if not isinstance(drop, list) or not all(isinstance(d, str) for d in drop):
        raise PolicyError("[policy] drop must be a list of exercise or question names")
    unknown = sorted(set(drop) - items)
    if unknown:
        raise PolicyError(_unknown("[policy] drop", unknown, items))
    return Policy(_table(section, "points", items), _table(section, "written", qids), frozenset(drop))


def _raw_totals(report: Report) -> dict[str, float]:
    totals: dict[str, float] = {}
    for result in report.results:
        totals[result.exercise] = totals.get(result.exercise, 0.0) + result.max_score
    return totals


def apply(report: Report, policy: Policy) -> Report:
    """``report`` as the course counts it: each item's tests scaled to its points, dropped items
    worth nothing, written parts at the policy's points. The suites' own report is unchanged."""
    if policy.is_default:
        return report
    totals = _raw_totals(report)
    results = []
    for result in report.results:
        factor = policy.factor(result.exercise, totals[result.exercise])
        # Not rounded test by test: an item's rounded totals then come out exact.
        results.append(replace(result, score=result.score * factor, max_score=result.max_score * factor))
    manual = tuple(
        ManualPart(m.question, policy.written_points(m.question, m.max_score), m.answered)
        for m in report.manual
        if m.question not in policy.drop
    )
    dropped = sorted(policy.drop & set(totals))
    notes = (*report.notes, Message("policy.dropped", {"items": ", ".join(dropped)})) if dropped else report.notes
    return replace(report, results=tuple(results), manual=manual, notes=notes)


def manual_points(report: Report) -> float:
    """The points still to be graded by hand: the written parts of the report's questions."""
    return round(sum(part.max_score for part in report.manual), DIGITS)


def from_course_file(path: Path) -> Policy:
    """The policy of a course file (the default when it has no ``[policy]``)."""
    import tomllib

    return parse(tomllib.loads(path.read_text(encoding="utf-8")).get("policy", {}))
