"""The only grader code that runs inside the sandbox, next to the student's code.

Nothing here is trusted by the grader, and nothing here imports the trusted side: the worker
sees this folder (mounted as the package ``inside``) and numpy, nothing else of normlab.
Standard library and numpy only.
"""
