"""normlab's grader: grade exercise submissions in a sandboxed worker against hidden suites.

The public API is small: :func:`grade` a submission with :class:`Options`, get a
:class:`Report` of :class:`CheckResult` entries, render it with :mod:`grader.reporters`.
"""

from grader.faults import GraderFault
from grader.model import CheckResult, Report, Status, Visibility
from grader.runner import Options, grade
from grader.sandbox.limits import Limits

__version__ = "0.1.0"

__all__ = [
    "CheckResult",
    "GraderFault",
    "Limits",
    "Options",
    "Report",
    "Status",
    "Visibility",
    "__version__",
    "grade",
]
