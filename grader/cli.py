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
    if flag is not None:
        return flag
    return os.environ.get("NORMLAB_REQUIRE_SANDBOX", "").strip().lower() in ("1", "true", "yes")


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
