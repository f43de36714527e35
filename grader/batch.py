"""Grade many submissions in parallel, each in its own worker slot.

On one machine every grading runs in a pool process of its own (trusted code only) and uses
that process's slot, so concurrent workers never share a uid. Beyond one machine the same
grading function is submitted to a Dask distributed cluster, where each Dask worker (run them
with one thread each) is a slot. One submission's failure, even a fault of the grader, is
returned as that submission's outcome and never stops the others.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Iterator
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from dataclasses import replace
from pathlib import Path

from grader.faults import GraderFault
from grader.model import Report
from grader.runner import Options, grade
from grader.submission import SubmissionError

_slot = -1


def _claim_slot(counter: multiprocessing.sharedctypes.Synchronized[int]) -> None:
    global _slot
    with counter.get_lock():
        _slot = counter.value
        counter.value += 1


def _grade_safely(path: str, options: Options) -> Report | str:
    """A report, or why this one submission could not be graded (never an exception)."""
    try:
        return grade(path, options)
    except (GraderFault, SubmissionError) as exc:
        return f"{type(exc).__name__}: {exc}"
    except Exception as exc:  # a bug of ours on one submission must not stop the batch
        return f"grader fault ({type(exc).__name__}): {exc}"


def _grade_in_slot(path: str, options: Options) -> Report | str:
    return _grade_safely(path, replace(options, slot=_slot))


def _grade_on_dask_worker(path: str, options: Options) -> Report | str:
    """Runs on a Dask worker: its name (an int for LocalCluster workers) picks the slot."""
    import zlib

    from distributed import get_worker

    name = get_worker().name
    slot = name if isinstance(name, int) else zlib.crc32(str(name).encode()) % 1000
    return _grade_safely(path, replace(options, slot=slot))


def _grade_on_dask(submissions: list[Path], options: Options, scheduler: str) -> Iterator[tuple[Path, Report | str]]:
    from distributed import Client, as_completed

    with Client(scheduler) as client:
        futures = {client.submit(_grade_on_dask_worker, str(path), options, pure=False): path for path in submissions}
        for future in as_completed(futures):
            try:
                yield futures[future], future.result()
            except Exception as exc:  # a worker lost: this submission is ungraded, not the batch
                yield futures[future], f"{type(exc).__name__}: {exc}"


def default_jobs() -> int:
    return max(1, len(os.sched_getaffinity(0)))


def grade_many(
    submissions: list[Path], options: Options | None = None, jobs: int | None = None, scheduler: str | None = None
) -> Iterator[tuple[Path, Report | str]]:
    """Yield ``(submission, report)`` as each grading finishes; a string instead of a report
    says why that submission could not be graded (no score is issued for it).

    ``scheduler`` is the address of a Dask scheduler (``tcp://host:port``); without it the
    gradings run in ``jobs`` local processes.
    """
    options = options or Options()
    if not submissions:
        return
    if scheduler:
        yield from _grade_on_dask(submissions, options, scheduler)
        return
    jobs = jobs or default_jobs()
    context = multiprocessing.get_context("spawn")
    counter = context.Value("i", 0)
    with ProcessPoolExecutor(
        max_workers=jobs, mp_context=context, initializer=_claim_slot, initargs=(counter,)
    ) as pool:
        futures: dict[Future[Report | str], Path] = {
            pool.submit(_grade_in_slot, str(path), options): path for path in submissions
        }
        for future in as_completed(futures):
            try:
                yield futures[future], future.result()
            except Exception as exc:  # a pool process died: this submission is ungraded, not the batch
                yield futures[future], f"{type(exc).__name__}: {exc}"
