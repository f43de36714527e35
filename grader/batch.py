"""Grade many submissions in parallel, each in a worker slot of its own.

On one machine the gradings run in a pool of processes (trusted code only). A pool process
that dies (killed, out of memory, a crash of ours) costs only the submission it was grading,
which is retried once in a fresh process; the others go on. Every grading claims its own
worker slot from the host's allocator (``sandbox/slots.py``), so concurrent workers never
share a uid. Pool processes die with the grading process (a parent-death signal), so killing
a batch leaves nothing of ours running. Beyond one machine the same grading function runs on
a Dask distributed cluster, where each task claims its slot on its own host in the same way.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Iterator
from concurrent.futures import FIRST_COMPLETED, Future, wait
from pathlib import Path

from pebble import ProcessPool

from grader.faults import GraderFault
from grader.model import Graded, NotGraded, Outcome
from grader.runner import Options, grade
from grader.sandbox.limits import die_with_parent
from grader.submission import SubmissionError

RETRIES = 1
"""How often a submission whose pool process died is graded again before it is given up."""


CEILING_SLACK = 300.0
"""Seconds a grading may run beyond its submission's own limits (all its notebook's cells, and
the budget of all its calls) before it is stopped: only a fault of ours takes that long, and it
must not hold the rest of the class."""


def ceiling_seconds(options: Options) -> float:
    """How long one grading may run in a pool process before it is stopped: its calls have
    the budget and, for functions that never hung, a reserve of the same size (``proxy``)."""
    limits = options.settings.limits
    return limits.notebook_seconds + 2 * limits.submission_seconds + CEILING_SLACK


def grade_safely(path: str, options: Options) -> Outcome:
    """Grade one submission; any failure is this submission's outcome, never an exception."""
    try:
        return Graded(grade(path, options))
    except (GraderFault, SubmissionError) as exc:
        return NotGraded(f"{type(exc).__name__}: {exc}")
    except Exception as exc:  # a bug of ours on one submission must not stop the batch
        return NotGraded(f"grader fault ({type(exc).__name__}): {exc}")


def default_jobs() -> int:
    return max(1, len(os.sched_getaffinity(0)))


DASK_WORKER_SECONDS = 120.0
"""How long a Dask scheduler without workers is given to get one before the run stops: Dask
would hold the class's tasks, silently, until a worker came."""


def _on_dask(submissions: list[Path], options: Options, scheduler: str) -> Iterator[tuple[Path, Outcome]]:
    from distributed import Client, as_completed

    with Client(scheduler) as client:
        try:
            client.wait_for_workers(1, timeout=DASK_WORKER_SECONDS)
        except TimeoutError:
            raise GraderFault(
                f"the Dask scheduler at {scheduler} has no workers (waited {DASK_WORKER_SECONDS:.0f} s); start one "
                f"on each grading machine with `dask worker {scheduler}`. Nothing was graded."
            ) from None
        futures = {client.submit(grade_safely, str(path), options, pure=False): path for path in submissions}
        for future in as_completed(futures):
            try:
                yield futures[future], future.result()
            except Exception as exc:  # a Dask worker lost: this submission is ungraded, not the batch
                yield futures[future], NotGraded(f"{type(exc).__name__}: {exc}")


def _in_pool(submissions: list[Path], options: Options, jobs: int, ceiling: float) -> Iterator[tuple[Path, Outcome]]:
    context = multiprocessing.get_context("spawn")
    with ProcessPool(max_workers=jobs, context=context, initializer=die_with_parent, initargs=(os.getpid(),)) as pool:
        try:
            yield from _scheduled(pool, submissions, options, ceiling)
        except BaseException:
            # Ctrl-C (pebble's processes ignore SIGINT), or the consumer stopped: the gradings
            # under way are abandoned, not awaited (a slow one held an interrupted run for minutes)
            pool.stop()  # type: ignore[no-untyped-call]
            raise


def _scheduled(
    pool: ProcessPool, submissions: list[Path], options: Options, ceiling: float
) -> Iterator[tuple[Path, Outcome]]:
    """Each submission graded in ``pool``; one whose pool process died is graded once more, one
    that ran past ``ceiling`` seconds is stopped (its process killed) and not graded again."""
    attempts: dict[Path, int] = {}

    def schedule(path: Path) -> tuple[Future[Outcome], Path]:
        attempts[path] = attempts.get(path, 0) + 1
        return pool.schedule(grade_safely, args=(str(path), options), timeout=ceiling), path

    pending = dict(schedule(path) for path in submissions)
    while pending:
        done, _ = wait(pending, return_when=FIRST_COMPLETED)
        for future in done:
            path = pending.pop(future)
            try:
                yield path, future.result()
            except TimeoutError:  # pebble killed the process: the same grading would hang again
                yield path, NotGraded(f"the grading ran past {ceiling:.0f} s and was stopped; nothing was scored")
            except Exception as exc:  # the pool process died while grading this one
                if attempts[path] <= RETRIES:
                    pending.update([schedule(path)])
                else:
                    yield path, NotGraded(f"the grading process died twice ({type(exc).__name__}: {exc})")


def grade_many(
    submissions: list[Path],
    options: Options | None = None,
    jobs: int | None = None,
    scheduler: str | None = None,
    ceiling: float | None = None,
) -> Iterator[tuple[Path, Outcome]]:
    """Yield ``(submission, outcome)`` as each grading finishes, in any order.

    ``scheduler`` is the address of a Dask scheduler (``tcp://host:port``); without it the
    gradings run in ``jobs`` local processes (default: ``options.settings.jobs``, else one
    per core), each stopped after ``ceiling`` seconds (default: ``ceiling_seconds``).
    """
    options = options or Options()
    if not submissions:
        return
    if scheduler:
        yield from _on_dask(submissions, options, scheduler)
    else:
        jobs = jobs or options.settings.jobs or default_jobs()
        yield from _in_pool(submissions, options, jobs, ceiling or ceiling_seconds(options))
