"""inspect_config's note is judged by what it says, in the words its docstring names, whatever
their case: a correct note must not lose points to a capital letter or the other spelling."""

import pytest

from grader import course
from grader.checks import Mismatch, expect_note
from grader.reference import Reference

REFERENCE = Reference(course.solutions_dir())


def _report(config: str) -> dict:
    return REFERENCE.inspect_config(str(course.solutions_dir() / "configs" / config))


@pytest.mark.parametrize(
    ("config", "note"),
    [
        ("llama-3-8b.json", "Pre-norm stack of RMSNorm layers with eps 1e-05. Build 65 norms."),
        ("llama-3-8b.json", "PRE-NORM, rmsnorm, eps 1e-05. There are 65 norms to build."),
        ("olmo-2-7b.json", "An RMSNorm with eps 1e-06 on each sublayer's output (norm-on-output). Build 65 norms."),
        ("olmo-2-7b.json", "Post-sublayer placement: RMSNorm, eps 1e-06, on each output. Build 65 norms."),
    ],
)
def test_a_correct_note_passes_in_either_case_and_spelling(config, note):
    report = _report(config)
    assert report["n_norms"] == 65  # the notes above state the reference's count
    expect_note(note, report)


@pytest.mark.parametrize(
    ("config", "note"),
    [
        ("llama-3-8b.json", "A post-norm stack of RMSNorm layers with eps 1e-05. Build 65 norms."),
        ("llama-3-8b.json", "Pre-norm, LayerNorm, eps 1e-05. Build 65 norms."),
        ("olmo-2-7b.json", "A pre-norm RMSNorm stack with eps 1e-06. Build 65 norms."),
        ("olmo-2-7b.json", "Norm-on-output, or maybe pre-norm: RMSNorm, eps 1e-06. Build 65 norms."),
    ],
)
def test_a_note_with_the_wrong_words_still_fails(config, note):
    with pytest.raises(Mismatch):
        expect_note(note, _report(config))
