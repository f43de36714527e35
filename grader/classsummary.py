"""What an instructor wants to know at the end of a class's grading: how many were graded and
how, how the scores are spread, which submissions took longest, and which tests failed most
often (what the class did not understand).

Built from the outcomes of :func:`grader.classgrade.grade_class` (each carries its report);
drawn as text for the terminal and as an image (matplotlib's Agg backend, when installed).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from textwrap import shorten

from grader.classgrade import State, StudentOutcome
from grader.course import MODULES
from grader.model import Report, Status

BINS = 10
"""Score bins of the histogram: 0-10 %, ..., 90-100 % of the maximum (full marks in the last)."""
SHOWN = 5
"""Slowest submissions and most failed tests listed."""
BAR = 40
"""Characters of the longest bar in the terminal histogram."""
DESCRIBED = 72
"""Characters of a failed test's description shown beside its name."""


@dataclass(frozen=True)
class ClassSummary:
    """A class's grading, summed up."""

    states: dict[str, int]
    """Students per outcome: graded, resumed (graded by an earlier run), re-scored, unchanged
    (graded before), failed (not graded)."""
    full: int
    """Students with full marks."""
    zero: int
    """Students with no point."""
    bins: tuple[int, ...]
    """Students per score bin (see ``BINS``), graded and unchanged alike."""
    slowest: tuple[tuple[str, float], ...]
    """The longest gradings of this run (and of one it resumed): student and seconds."""
    most_failed: tuple[tuple[str, int], ...]
    """The tests most students did not pass, among those who scored any point (an untouched
    notebook fails every test): test name and how many students."""
    scored: int
    """Students with a score (the histogram's total)."""
    attempted: int
    """Students with more than zero points: the ones ``most_failed`` counts."""
    late: int = 0
    """Students whose score a late penalty lowered (the counts and bins are after it)."""
    described: dict[str, str] = field(default_factory=dict)
    """What each of ``most_failed``'s tests checks, in the words its student sees."""
    empty: int = 0
    """Students whose hand-in held nothing to grade (no notebook, no module file, an unreadable
    file): among those with zero, the ones who may not have handed in what they meant to."""


NOTHING_HANDED_IN = frozenset(
    {
        "submission.no_notebook",
        "submission.notebook_no_cells",
        "submission.notebook_not_json",
        "submission.notebook_empty",
        "submission.notebook_too_large",
        "submission.file_unreadable",
        "submission.directory_unreadable",
    }
)
"""Notes that say a hand-in held nothing the grader could run."""


def handed_in_nothing(report: Report) -> bool:
    """The report is of a hand-in with nothing to grade in it (not an untouched one)."""
    ids = [note.id for note in report.notes]
    return bool(NOTHING_HANDED_IN.intersection(ids)) or ids.count("submission.module_missing") >= len(MODULES)


def summarize(outcomes: Iterable[StudentOutcome]) -> ClassSummary:
    """The summary of one run's outcomes."""
    states: Counter[str] = Counter()
    bins = [0] * BINS
    full = zero = scored = attempted = late = empty = 0
    seconds: dict[str, float] = {}
    failed: Counter[str] = Counter()
    described: dict[str, str] = {}
    place: dict[str, int] = {}
    """Each test's place in the course (a report's order): of tests failed as often, the earlier
    ones come first, rmsnorm's before those of the exercises that call the student's rmsnorm."""
    for outcome in outcomes:
        states[outcome.state.value] += 1
        report = outcome.report
        if report is None or outcome.state is State.FAILED:
            continue
        scored += 1
        # what the gradebook counts: hand points in, the late penalty out (at most the maximum)
        net = min(report.max_score, max(0.0, report.score + outcome.by_hand - outcome.penalty))
        late += outcome.penalty > 0
        fraction = net / report.max_score if report.max_score else 0.0
        bins[min(BINS - 1, max(0, int(fraction * BINS)))] += 1
        full += net == report.max_score
        zero += net == 0
        empty += handed_in_nothing(report)
        if outcome.state in (State.GRADED, State.RESUMED):  # others' times are of an earlier grading
            seconds[outcome.student] = report.seconds
        if report.score > 0:  # an untouched notebook fails everything and says nothing
            attempted += 1
            missed = {r.name: r.description for r in report.results if r.status is not Status.PASSED}
            failed.update(missed.keys())
            for result in report.results:
                place.setdefault(result.name, len(place))
            described.update(missed)
    slowest = tuple(sorted(seconds.items(), key=lambda item: -item[1])[:SHOWN])
    most_failed = tuple(sorted(failed.items(), key=lambda item: (-item[1], place[item[0]]))[:SHOWN])
    shown = {name: described[name] for name, _ in most_failed}
    return ClassSummary(
        dict(states), full, zero, tuple(bins), slowest, most_failed, scored, attempted, late, shown, empty
    )


def _label(index: int) -> str:
    low = index * 100 // BINS
    return f"{low:>3}-{low + 100 // BINS:<3}%"


def summary_text(summary: ClassSummary) -> str:
    """The summary for the terminal: counts, a histogram of '#' bars, the slowest gradings and
    the tests failed most often."""
    states = summary.states
    rescored = f"{states['rescored']} re-scored, " if states.get("rescored") else ""
    resumed = f"{states['resumed']} graded by an earlier run, " if states.get("resumed") else ""
    republished = f"{states['republished']} published again, " if states.get("republished") else ""
    lines = [
        f"class summary: {states.get('graded', 0)} graded now, {resumed}{rescored}{republished}"
        f"{states.get('unchanged', 0)} graded before, {states.get('failed', 0)} not graded; "
        f"{summary.full} with full marks, {summary.zero} with zero"
        + (f" ({summary.empty} of them handed in nothing gradable)" if summary.empty else "")
        + (f" ({summary.late} late: counted after their penalty)" if summary.late else ""),
        "scores (share of the maximum):",
    ]
    widest = max(summary.bins, default=0) or 1
    for index, count in enumerate(summary.bins):
        lines.append(f"  {_label(index)} {'#' * round(count * BAR / widest):<{BAR}} {count}")
    if summary.slowest:
        lines.append("slowest gradings: " + ", ".join(f"{s} {sec:.2f} s" for s, sec in summary.slowest))
    if summary.most_failed:
        # Before any late penalty: a late student with zero points still shows what they got wrong.
        among = f"among the {summary.attempted} students whose automatic score is above zero"
        lines.append(f"tests failed most often ({among}):")
        total = summary.attempted or 1
        for name, count in summary.most_failed:
            # The name says where the test is; its description what the class did not get.
            about = shorten(summary.described.get(name, ""), DESCRIBED, placeholder=" ...")
            lines.append(f"  {count:>4} ({count * 100 / total:.0f} %)  {name}" + (f": {about}" if about else ""))
    return "\n".join(lines) + "\n"


def write_histogram(summary: ClassSummary, path: Path, title: str) -> Path | None:
    """Draw the score histogram into ``path`` (PNG); None when matplotlib is not installed."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.ticker import MaxNLocator
    except ImportError:
        return None
    figure, axes = plt.subplots(figsize=(7, 3.5))
    try:
        axes.bar([_label(i).strip() for i in range(BINS)], summary.bins, color="#3f6ea3")
        axes.set_xlabel("score (share of the maximum)")
        axes.set_ylabel("students")
        axes.yaxis.set_major_locator(MaxNLocator(integer=True))
        axes.set_title(title)
        axes.tick_params(axis="x", labelsize=7)
        figure.tight_layout()
        path.parent.mkdir(parents=True, exist_ok=True)
        figure.savefig(path, format="png")
    finally:
        plt.close(figure)
    return path
