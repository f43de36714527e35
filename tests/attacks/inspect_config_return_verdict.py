"""Attack (catalog #7): inspect_config answers with a verdict instead of a report.

The report should be a dict with eleven documented keys; this one has none of them.
"""


def inspect_config(config):
    return {"passed": True, "score": 100}
