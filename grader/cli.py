"""The ``normlab`` command: parse arguments, call the API, map outcomes to exit codes.

Exit codes: 0 when the work completed (whatever the score), 1 when ``check`` finds failing
public tests or ``stubs --check`` finds stale stubs, 2 for usage errors, 3 when the grader
itself failed (no score is issued).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

# Before numpy is imported anywhere: one BLAS thread, for bit-stable reference answers.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import click  # noqa: E402

from grader import paths, reporters  # noqa: E402
from grader.faults import GraderFault  # noqa: E402
from grader.messages import Message, language_from_environment, normalize_language, render  # noqa: E402
from grader.submission import SubmissionError  # noqa: E402

EXIT_FAILED_CHECK = 1
EXIT_USAGE = 2
EXIT_GRADER_FAULT = 3


class GraderFaultExit(click.ClickException):
    """The grader failed: report it on stderr and exit 3, without a score."""

    exit_code = EXIT_GRADER_FAULT

    def format_message(self) -> str:
        return f"grader fault (no score issued): {self.message}"


class UsageExit(click.UsageError):
    exit_code = EXIT_USAGE


def _lang(value: str | None) -> str:
    return normalize_language(value) if value else language_from_environment()


lang_option = click.option(
    "--lang",
    default=None,
    metavar="LANG",
    help="Language of messages: en or pt-BR (default: NORMLAB_LANG or the locale).",
)
sandbox_option = click.option(
    "--require-sandbox/--allow-degraded",
    default=None,
    help="Fail (exit 3) unless every isolation layer is active. Default: NORMLAB_REQUIRE_SANDBOX.",
)


def _require(flag: bool | None) -> bool:
    from grader.runner import env_flag

    return flag if flag is not None else env_flag("NORMLAB_REQUIRE_SANDBOX")


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="normlab")
def main() -> None:
    """normlab: exercises and a sandboxed grader for LayerNorm, RMSNorm and residual connections."""


def _run(path: str, suites: tuple[str, ...], require: bool, select: str | None):  # type: ignore[no-untyped-def]
    from grader.runner import Options, grade

    try:
        return grade(path, Options(suites=suites, require_sandbox=require, select=select))
    except SubmissionError as exc:
        raise UsageExit(str(exc)) from exc
    except GraderFault as exc:
        raise GraderFaultExit(str(exc)) from exc


@main.command()
@click.argument("path", required=False, type=click.Path())
@lang_option
@sandbox_option
@click.option("-k", "select", default=None, help="Only run tests matching this pytest -k expression.")
def check(path: str | None, lang: str | None, require_sandbox: bool | None, select: str | None) -> None:
    """Run the public tests on PATH (default: exercises/), as the final grading would.

    Exits 1 while any public test fails. The hidden tests are not run.
    """
    target = path or str(Path("exercises") if Path("exercises").is_dir() else paths.exercises_dir())
    language = _lang(lang)
    report = _run(target, ("public",), _require(require_sandbox), select)
    click.echo(reporters.to_text(report, language), nl=False)
    passed = report.score == report.max_score
    click.echo(render(Message("report.check_passed" if passed else "report.check_failed"), language))
    sys.exit(0 if passed else EXIT_FAILED_CHECK)


@main.command()
@click.argument("path", type=click.Path())
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON (same as --format json).")
@click.option("--format", "fmt", type=click.Choice(reporters.FORMATS), default=None, help="Report format.")
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, writable=True),
    default=None,
    help="Write the report to this file instead of stdout.",
)
@click.option("--public-only", is_flag=True, help="Run only the public tests.")
@lang_option
@sandbox_option
@click.option("-k", "select", default=None, help="Only run tests matching this pytest -k expression.")
def grade(
    path: str,
    as_json: bool,
    fmt: str | None,
    output: str | None,
    public_only: bool,
    lang: str | None,
    require_sandbox: bool | None,
    select: str | None,
) -> None:
    """Grade PATH with every suite: a directory like exercises/, a .py file or a .ipynb notebook.

    Exits 0 whenever grading completed, whatever the score.
    """
    if as_json and fmt not in (None, "json"):
        raise UsageExit("--json and --format are mutually exclusive")
    fmt = "json" if as_json else (fmt or "text")
    suites = ("public",) if public_only else ("public", "hidden")
    report = _run(path, suites, _require(require_sandbox), select)
    text = reporters.render_report(report, fmt, _lang(lang))
    if output:
        Path(output).write_text(text, encoding="utf-8")
    else:
        click.echo(text, nl=False)


@main.command()
@click.option(
    "--course-dir",
    type=click.Path(file_okay=False),
    default=None,
    help="Write an nbgrader course here: nbgrader_config.py and source/<assignment>/.",
)
@click.option("--assignment", default="normlab", show_default=True, help="The nbgrader assignment name.")
@click.option(
    "--student-zip",
    type=click.Path(dir_okay=False),
    default=None,
    help="Write a bundle for courses without nbgrader: stubs, public tests, README.",
)
def release(course_dir: str | None, assignment: str, student_zip: str | None) -> None:
    """Release the assignment: an nbgrader course directory and/or a student zip."""
    from grader import release as release_mod

    if not course_dir and not student_zip:
        raise UsageExit("give --course-dir, --student-zip or both")
    if course_dir:
        for path in release_mod.write_course(Path(course_dir), assignment):
            click.echo(f"wrote {path}")
        click.echo(f"next: cd {course_dir} && nbgrader generate_assignment {assignment}")
    if student_zip:
        from grader.bundle import write_student_zip

        click.echo(f"wrote {write_student_zip(Path(student_zip))}")


@main.command()
@click.argument("assignment")
@click.option(
    "--course-dir",
    type=click.Path(file_okay=False, exists=True),
    default=".",
    show_default=True,
    help="The nbgrader course directory.",
)
@click.option("--jobs", type=int, default=None, help="Parallel gradings on this machine (default: one per core).")
@click.option(
    "--scheduler",
    default=None,
    metavar="ADDRESS",
    help="Grade on a Dask distributed cluster (tcp://host:port) instead of local processes.",
)
@click.option("--force", is_flag=True, help="Regrade every submission, even those already done.")
@click.option("--no-progress", is_flag=True, help="Do not show the progress bar.")
@lang_option
@sandbox_option
def autograde(
    assignment: str,
    course_dir: str,
    jobs: int | None,
    scheduler: str | None,
    force: bool,
    no_progress: bool,
    lang: str | None,
    require_sandbox: bool | None,
) -> None:
    """Grade every submitted/<student>/ASSIGNMENT/ in the sandbox and write the grades into
    nbgrader's gradebook, autograded/ and feedback/. A re-run resumes where it stopped.

    Exits 0 when every submission was graded, 3 when the grader failed on any (those get no
    score; the others are graded).
    """
    from grader.autograde import autograde as run_autograde
    from grader.runner import Options

    options = Options(require_sandbox=_require(require_sandbox))
    counts = {"graded": 0, "unchanged": 0, "failed": 0}
    try:
        for outcome in run_autograde(
            Path(course_dir),
            assignment,
            options=options,
            jobs=jobs,
            scheduler=scheduler,
            force=force,
            lang=_lang(lang),
            progress=not no_progress,
        ):
            counts[outcome.state] += 1
            if outcome.state == "graded":
                click.echo(f"{outcome.student:<24} {outcome.score:g}/{outcome.max_score:g}")
            elif outcome.state == "failed":
                click.echo(f"{outcome.student:<24} NOT GRADED: {outcome.detail[:500]}", err=True)
    except GraderFault as exc:
        raise GraderFaultExit(str(exc)) from exc
    click.echo(
        f"{counts['graded']} graded, {counts['unchanged']} unchanged since the last run, {counts['failed']} not graded"
    )
    sys.exit(EXIT_GRADER_FAULT if counts["failed"] else 0)


@main.command()
@click.option(
    "--out",
    "out",
    type=click.Path(dir_okay=False),
    default="autograder.zip",
    show_default=True,
    help="Where to write the Gradescope autograder zip.",
)
def gradescope(out: str) -> None:
    """Build a Gradescope autograder bundle (setup.sh, run_autograder and normlab itself)."""
    from grader.gradescope import write_bundle

    click.echo(f"wrote {write_bundle(Path(out))}")


@main.command()
@click.option("--json", "as_json", is_flag=True, help="Print the layers as JSON.")
@lang_option
def doctor(as_json: bool, lang: str | None) -> None:
    """Check every isolation layer by running a probe in a real worker.

    Exits 0 when every layer is active and 1 when any is missing.
    """
    import json

    from grader.sandbox.doctor import diagnose

    statuses = diagnose()
    language = _lang(lang)
    if as_json:
        click.echo(json.dumps([{"layer": s.name, "active": s.active, "detail": s.detail} for s in statuses], indent=2))
    else:
        for status in statuses:
            state = render(Message("doctor.active" if status.active else "doctor.missing"), language)
            click.echo(f"{status.name:<17} {state:<8} {status.detail}")
        all_on = all(s.active for s in statuses)
        click.echo(render(Message("doctor.all_active" if all_on else "doctor.degraded"), language))
    sys.exit(0 if all(s.active for s in statuses) else EXIT_FAILED_CHECK)


@main.command()
@click.option("--rounds", default=3, show_default=True, help="Gradings per mode.")
@click.option("--json", "as_json", is_flag=True, help="Print the measurements as JSON.")
def bench(rounds: int, as_json: bool) -> None:
    """Measure the sandbox's overhead: grade the reference with full isolation and with the
    process-only baseline, alternating, and report the ratio of the median times."""
    import json
    import statistics

    from grader.bench import measure

    result = measure(rounds)
    if as_json:
        click.echo(
            json.dumps(
                {
                    "full_seconds": result.full_seconds,
                    "baseline_seconds": result.baseline_seconds,
                    "full_layers": result.full_layers,
                    "baseline_layers": result.baseline_layers,
                    "ratio": result.ratio,
                },
                indent=2,
            )
        )
        return
    click.echo(
        f"full isolation ({', '.join(result.full_layers)}): "
        f"median {statistics.median(result.full_seconds):.2f} s over {rounds} gradings"
    )
    click.echo(
        f"process-only baseline ({', '.join(result.baseline_layers)}): "
        f"median {statistics.median(result.baseline_seconds):.2f} s over {rounds} gradings"
    )
    click.echo(f"overhead ratio (full / baseline): {result.ratio:.2f}")


@main.command()
@click.option("--check", "only_check", is_flag=True, help="Do not write; exit 1 if exercises/ is out of sync.")
def stubs(only_check: bool) -> None:
    """Generate exercises/ (the student stubs) from solutions/."""
    from grader import stubs as stub_gen

    solutions, exercises = paths.solutions_dir(), paths.exercises_dir()
    if only_check:
        problems = stub_gen.differences(solutions, exercises)
        for problem in problems:
            click.echo(problem)
        if problems:
            click.echo("exercises/ is out of sync with solutions/: run `normlab stubs`.", err=True)
            sys.exit(EXIT_FAILED_CHECK)
        click.echo("exercises/ is in sync with solutions/.")
        return
    written = stub_gen.write(solutions, exercises)
    click.echo(f"wrote {len(written)} files to {exercises}")


def run() -> None:
    """Console entry point: an unexpected exception is a grader fault (exit 3), not a crash."""
    try:
        main(standalone_mode=True)
    except SystemExit:
        raise
    except Exception:  # a bug in the grader: say so, issue no score
        import traceback

        traceback.print_exc()
        click.echo("grader fault (no score issued): unexpected error, see the traceback above", err=True)
        sys.exit(EXIT_GRADER_FAULT)


if __name__ == "__main__":
    run()
