"""Measure what the sandbox costs: grade the reference with full isolation and with the
process-only baseline, alternating, in one run, and report the ratio of the medians."""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass

from grader import course
from grader.runner import Options, grade
from grader.settings import Settings


@dataclass(frozen=True)
class Overhead:
    full_seconds: list[float]
    baseline_seconds: list[float]
    full_layers: tuple[str, ...]
    baseline_layers: tuple[str, ...]

    @property
    def ratio(self) -> float:
        """Median full-isolation time over median baseline time."""
        return statistics.median(self.full_seconds) / statistics.median(self.baseline_seconds)


def measure(settings: Settings, rounds: int = 3) -> Overhead:
    """Alternate the two modes so that machine noise hits both alike."""
    full: list[float] = []
    base: list[float] = []
    full_layers: tuple[str, ...] = ()
    base_layers: tuple[str, ...] = ()
    for _ in range(rounds):
        for baseline, times in ((False, full), (True, base)):
            start = time.perf_counter()
            options = Options(settings=settings.replace(require_sandbox=False), baseline=baseline)
            report = grade(course.solutions_dir(), options)
            times.append(time.perf_counter() - start)
            if report.score != report.max_score:
                raise RuntimeError("the reference lost points while benchmarking")
            if baseline:
                base_layers = report.isolation
            else:
                full_layers = report.isolation
    return Overhead(full, base, full_layers, base_layers)
