"""Public tests for inspect_config: run them with ``normlab check`` (or ``pytest`` in this folder).

The hidden grader checks many more configs, a resized model of each family, and families whose
configs are not in ``configs/``; passing these tests is necessary, not sufficient.
"""

import json
from pathlib import Path


def bank(name):
    """A published config from the bank next to this file (or this notebook), as a dict."""
    here = Path(__file__).parent if "__file__" in globals() else Path.cwd()
    return json.loads((here / "configs" / name).read_text())


def test_gpt2(student, expected):
    """GPT-2: its report has exactly the documented keys, types and values (the note aside)."""
    expected.check(student.inspect_config, bank("gpt2.json"), what="inspect_config(gpt2)", skip=("note",))


def test_llama_2(student, expected):
    """Llama-2: a pre-norm RMSNorm model whose eps (1e-5) comes from the file, not from a default."""
    expected.check(student.inspect_config, bank("llama-2-7b.json"), what="inspect_config(llama-2)", skip=("note",))


def test_note_says_what_the_report_says(student, expected):
    """The note: 2 to 4 sentences naming the norm, its eps, the placement and the norm count."""
    config = bank("llama-2-7b.json")
    report = expected.check(student.inspect_config, config, what="inspect_config(llama-2)", skip=("note",))
    expected.note(report["note"], report)


def test_config_without_family_or_norm_key_is_refused(student, expected):
    """A config with neither a known model_type nor any eps key raises ValueError (the point
    needs GPT-2's report right first: code that refuses every config would earn it)."""
    expected.check(student.inspect_config, bank("gpt2.json"), what="inspect_config(gpt2)", skip=("note",))
    with expected.raises(ValueError, what="inspect_config(config of an unknown family without an eps key)"):
        student.inspect_config({"model_type": "mystery", "hidden_size": 64, "num_hidden_layers": 2})
