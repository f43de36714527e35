"""Everything that turns a :class:`~grader.model.Report` into something a person or a program
reads: text, JSON, Gradescope's ``results.json``, CSV and HTML feedback (``reporters``,
``feedback``), the one JSON encoding of a report (``encoding``), reports on disk (``store``),
and the one Jinja environment every template is rendered with (``jinja``).
"""
