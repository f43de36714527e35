"""The ``normlab`` command: parse arguments, call the API, map outcomes to exit codes.

Settings are read once, here (course file, environment, then these options), and passed down.
"""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import os
import sys
import threading
import unicodedata
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import click

from grader import course, policy
from grader.faults import GraderFault
from grader.messages import Message, render
from grader.model import Report
from grader.report import reporters
from grader.sandbox.inside.protocol import clean_text
from grader.settings import Settings, SettingsError, load
from grader.submission import SubmissionError

if TYPE_CHECKING:
    from grader.classgrade import StudentOutcome
    from grader.integrations.folder import FolderClass

EXIT_FAILED_CHECK = 1
EXIT_USAGE = 2
EXIT_GRADER_FAULT = 3
EXIT_INTERRUPTED = 130
"""As a shell reports a command stopped by Ctrl-C (128 + SIGINT)."""
EXIT_CODES = (
    "Exit codes: 0 done (whatever the score); 1 a check found problems (failing public tests, "
    "stale stubs, a missing sandbox layer); 2 usage error; 3 grader fault, no score issued; "
    "130 interrupted (Ctrl-C)."
)

F = TypeVar("F", bound=Callable[..., Any])


class GraderFaultExit(click.ClickException):
    """The grader failed: report it on stderr and exit 3, without a score."""

    exit_code = EXIT_GRADER_FAULT

    def format_message(self) -> str:
        return f"grader fault (no score issued): {self.message}"


class UsageExit(click.UsageError):
    exit_code = EXIT_USAGE


class InterruptedExit(click.ClickException):
    """A class run stopped by Ctrl-C: what was published stays; the next run goes on from it."""

    exit_code = EXIT_INTERRUPTED

    def format_message(self) -> str:
        return f"interrupted: {self.message}"


def settings_from(course_dir: Path | None = None, course_file: str | None = None, **overrides: Any) -> Settings:
    """The settings of this run: course file and environment, then the command's options."""
    try:
        return load(course_dir=course_dir, course_file=Path(course_file) if course_file else None).replace(**overrides)
    except SettingsError as exc:
        raise UsageExit(str(exc)) from exc


def _language(value: str | None) -> str | None:
    from grader.messages import chosen_language

    try:
        return chosen_language(value) if value else None
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--lang") from None


def common(function: F) -> F:
    """The options every grading command shares: language and sandbox requirement."""
    function = click.option(
        "--require-sandbox/--allow-degraded",
        default=None,
        help="Fail (exit 3) unless every isolation layer is active. Default: course file, NORMLAB_REQUIRE_SANDBOX.",
    )(function)
    return click.option(
        "--lang",
        default=None,
        metavar="LANG",
        help="Language of what students read (reports, feedback): en or pt-BR (default: NORMLAB_LANG, the course "
        "file, the locale). A class's summary for the instructor is in English.",
    )(function)


output_option = click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, writable=True),
    default=None,
    help="Write to this file, not stdout.",
)


def _emit(text: str, output: str | None) -> None:
    """Print or write a report; any Python string survives (lone surrogates are escaped)."""
    text = clean_text(text)
    if output:
        Path(output).write_text(text, encoding="utf-8")
    else:
        click.echo(text, nl=False)


@click.group(context_settings={"help_option_names": ["-h", "--help"]}, epilog=EXIT_CODES)
@click.version_option(package_name="normlab")
def main() -> None:
    """normlab: exercises and a sandboxed grader for LayerNorm, RMSNorm and residual connections."""


Work = tuple[Path, Message | None, Path | None]
"""What :func:`_work_in` found: the work, the note on its choice, the folder it was chosen in."""


def _work_in(path: Path) -> Work:
    """The work ``path`` holds, a note on the choice when there was one, and the folder it was
    chosen in (None: ``path`` is the work itself)."""
    from grader import handin

    if path.is_dir() and not any((path / f"{m}.py").is_file() for m in course.MODULES):
        # A student's folder holding a notebook, a .py file or exercises/ deeper down: graded
        # as grade-class and Gradescope grade it (the same folder must get the same grade).
        target, note = handin.find_submission(path)
        return target, note, path
    return path, None, None


def _grade(path: str, suites: tuple[str, ...], settings: Settings, select: str | None) -> Report:
    return _grade_work(_work_in(Path(path)), suites, settings, select)


def _grade_work(work: Work, suites: tuple[str, ...], settings: Settings, select: str | None) -> Report:
    from grader.sandbox import policy

    policy.probe_soon(settings.bwrap)  # while the runner is imported and the work prepared
    from grader.runner import Options, grade
    from grader.sessions import NothingSelected

    target, note, upload = work
    options = Options(suites=suites, settings=settings, select=select, single=True, upload=upload)
    try:
        report = grade(target, options)
        return report if note is None else dataclasses.replace(report, notes=(note, *report.notes))
    except SubmissionError as exc:
        raise UsageExit(str(exc)) from exc
    except NothingSelected as exc:
        raise UsageExit(render(Message("cli.nothing_selected", {"select": exc.select}), settings.lang)) from exc
    except GraderFault as exc:
        raise GraderFaultExit(str(exc)) from exc


@main.command(short_help="Run the public tests on your work.", epilog=EXIT_CODES)
@click.argument("path", required=False, type=click.Path())
@common
@output_option
@click.option("-k", "select", default=None, help="Only run tests matching this pytest -k expression.")
def check(
    path: str | None, lang: str | None, require_sandbox: bool | None, output: str | None, select: str | None
) -> None:
    """Run the public tests on PATH (a folder of exercise files, a notebook or a .py file), as
    the final grading would. Without PATH: this folder if it holds your exercise files
    (rmsnorm.py ...), else ./exercises, else the notebook here that holds your work.

    Exits 1 while any public test fails. The hidden tests are not run.
    """
    settings = settings_from(lang=_language(lang), require_sandbox=require_sandbox)
    target = Path(path) if path else _your_work(settings.lang)
    # The report's title says which folder was checked, in full: the one header line.
    work = _work_in(target.resolve())  # graded, and its answers listed, as grade finds them
    report = _grade_work(work, ("public",), settings, select)
    passed = report.score == report.max_score
    verdict = render(Message("report.check_passed" if passed else "report.check_failed"), settings.lang)
    blanks = _blank_answers(work, settings.lang)
    _emit(reporters.to_text(report, settings.lang) + verdict + "\n" + blanks, output)
    sys.exit(0 if passed else EXIT_FAILED_CHECK)


def _blank_answers(work: Work, lang: str) -> str:
    """Which verification answers are still blank (or why none could be read), in the work
    the tests ran on: a folder's notebook holds its answers as the grade reads them."""
    from grader import handin, questions, verification

    target, _, upload = work
    elsewhere, _ = handin.upload_answers(upload, target)
    answers = verification.find(target, elsewhere=elsewhere)
    where = {"file": answers.where}
    if answers.problem is not None:
        return render(answers.problem, lang) + "\n"
    bank = questions.load()
    blank, malformed = verification.blanks(bank, answers), verification.form_problems(bank, answers)
    lines = [render(note, lang) for note in answers.notes]
    if malformed:  # an answer the grade would score 0 whatever the key: say so now
        lines.append(render(Message("report.malformed_title", where), lang))
        lines += [f"  {qid}: {render(problem, lang)}" for qid, problem in malformed]
    if not blank:  # "every question has an answer" would contradict the unreadable ones just listed
        done = [] if malformed else [render(Message("report.no_blanks", where), lang)]
        return "\n".join([*lines, *done]) + "\n"
    by_question: dict[str, list[str]] = {}
    for qid, part in blank:
        by_question.setdefault(qid, []).append(part)
    lines.append(render(Message("report.blanks_title", where), lang))
    for qid, parts in by_question.items():
        lines.append("  " + render(Message("report.blank_line", {"question": qid, "parts": ", ".join(parts)}), lang))
    return "\n".join(lines) + "\n"


@main.command(short_help="Check the lesson's artifact checklist on your work.", epilog=EXIT_CODES)
@click.argument("path", required=False, type=click.Path())
@common
def checklist(path: str | None, lang: str | None, require_sandbox: bool | None) -> None:
    """Check the lesson's artifact checklist (the site's Checklist page) on PATH (default: as for
    check): the code, the demonstration, the config note, the residual-stream notes and the
    diagram, as a table.

    Exits 1 when an artifact is missing. The hidden tests are not run.
    """
    from grader import checklist as artifacts

    settings = settings_from(lang=_language(lang), require_sandbox=require_sandbox)
    target = Path(path) if path else _your_work(settings.lang)
    report = _grade(str(target), ("public",), settings, None)
    items = artifacts.check(target if target.is_dir() else target.parent, report)
    lines = [render(Message("checklist.title", {"path": str(target.resolve())}), settings.lang)]
    for item in items:
        name = render(Message(f"checklist.artifact.{item.artifact}"), settings.lang)
        lines.append(f"  {'✓' if item.ok else '✗'} {name:<15} {render(item.detail, settings.lang)}")
    complete = all(item.ok for item in items)
    lines.append(render(Message("checklist.all_present" if complete else "checklist.some_missing"), settings.lang))
    _emit("\n".join(lines) + "\n", None)
    sys.exit(0 if complete else EXIT_FAILED_CHECK)


def _your_work(lang: str) -> Path:
    """What ``check`` grades when given no path: never anything but the student's own files.
    A notebook student runs it beside ``lab.ipynb``: the notebook (of several, the one that
    implements the most, as a hand-in is read) is checked, and said."""
    here = Path.cwd()
    if any((here / f"{module}.py").is_file() for module in course.MODULES):
        return here
    if (here / "exercises").is_dir():
        return here / "exercises"
    # Never a link: grading does not follow one (it may be another student's notebook).
    if any(p.is_file() and not p.is_symlink() for p in here.glob("*.ipynb")):
        from grader import handin

        chosen, several = handin.find_submission(here)
        if chosen.suffix == ".ipynb":
            click.echo(render(Message("cli.checking_notebook", {"notebook": chosen.name}), lang), err=True)
            if several is not None:  # which of them, and why: the others are named
                click.echo(render(several, lang), err=True)
            return chosen
    raise UsageExit(render(Message("cli.no_work", {"folder": str(here)}), lang))


course_file_option = click.option(
    "--course-file",
    type=click.Path(dir_okay=False),
    default=None,
    help="A course file (normlab.toml) with the course's settings and grading policy. Default: NORMLAB_COURSE_FILE.",
)


@main.command(short_help="Grade one submission with every suite.", epilog=EXIT_CODES)
@click.argument("path", type=click.Path())
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON (same as --format json).")
@click.option("--format", "fmt", type=click.Choice(reporters.FORMATS), default=None, help="Report format.")
@output_option
@click.option("--public-only", is_flag=True, help="Run only the public tests.")
@common
@course_file_option
@click.option("-k", "select", default=None, help="Only run tests matching this pytest -k expression.")
def grade(
    path: str,
    as_json: bool,
    fmt: str | None,
    output: str | None,
    public_only: bool,
    lang: str | None,
    require_sandbox: bool | None,
    course_file: str | None,
    select: str | None,
) -> None:
    """Grade PATH with every suite: a directory like exercises/, a .py file or a .ipynb notebook.

    Exits 0 whenever grading completed, whatever the score.
    """
    if as_json and fmt not in (None, "json"):
        raise UsageExit("--json and --format are mutually exclusive")
    fmt = "json" if as_json else (fmt or "text")
    settings = settings_from(course_file=course_file, lang=_language(lang), require_sandbox=require_sandbox)
    from grader.runner import FINAL

    if not public_only and not course.hidden_tests():
        raise UsageExit(
            "this copy of normlab has no hidden tests (it is the student copy): the final grade is given "
            "where your instructor grades. Run `normlab check` to run the public tests on your work."
        )
    report = _grade(path, ("public",) if public_only else FINAL, settings, select)
    if not public_only:  # the course's points are for final grades; --public-only is a check
        report = policy.apply(report, settings.policy)
    text = reporters.render_report(report, fmt, settings.lang, settings.gradescope_visibility)
    _emit(text, output)


@main.command(short_help="Release: nbgrader course and/or student zip.", epilog=EXIT_CODES)
@click.option(
    "--course-dir",
    type=click.Path(file_okay=False),
    default=None,
    help="Write an nbgrader course here: nbgrader_config.py, normlab.toml and source/<assignment>/.",
)
@click.option("--assignment", default="normlab", show_default=True, help="The nbgrader assignment name.")
@click.option(
    "--student-zip",
    type=click.Path(dir_okay=False),
    default=None,
    help="Write a zip for courses without nbgrader: stubs, public tests, a checker, README.",
)
@click.option(
    "--lang",
    default=None,
    metavar="LANG",
    help="The course's language, en or pt-BR, for a new course file and the notebook's questions "
    "(default: NORMLAB_LANG, the locale; an existing course file's own language wins).",
)
def release(course_dir: str | None, assignment: str, student_zip: str | None, lang: str | None) -> None:
    """Release the assignment: an nbgrader course directory and/or a student zip."""
    if not course_dir and not student_zip:
        raise UsageExit("give --course-dir, --student-zip or both")
    if course_dir:
        from grader.integrations.nbgrader.release import ReleaseRefused, write_course

        lang = settings_from(lang=_language(lang)).lang
        try:
            release = write_course(Path(course_dir), assignment, lang)
        except ReleaseRefused as exc:
            raise UsageExit(render(exc.message, lang)) from exc
        for written in release.paths:
            click.echo(f"wrote {written}")
        for note in release.notes:
            click.echo(render(note, lang))
        # nbgrader skips an assignment it released before ("Skipping existing assignment")
        again = " --force" if (Path(course_dir) / "release" / assignment).exists() else ""
        click.echo(f"next: cd {course_dir} && nbgrader generate_assignment{again} {assignment}")
    if student_zip:
        from grader.integrations.student_zip import write_student_zip

        click.echo(f"wrote {write_student_zip(Path(student_zip))}")


@main.command(short_help="Grade a whole nbgrader class in the sandbox.", epilog=EXIT_CODES)
@click.argument("assignment")
@click.option(
    "--course-dir",
    type=click.Path(file_okay=False, exists=True),
    default=".",
    show_default=True,
    help="The nbgrader course directory.",
)
@click.option("--jobs", type=click.IntRange(min=1), default=None, help="Parallel gradings (default: one per core).")
@click.option(
    "--scheduler",
    default=None,
    metavar="ADDRESS",
    help="Grade on a Dask distributed cluster (tcp://host:port) instead of local processes.",
)
@click.option("--force", is_flag=True, help="Regrade every submission, even those already done.")
@click.option(
    "--student",
    "students",
    multiple=True,
    metavar="NAME",
    help="Grade only this student (repeatable), again even if done; the others are left as they are.",
)
@click.option("--no-progress", is_flag=True, help="Do not show the progress bar.")
@common
def autograde(
    assignment: str,
    course_dir: str,
    jobs: int | None,
    scheduler: str | None,
    force: bool,
    students: tuple[str, ...],
    no_progress: bool,
    lang: str | None,
    require_sandbox: bool | None,
) -> None:
    """Grade every submitted/<student>/ASSIGNMENT/ in the sandbox and write the grades into
    nbgrader's gradebook, autograded/ and feedback/. A re-run resumes where it stopped; when
    only the due date, an extension or the late policy changed, the stored verdicts are
    re-scored without grading again.

    Exits 0 when every submission was graded, 3 when any was not (those get no score; the
    others are graded).
    """
    from grader.integrations.nbgrader.autograde import autograde as grade_class
    from grader.integrations.nbgrader.autograde import summary_image
    from grader.runner import FINAL, Options

    root = Path(course_dir)
    _check_students(root, assignment, students)
    settings = settings_from(root, lang=_language(lang), require_sandbox=require_sandbox, jobs=jobs)
    options = Options(suites=FINAL, settings=settings)
    outcomes = grade_class(
        root,
        assignment,
        options=options,
        scheduler=scheduler,
        force=force,
        progress=not no_progress,
        students=frozenset(students),
    )
    # A mistyped assignment is refused by the run itself: no lock folder is made for it.
    released = (root / "release" / assignment).is_dir()
    with _only_run(root.resolve() / "normlab" / assignment) if released else contextlib.nullcontext():
        seen = _echo_class(outcomes, force=force)
        if students:  # a regrade of some students: the class's summary and histogram stay as they were
            click.echo(f"class summary and histogram not redrawn: only {', '.join(students)} graded in this run")
        else:
            _class_summary(seen, summary_image(root, assignment), assignment)
        _finish_class(seen)


def _only_run(work: Path) -> contextlib.ExitStack:
    """The class's run lock (``classgrade.only_run``), held until the run's last file is
    written; another run holding it is a usage error (exit 2), before anything is written."""
    from grader.classgrade import only_run

    held = contextlib.ExitStack()
    try:
        held.enter_context(only_run(work))
    except SettingsError as exc:
        raise UsageExit(str(exc)) from exc
    return held


def _check_students(root: Path, assignment: str, students: tuple[str, ...]) -> None:
    """Every --student must have handed something in: a typo is a usage error, not a grade."""
    missing = [name for name in students if not (root / "submitted" / name / assignment).is_dir()]
    if missing:
        names = ", ".join(clean_text(name)[:100] for name in missing)
        raise UsageExit(f"no submitted/<student>/{assignment}/ folder for: {names}")


def _echo_class(
    outcomes: Iterable[StudentOutcome], seen: list[StudentOutcome] | None = None, force: bool = False
) -> list[StudentOutcome]:
    """Print each student's outcome as it comes; the outcomes, also gathered in ``seen`` as
    they come (what an interrupted run did is then known)."""
    seen = [] if seen is None else seen
    try:
        for outcome in outcomes:
            seen.append(_echo_outcome(outcome))
        return seen
    except SettingsError as exc:  # the course is not ready to grade: nothing was published
        raise UsageExit(str(exc)) from exc
    except GraderFault as exc:
        raise GraderFaultExit(str(exc)) from exc
    except KeyboardInterrupt:
        from grader.classgrade import State

        published = sum(o.state not in (State.FAILED, State.UNCHANGED) for o in seen)
        # With --force the same command would grade everyone again: it goes on without it.
        again = "the same command without --force" if force else "the same command"
        raise InterruptedExit(
            f"{published} student(s) published in this run, and kept; run {again} again to go on "
            "(a student graded but not yet published is published from the stored report, not graded again)"
        ) from None


def _finish_class(seen: list[StudentOutcome]) -> None:
    """The class's summary line, and the exit code: 3 when any student was not graded."""
    from grader.classgrade import State

    counts = {state: sum(o.state is state for o in seen) for state in State}
    shown = [o for o in seen if o.report is not None and o.state is not State.UNCHANGED]
    by_hand = max((policy.manual_points(o.report) for o in shown if o.report is not None), default=0.0)
    if by_hand:  # the maximum above is the automatic part; nbgrader's counts the written answers too
        # Said as it stays true once hand grades are given (nbgrader's totals then count them).
        late = " (a late student's line counts those given so far)" if any(o.by_hand for o in shown) else ""
        click.echo(
            f"the scores above are the automatic part; the written answers, {by_hand:g} points more, "
            f"are graded by hand and not in them{late}"
        )
    rescored = f", {counts[State.RESCORED]} re-scored (same verdicts, new terms)" if counts[State.RESCORED] else ""
    resumed = f", {counts[State.RESUMED]} graded by an earlier run, published now" if counts[State.RESUMED] else ""
    again = counts[State.REPUBLISHED]
    republished = f", {again} published again (their published grade was gone)" if again else ""
    click.echo(
        f"{counts[State.GRADED]} graded, {counts[State.UNCHANGED]} unchanged since the last run, "
        f"{counts[State.FAILED]} not graded{resumed}{rescored}{republished}"
    )
    sys.exit(EXIT_GRADER_FAULT if counts[State.FAILED] else 0)


def _echo_outcome(outcome: StudentOutcome) -> StudentOutcome:
    """One student's line, as their grading is published (or re-scored)."""
    from grader.classgrade import State

    if outcome.state in (State.GRADED, State.RESUMED, State.RESCORED, State.REPUBLISHED):
        line = f"{outcome.student:<24} {outcome.score:g}/{outcome.max_score:g}"
        if outcome.penalty:  # what the gradebook counts: hand points in, the penalty out
            counted = (outcome.score or 0.0) + outcome.by_hand
            hand = f" of {counted:g} with {outcome.by_hand:g} by hand" if outcome.by_hand else ""
            line += f" (late penalty -{outcome.penalty:g}{hand}: {max(0.0, counted - outcome.penalty):g})"
        if outcome.state is State.RESCORED:
            line += " re-scored"
        elif outcome.state is State.RESUMED:
            line += " (graded by an earlier run)"
        elif outcome.state is State.REPUBLISHED:
            line += " published again (not graded again)"
        click.echo(clean_text(line))
        sys.stdout.flush()  # a line per student as it is published, into a file or a pipe too
    elif outcome.state is State.FAILED:
        detail = reporters.printable(clean_text(outcome.detail[:500]))
        click.echo(f"{outcome.student:<24} NOT GRADED: {detail}", err=True)
    return outcome


@main.command("grade-class", short_help="Grade a folder of submissions, one per student.", epilog=EXIT_CODES)
@click.argument("submissions", type=click.Path(file_okay=False, exists=True))
@click.option(
    "-o",
    "--output-dir",
    type=click.Path(file_okay=False),
    required=True,
    help="Where reports, feedback pages and grades.csv go (kept between runs, to resume).",
)
@click.option("--jobs", type=click.IntRange(min=1), default=None, help="Parallel gradings (default: one per core).")
@click.option("--force", is_flag=True, help="Regrade every submission, even those already done.")
@click.option("--student", "students", multiple=True, metavar="NAME", help="Grade only this student (repeatable).")
@click.option("--no-progress", is_flag=True, help="Do not show the progress bar.")
@common
@course_file_option
def grade_class(
    submissions: str,
    output_dir: str,
    jobs: int | None,
    force: bool,
    students: tuple[str, ...],
    no_progress: bool,
    lang: str | None,
    require_sandbox: bool | None,
    course_file: str | None,
) -> None:
    """Grade every submission in SUBMISSIONS: <student>.py, <student>.ipynb or a <student>/
    folder (the exercise modules, or the notebook, .py file or folder of modules inside it that
    holds the work), in the sandbox, in parallel, resumably. Writes a feedback page per student,
    grades.csv and the score histogram into the output directory.

    Exits 0 when every submission was graded, 3 when any was not.
    """
    from grader.classgrade import ClassRun
    from grader.classgrade import grade_class as run_class
    from grader.integrations.folder import FolderClass, FolderPublisher
    from grader.runner import FINAL, Options

    settings = settings_from(course_file=course_file, lang=_language(lang), require_sandbox=require_sandbox, jobs=jobs)
    source = FolderClass(Path(submissions).resolve(), Path(output_dir).resolve())
    settings = _class_policy(settings, source.out)
    # As the class folder's names are read: a name pasted from a macOS window is decomposed.
    students = tuple(unicodedata.normalize("NFC", name) for name in students)
    _known_students(source, students)
    # Every suite a final grade holds, the questions' auto-graded parts included, as autograde.
    # A <student>.py has no answers file: one beside it in the class folder is nobody's own.
    options = Options(suites=FINAL, settings=settings, class_root=source.root)
    run = ClassRun(source, FolderPublisher(source, settings.lang), options, force=force)
    run = dataclasses.replace(run, progress=not no_progress, students=frozenset(students))
    seen: list[StudentOutcome] = []
    with _only_run(source.work):  # refused: another run's files are its own, nothing is written
        complete = False
        try:
            _echo_class(run_class(run), seen, force=force)
            complete = True
        finally:  # an interrupted run still leaves grades.csv as its stored grades now stand
            _save_class(source, settings, seen, partial=bool(students) or not complete)
        if not students:
            _class_summary(seen, source.out / "scores.png", source.root.name)
        _finish_class(seen)


def _save_class(source: FolderClass, settings: Settings, seen: list[StudentOutcome], partial: bool) -> None:
    """grades.csv and what a later run or written import needs, as the class's grades stand."""
    from grader.integrations.folder import grades_csv, save_policy, save_roster, save_source

    save_roster(source.out, seen, partial=partial)
    save_policy(source.out, settings.policy)
    save_source(source.out, source.root)
    click.echo(f"wrote {grades_csv(source.out, settings.policy)}")


def _class_policy(settings: Settings, out: Path) -> Settings:
    """The policy the class was graded under when no course file is given: a run without one
    (``--student erin``) must not re-score the whole class under the defaults."""
    from grader.integrations.folder import saved_policy

    if settings.course_file is not None or not (out / "normlab" / "policy.json").is_file():
        return settings
    click.echo("policy: the class's own, from its last run (give --course-file to change it)")
    return settings.replace(policy=saved_policy(out))


def _known_students(source: Any, students: tuple[str, ...]) -> None:
    """A ``--student`` that names nobody in the class is a mistake to say, not a quiet no-op."""
    if not students:
        return
    known = {s.student for s in source.submissions(frozenset(students))}
    unknown = [name for name in students if name not in known]
    if unknown:
        raise UsageExit(f"no hand-in for {', '.join(unknown)} in {source.root}")


def _class_summary(outcomes: list[StudentOutcome], image: Path, assignment: str) -> None:
    """Print the class's summary and draw its score histogram (never fails the run)."""
    from grader import classsummary

    summary = classsummary.summarize(outcomes)
    click.echo(clean_text(classsummary.summary_text(summary)), nl=False)
    try:
        drawn = classsummary.write_histogram(summary, image, f"{assignment}: {summary.scored} students")
    except Exception as exc:  # the grades are written; a figure that cannot be drawn is only said
        click.echo(f"the score histogram could not be drawn ({type(exc).__name__}: {exc})", err=True)
        return
    click.echo(f"score histogram: {drawn}" if drawn else "score histogram: not drawn (matplotlib is not installed)")


@main.group(short_help="Grade the written answers question by question (nbgrader or grade-class).")
def written() -> None:
    """Grade the questions' written parts question by question: export one page per question
    (every student's answer, the rubric items as checkboxes), tick, import the points: into
    nbgrader's gradebook (and so into `nbgrader export`'s class CSV), or, for a class graded with
    `normlab grade-class`, into its grades.csv (--class-dir)."""


course_dir_option = click.option(
    "--course-dir",
    type=click.Path(file_okay=False, exists=True),
    default=".",
    show_default=True,
    help="The nbgrader course directory.",
)
class_dir_option = click.option(
    "--class-dir",
    type=click.Path(file_okay=False, exists=True),
    default=None,
    help="A class graded with `normlab grade-class -o CLASS_DIR` instead of an nbgrader course.",
)


@written.command("export", epilog=EXIT_CODES)
@click.argument("assignment")
@click.argument("question")
@course_dir_option
@class_dir_option
@click.option(
    "--submissions",
    type=click.Path(file_okay=False, exists=True),
    default=None,
    help="With --class-dir: the folder of submissions that grade-class graded.",
)
@click.option(
    "--ungraded",
    is_flag=True,
    help="Only the answers without a hand grade (or, on nbgrader, changed since theirs).",
)
@output_option
def written_export(
    assignment: str,
    question: str,
    course_dir: str,
    class_dir: str | None,
    submissions: str | None,
    ungraded: bool,
    output: str | None,
) -> None:
    """Write QUESTION's page for ASSIGNMENT: the rubric, then each student's answer with the
    rubric items as checkboxes (and the hand grade it already has, if any). For graders only:
    it holds the rubric."""
    from grader.integrations import folder_written
    from grader.integrations.folder import FolderClass
    from grader.integrations.nbgrader.written import export_page

    if (class_dir is None) != (submissions is None):
        raise UsageExit("--class-dir and --submissions go together (a class graded with normlab grade-class)")
    try:
        if class_dir is not None and submissions is not None:
            folder = FolderClass(Path(submissions).resolve(), Path(class_dir).resolve())
            _emit(folder_written.export_page(folder, assignment, question, ungraded), output)
        else:
            _emit(export_page(Path(course_dir), assignment, question, ungraded), output)
    except StopIteration:
        raise UsageExit(f"no question {question!r} in the bank") from None
    except GraderFault as exc:
        raise UsageExit(str(exc)) from exc


@written.command("import", epilog=EXIT_CODES)
@click.argument("page", type=click.Path(dir_okay=False, exists=True))
@course_dir_option
@class_dir_option
def written_import(page: str, course_dir: str, class_dir: str | None) -> None:
    """Add up the ticked rubric items of PAGE (written by `normlab written export`) and write
    each student's points into the gradebook as the question's manual score, or, with
    --class-dir, into the class's grades.csv."""
    from grader.integrations import folder_written
    from grader.integrations.nbgrader.written import import_page

    text = Path(page).read_text(encoding="utf-8")
    try:
        if class_dir is not None:
            marked = folder_written.import_page(Path(class_dir).resolve(), text)
        else:
            marked = import_page(Path(course_dir), text)
    except GraderFault as exc:
        raise UsageExit(str(exc)) from exc
    for entry in marked:
        click.echo(clean_text(f"{entry.student:<24} {entry.points:g}"))
    if class_dir is not None:
        click.echo(f"wrote {Path(class_dir) / 'grades.csv'}")


@main.command(short_help="Build a Gradescope autograder zip.", epilog=EXIT_CODES)
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False),
    default="autograder.zip",
    show_default=True,
    help="The zip to write.",
)
@click.option(
    "--course-dir",
    type=click.Path(file_okay=False, exists=True),
    default=None,
    help="Ship this course's normlab.toml in the bundle (language, packages, limits, policy, [gradescope] visibility).",
)
def gradescope(output: str, course_dir: str | None) -> None:
    """Build a Gradescope autograder bundle (setup.sh, run_autograder, normlab itself, the
    dependencies pinned to this environment's versions, and the course file if given)."""
    from grader.integrations.gradescope import write_bundle, written_questions
    from grader.settings import COURSE_FILE

    course_file = Path(course_dir) / COURSE_FILE if course_dir else None
    if course_file is not None and not course_file.is_file():
        raise UsageExit(f"{course_file} does not exist: run normlab release --course-dir {course_dir} first")
    try:
        click.echo(f"wrote {write_bundle(Path(output), course_file)}")
    except SettingsError as exc:
        raise UsageExit(str(exc)) from exc
    course = settings_from(course_file=str(course_file) if course_file else None)  # the course's, as in the zip
    outline = written_questions(Path(output), course.lang, course.policy)
    click.echo(f"wrote {outline} (the written questions as Gradescope manual questions, to enter by hand)")


@main.command(short_help="Check every isolation layer from inside a worker.", epilog=EXIT_CODES)
@click.option("--json", "as_json", is_flag=True, help="Print the layers as JSON.")
@output_option
@click.option("--lang", default=None, metavar="LANG", help="Language of messages: en or pt-BR.")
def doctor(as_json: bool, output: str | None, lang: str | None) -> None:
    """Check every isolation layer by running a probe in a real worker.

    Exits 0 when every layer is active and 1 when any is missing.
    """
    import json

    from grader.sandbox.doctor import diagnose

    settings = settings_from(lang=_language(lang))
    statuses = diagnose(settings)
    all_on = all(s.active for s in statuses)
    if as_json:
        text = (
            json.dumps([{"layer": s.name, "active": s.active, "detail": s.detail} for s in statuses], indent=2) + "\n"
        )
    else:
        lines = []
        for status in statuses:
            state = render(Message("doctor.active" if status.active else "doctor.missing"), settings.lang)
            lines.append(f"{status.name:<17} {state:<8} {status.detail}")
        lines.append(render(Message("doctor.all_active" if all_on else "doctor.degraded"), settings.lang))
        text = "\n".join(lines) + "\n"
    _emit(text, output)
    sys.exit(0 if all_on else EXIT_FAILED_CHECK)


@main.command(short_help="Build the environment student code runs in.", epilog=EXIT_CODES)
@click.option(
    "--course-dir",
    type=click.Path(file_okay=False, exists=True),
    default=None,
    help="Build it for this course's packages (normlab.toml, [packages]); default: numpy, matplotlib.",
)
def environment(course_dir: str | None) -> None:
    """Build the interpreter environment student code runs in: a venv of its own with numpy and
    the course's packages, and nothing of the grader's. Needs the package registry once."""
    from grader.sandbox import environment as env

    settings = settings_from(Path(course_dir) if course_dir else None)
    try:
        built = env.build(settings.packages)
    except GraderFault as exc:
        raise GraderFaultExit(str(exc)) from exc
    click.echo(f"{built.path}: {', '.join(built.requirements)}")


@main.command(short_help="Measure what the sandbox costs, or a class against nbgrader.", epilog=EXIT_CODES)
@click.option("--rounds", type=click.IntRange(min=1), default=3, show_default=True, help="Gradings per mode.")
@click.option("--json", "as_json", is_flag=True, help="Print the measurements as JSON.")
@output_option
@click.option(
    "--class-size",
    type=click.IntRange(min=0),
    default=0,
    help="Also benchmark a generated class of this many notebooks: nbgrader autograde against normlab "
    "autograde, side by side (200 is the documented figure; takes minutes).",
)
@click.option(
    "--jobs",
    "jobs_list",
    default="1,2",
    show_default=True,
    help="The --jobs values normlab autograde is timed with, comma-separated (class benchmark).",
)
@click.option(
    "--workdir",
    type=click.Path(file_okay=False),
    default=None,
    help="Where the class benchmark's courses are written and kept (default: a temporary folder, removed).",
)
def bench(rounds: int, as_json: bool, output: str | None, class_size: int, jobs_list: str, workdir: str | None) -> None:
    """Measure the sandbox's overhead: grade the reference with full isolation and with the
    process-only baseline, alternating, and report the ratio of the median times.

    With --class-size N: generate a class of N notebooks (solved, partly solved, untouched,
    slow, crashing, adversarial), grade identical copies with `nbgrader autograde` and with
    `normlab autograde` in one run, and print throughput, latency, CPU per submission, peak
    memory and the ratios, then time `normlab grade` on one notebook. Exits 1 if an honest
    submission's grade differs between the two paths.
    """
    if class_size:
        _bench_class(class_size, jobs_list, workdir, rounds, as_json, output)
        return
    _bench_overhead(rounds, as_json, output)


def _bench_overhead(rounds: int, as_json: bool, output: str | None) -> None:
    import json
    import statistics

    from grader.bench import measure

    result = measure(settings_from(), rounds)
    if as_json:
        fields = ("full_seconds", "baseline_seconds", "full_layers", "baseline_layers", "ratio")
        _emit(json.dumps({name: getattr(result, name) for name in fields}, indent=2) + "\n", output)
        return
    full, base = statistics.median(result.full_seconds), statistics.median(result.baseline_seconds)
    _emit(
        f"full isolation ({', '.join(result.full_layers)}): median {full:.2f} s over {rounds} gradings\n"
        f"process-only baseline ({', '.join(result.baseline_layers)}): median {base:.2f} s over {rounds} gradings\n"
        f"overhead ratio (full / baseline): {result.ratio:.2f}\n",
        output,
    )


def _bench_class(
    size: int, jobs_list: str, workdir: str | None, rounds: int, as_json: bool, output: str | None
) -> None:
    import json
    import tempfile

    from grader import classbench

    try:
        jobs = tuple(int(j) for j in jobs_list.split(",") if j.strip())
    except ValueError:
        raise UsageExit(f"--jobs {jobs_list!r}: give whole numbers separated by commas, e.g. 1,2") from None
    if not jobs or min(jobs) < 1:
        raise UsageExit("--jobs: give at least one number of parallel gradings, each at least 1")
    with tempfile.TemporaryDirectory(prefix="normlab-bench-") as scratch:
        try:
            result = classbench.measure_class(size, jobs, Path(workdir or scratch), rounds)
        except GraderFault as exc:
            raise GraderFaultExit(str(exc)) from exc
    if as_json:
        data = {"size": size, "runs": result.table(), "ratios": result.ratios(), "grade_seconds": result.grade_seconds}
        _emit(json.dumps(data | {"honest_mismatches": result.honest_mismatches}, indent=2) + "\n", output)
    else:
        _emit(classbench.report_text(result), output)
    sys.exit(EXIT_FAILED_CHECK if result.honest_mismatches else 0)


@main.command(short_help="Generate exercises/ from solutions/.", epilog=EXIT_CODES)
@click.option("--check", "only_check", is_flag=True, help="Do not write; exit 1 if exercises/ is out of sync.")
def stubs(only_check: bool) -> None:
    """Generate exercises/ (the student stubs) from solutions/."""
    from grader import stubs as stub_gen

    solutions, exercises = course.solutions_dir(), course.exercises_dir()
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
    except SystemExit as stop:
        _leave(stop.code)
    except Exception:  # a bug in the grader: say so, issue no score
        import traceback

        traceback.print_exc()
        click.echo("grader fault (no score issued): unexpected error, see the traceback above", err=True)
        _leave(EXIT_GRADER_FAULT)


def _leave(code: str | int | None) -> NoReturn:
    """End the process as soon as the command is done and its output written. Python's own
    teardown of the ~500 modules a grading loads (numpy, pytest) took 60 ms, a tenth of a
    one-off `normlab grade`; exit handlers still run (temporary files, a pool's processes).
    A thread still working (not a daemon) gets the ordinary exit, which waits for it."""
    main_thread = threading.main_thread()
    if any(t is not main_thread and not t.daemon for t in threading.enumerate()):
        sys.exit(code)
    if isinstance(code, str):
        print(code, file=sys.stderr)  # as sys.exit("message") would
    status = 1 if isinstance(code, str) else code or 0
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a closed pipe (`normlab grade | head`)
            stream.flush()
    os._exit(status)


if __name__ == "__main__":
    run()
