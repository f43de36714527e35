"""nbgrader as a class-grading source and publisher, its release and its in-kernel path.

Every nbgrader module imports ``nbformat``, which imports ``jsonschema``, whose format checkers
import ``rfc3987_syntax`` if it is installed; that package builds a parsing grammar when it is
imported, which cost about 2.4 s of every ``normlab autograde`` run in the main process.
Neither nbformat's notebook schemas nor nbgrader's use a ``format`` keyword, so the checker it
feeds is never used: jsonschema is told the package is absent (it then leaves the "iri"
formats unchecked, as it does wherever the package is not installed).
"""

import sys

sys.modules.setdefault("rfc3987_syntax", None)  # type: ignore[arg-type]
