"""Public tests for inspect_config: run them with ``pytest`` while you work.

The hidden grader checks many more configs, including families whose configs are not in
``configs/``; passing these tests is necessary, not sufficient.
"""

import json
from pathlib import Path

KEYS = {
    "model_type", "norm_type", "eps", "eps_source", "placement", "n_layers", "hidden_size",
    "n_norms", "final_norm", "qk_norm", "note",
}


def bank(name):
    """A published config from the bank next to this file (or this notebook), as a dict."""
    here = Path(__file__).parent if "__file__" in globals() else Path.cwd()
    return json.loads((here / "configs" / name).read_text())


def test_report_has_exactly_the_documented_keys(student):
    """The report has exactly the documented keys, with the documented types."""
    report = student.inspect_config(bank("gpt2.json"))
    assert set(report) == KEYS
    assert report["model_type"] == "gpt2"
    assert isinstance(report["eps"], float)
    assert isinstance(report["n_norms"], int) and not isinstance(report["n_norms"], bool)
    assert isinstance(report["final_norm"], bool) and isinstance(report["qk_norm"], bool)


def test_gpt2(student):
    """GPT-2: a pre-norm LayerNorm model with eps 1e-5 read from layer_norm_epsilon and 2L + 1 norms."""
    report = student.inspect_config(bank("gpt2.json"))
    assert report["model_type"] == "gpt2"
    assert report["norm_type"] == "layernorm"
    assert abs(report["eps"] - 1e-5) < 1e-15
    assert report["eps_source"] == "layer_norm_epsilon"
    assert report["placement"] == "pre"
    assert (report["n_layers"], report["hidden_size"]) == (12, 768)
    assert report["n_norms"] == 2 * 12 + 1  # ln_1 and ln_2 per block, then ln_f
    assert report["final_norm"] is True
    assert report["qk_norm"] is False


def test_llama_2(student):
    """Llama-2: a pre-norm RMSNorm model whose eps (1e-5) comes from the file, not from a default."""
    report = student.inspect_config(bank("llama-2-7b.json"))
    assert report["norm_type"] == "rmsnorm"
    assert abs(report["eps"] - 1e-5) < 1e-15  # the file's value, not LlamaConfig's 1e-6
    assert report["eps_source"] == "rms_norm_eps"
    assert report["placement"] == "pre"
    assert (report["n_layers"], report["hidden_size"]) == (32, 4096)
    assert report["n_norms"] == 2 * 32 + 1
    assert report["final_norm"] is True
    assert report["qk_norm"] is False


def test_note_names_the_norm_and_its_eps(student):
    """The note names the norm type in words and writes its eps."""
    report = student.inspect_config(bank("llama-2-7b.json"))
    assert report["norm_type"] == "rmsnorm" and report["placement"] == "pre"
    note = report["note"]
    assert "RMSNorm" in note
    assert repr(1e-5) in note or format(1e-5, "g") in note


def test_config_without_family_or_norm_key_is_refused(student):
    """A config with neither a known model_type nor any eps key raises ValueError."""
    try:
        student.inspect_config({"model_type": "mystery", "hidden_size": 64, "num_hidden_layers": 2})
    except ValueError:
        return
    raise AssertionError("inspect_config should raise ValueError for an unknown family without an eps key")
