"""normlab's grader: grade exercise submissions in a sandboxed worker against hidden suites.

The public API is small: :func:`grade` a submission with :class:`Options`, get a
:class:`Report` of :class:`CheckResult` entries, render it with :mod:`grader.report.reporters`.

The tree is the architecture: the core (``runner``, ``plugin``, ``proxy``, ``checks``, ...)
here; everything about the trust boundary in ``sandbox/`` (what runs inside it in
``sandbox/inside/``); nbgrader, Gradescope and the student zip in ``integrations/``; reports,
feedback and the store in ``report/``; the hidden suites in ``suites/``.
"""

from typing import TYPE_CHECKING, Any

from grader.sandbox.limits import pin_threads

pin_threads()  # before anything imports numpy: one BLAS thread, bit-stable reference answers

from grader.faults import GraderFault  # noqa: E402
from grader.model import CheckResult, Report, Status, Visibility  # noqa: E402
from grader.sandbox.limits import Limits  # noqa: E402
from grader.settings import Settings  # noqa: E402

if TYPE_CHECKING:
    from grader.runner import Options, grade


def __getattr__(name: str) -> Any:
    # The runner brings in pytest and the session machinery (~0.1 s): imported when something
    # asks for it, not for every command (``normlab --help``, ``release``, ``doctor``).
    if name in ("Options", "grade"):
        from grader import runner

        return getattr(runner, name)
    raise AttributeError(f"module 'grader' has no attribute {name!r}")


__version__ = "0.1.0"

__all__ = [
    "CheckResult",
    "GraderFault",
    "Limits",
    "Options",
    "Report",
    "Settings",
    "Status",
    "Visibility",
    "__version__",
    "grade",
]
