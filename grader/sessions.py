"""The suites, collected once per process and run again for each submission.

A fresh ``pytest.main`` per grading imports and collects every suite file again, which cost
more than a third of the trusted side's time per submission in a pool process. Here the suites
are collected once per process (per set of suite files, ``-k`` expression and their
modification times), and for each submission the one plugin of the session,
:class:`~grader.plugin.GradingPlugin`, calls its collected test functions again with that
submission's proxy as their ``student`` fixture.

Without ``-k`` the grader collects the files itself (``collection.py``: a tenth of the time). A
``-k`` expression is pytest's to read: then a pytest session is configured and collected.
pytest has no public API to keep a session open between runs; ``_prepareconfig`` and
``_do_configure`` are the two steps ``pytest.main`` takes before it collects (``wrap_session``).
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
import threading
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from _pytest.assertion.rewrite import assertstate_key
from _pytest.config import _prepareconfig

from grader import collection, course
from grader.faults import GraderFault
from grader.plugin import GradingPlugin, TestItem
from grader.proxy import StudentProxy
from grader.reference import AnswerFile, Reference

UNUSED_PLUGINS = (
    "unraisableexception",
    "threadexception",
    "logging",
    "doctest",
    "junitxml",
    "pastebin",
    "faulthandler",
    "legacypath",
    "setuponly",
    "setupplan",
    "cacheprovider",
    "stepwise",
    # The session lives as long as the process: pytest's capture would hold the process's
    # stdout and stderr for all of it, and its terminal reporter would print into them.
    "capture",
    "terminal",
)
"""pytest plugins turned off when grading: the suites use no fixture or option of theirs."""


@contextlib.contextmanager
def quiet() -> Iterator[None]:
    """Run pytest without entry-point plugins and without its output reaching ours."""
    saved = os.environ.get("PYTEST_DISABLE_PLUGIN_AUTOLOAD")
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    sink = io.StringIO()
    try:
        with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
            yield
    finally:
        if saved is None:
            os.environ.pop("PYTEST_DISABLE_PLUGIN_AUTOLOAD", None)
        else:
            os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = saved


def pytest_args(files: list[Path], scratch: Path, select: str | None) -> list[str]:
    """pytest on our files only: its own ini (not the project's), no conftest, no cache."""
    ini = scratch / "pytest.ini"
    ini.write_text("[pytest]\n")
    args = [
        *map(str, files),
        "-c",
        str(ini),
        "--rootdir",
        str(scratch),
        "--import-mode=importlib",
        *(f"-pno:{name}" for name in UNUSED_PLUGINS),
        "--noconftest",
        "-W",
        "ignore::DeprecationWarning",
    ]
    return args + (["-k", select] if select else [])


@dataclass(frozen=True)
class Key:
    """What a collected session depends on: the suite files as they are now, and ``-k``."""

    files: tuple[tuple[str, int, int], ...]
    hidden: frozenset[str]
    select: str | None


def key_of(files: list[Path], hidden: set[Path], select: str | None) -> Key:
    stamps = tuple((str(p), (s := p.stat()).st_mtime_ns, s.st_size) for p in files)
    return Key(stamps, frozenset(str(p) for p in hidden), select)


class NothingSelected(Exception):
    """``-k`` matched no test: the user's typo, not the grader's fault."""

    def __init__(self, select: str) -> None:
        super().__init__(select)
        self.select = select


class SuiteSession:
    """One configured and collected pytest session; :meth:`run` grades one submission."""

    def __init__(self, files: list[Path], hidden: set[Path], select: str | None, scratch: Path) -> None:
        self.plugin = GradingPlugin(None, None, hidden)
        _forget_modules(files)
        self.items = self._collected(files, scratch, select) if select else self._imported(files)
        if self.plugin.grader_faults:
            raise GraderFault(self.plugin.grader_faults[0])
        if not self.items and select:
            raise NothingSelected(select)
        if not self.items:
            raise GraderFault("no test was collected from the suites")
        self.broken = False
        """A run stopped half-way (a grader fault): its state is not to be reused."""

    def _imported(self, files: list[Path]) -> list[TestItem]:
        """The suites' tests as the grader collects them itself (``collection.py``)."""
        items, faults = collection.collect(files)
        self.plugin.grader_faults += faults
        self.plugin.pytest_collection_modifyitems(items)
        return list(items)

    def _collected(self, files: list[Path], scratch: Path, select: str) -> list[TestItem]:
        """The suites' tests that a ``-k`` expression selects, collected by a pytest session."""
        with quiet():
            config = _prepareconfig(pytest_args(files, scratch, select), plugins=[self.plugin])
            session = pytest.Session.from_config(config)
            config._do_configure()
            config.hook.pytest_sessionstart(session=session)
            config.hook.pytest_collection(session=session)
        _drop_rewrite_hook(config)
        return [item for item in session.items if isinstance(item, pytest.Function)]

    def run(self, proxy: StudentProxy, reference: Reference | None) -> GradingPlugin:
        """Every collected test on ``proxy``'s submission; the plugin holds the results.
        A grader fault stops the run (the plugin's ``grader_faults`` says which)."""
        self.plugin.begin(proxy, reference)
        # A warning in our checking code must not change a grade, whatever the process's filters
        # (the project's own tests turn warnings into errors).
        with quiet(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for item in self.items:
                self.plugin.run_test(item)
                if self.plugin.grader_faults:
                    self.broken = True
                    break
        return self.plugin


def _forget_modules(files: list[Path]) -> None:
    """pytest's importlib mode hands back a module already in ``sys.modules`` for the same
    path: a suite file changed since it was imported would be collected as it was."""
    paths = {str(p.resolve()) for p in files}
    names = {p.name for p in files}  # resolving every module's path cost ~30 ms a session
    for name, module in list(sys.modules.items()):
        origin = getattr(module, "__file__", None)
        if isinstance(origin, str) and os.path.basename(origin) in names and os.path.realpath(origin) in paths:
            del sys.modules[name]


def _drop_rewrite_hook(config: pytest.Config) -> None:
    """The suites are imported: this session's assertion-rewriting import hook is not needed
    any more, and left in ``sys.meta_path`` for the life of the process it would rewrite other
    imports (``pytest.main`` removes it when it unconfigures, which this session never does)."""
    state = config.stash.get(assertstate_key, None)
    hook = getattr(state, "hook", None)
    if hook is not None and hook in sys.meta_path:
        sys.meta_path.remove(hook)


LOCK = threading.RLock()
"""Held by the runner while it runs a session and reads its plugin: one plugin serves every
grading of a process, so two threads of one process (a Dask worker with several) take turns."""
_sessions: dict[Key, SuiteSession] = {}
_references: dict[Path, Reference] = {}


def session_for(files: list[Path], hidden: set[Path], select: str | None, scratch: Path) -> SuiteSession:
    """This process's collected session for these suites, made on first use."""
    key = key_of(files, hidden, select)
    found = _sessions.get(key)
    if found is None or found.broken:
        _sessions.clear()  # a suite file changed or a run broke: the old sessions are stale
        found = _sessions[key] = SuiteSession(files, hidden, select, scratch)
    return found


def reference_for(directory: Path) -> Reference:
    """This process's reference solution, imported on first use (its functions are pure given
    their inputs; its scratch files are removed after each grading by ``Reference.close``),
    with the answers an earlier process kept beside the hidden suites."""
    found = _references.get(directory)
    if found is None:
        kept = AnswerFile(course.suites_dir() / "__pycache__", directory)
        found = _references[directory] = Reference(directory, kept)
    return found
