"""Notebook extraction: definitions are kept by name, everything else is left out."""

import json

import pytest

from grader.notebook import NotebookUnreadable, extract


def _nb(*sources, cell_type="code"):
    return json.dumps({"cells": [{"cell_type": cell_type, "source": s, "metadata": {}} for s in sources]}).encode()


def test_definitions_and_the_names_they_use_are_kept():
    out = extract(_nb("import numpy as np\nEPS = 1e-6\nUNUSED = 3\nprint('hi')", "def f(x):\n    return x + EPS"))
    namespace: dict = {}
    exec(out.source, namespace)
    assert namespace["f"](1.0) == 1.0 + 1e-6
    assert "UNUSED" not in namespace and "print" not in out.source


def test_test_calls_asserts_and_magics_are_dropped():
    out = extract(
        _nb(
            "%%bash\nrm -rf /",
            "!ls\n%time f(1)\nget_ipython().run_line_magic('x', '')\ndef f(x):\n    return x",
            "assert f(1) == 2\nf(3)",
        )
    )
    assert "rm -rf" not in out.source and "assert" not in out.source and "get_ipython" not in out.source
    assert [n.id for n in out.notes] == ["submission.cell_magic_removed", "submission.cell_magic_removed"]


def test_a_cell_with_a_syntax_error_is_skipped_and_noted():
    out = extract(_nb("def f(:\n", "def g():\n    return 1"))
    assert "def g" in out.source and "def f" not in out.source
    assert [(n.id, n.params["cell"]) for n in out.notes] == [("submission.cell_syntax_error", 1)]


def test_the_last_duplicate_definition_wins_and_decorators_stay():
    out = extract(_nb("def f():\n    return 1", "import functools\n@functools.lru_cache\ndef f():\n    return 2"))
    namespace: dict = {}
    exec(out.source, namespace)
    assert namespace["f"]() == 2


def test_markdown_and_raw_cells_and_source_lists():
    raw = json.dumps(
        {
            "cells": [
                {"cell_type": "markdown", "source": ["def not_code():\n", "    pass"]},
                {"cell_type": "code", "source": ["def f():\n", "    return 5\n"]},
            ]
        }
    ).encode()
    assert "not_code" not in extract(raw).source and "def f" in extract(raw).source


@pytest.mark.parametrize("raw", [b"not json", b"[1, 2]", b'{"cells": 5}', b"\xff\xfe"])
def test_unreadable_notebooks_raise_with_a_message(raw):
    with pytest.raises(NotebookUnreadable) as info:
        extract(raw)
    assert info.value.message.id.startswith("submission.notebook_")
