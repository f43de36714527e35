"""inspect_config's note is judged by what it says, in the words its docstring names, whatever
their case: a correct note must not lose points to a capital letter or the other spelling."""

import json

import pytest

from grader import course
from grader.checks import SENTENCE_END, Mismatch, expect_note
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


def _reference_note(config: str) -> str:
    note: str = _report(config)["note"]
    return note


@pytest.mark.parametrize(
    ("config", "note"),
    [
        # Llama's RMSNorms are the modules input_layernorm and post_attention_layernorm
        (
            "llama-3-8b.json",
            "Pre-norm RMSNorm with eps 1e-05, the modules input_layernorm and post_attention_layernorm "
            "in each layer. Build 65 norms.",
        ),
        ("llama-3-8b.json", "Pre-norm RMSNorm (LlamaRMSNorm), eps 1e-05. Build 65 norms."),
        # T5LayerNorm never subtracts the mean: an RMSNorm despite its class name
        ("t5-base.json", "T5LayerNorm modules, which are RMSNorms, pre-norm, eps 1e-06. Build 62 norms."),
        ("gemma-2-9b.json", "Sandwich RMSNorm with a (1+weight) scale, eps 1e-06. Build 169 norms."),
    ],
)
def test_module_names_and_compact_spelling_do_not_cost_points(config, note):
    report = _report(config)
    assert str(report["n_norms"]) in note and repr(report["eps"]) in note  # the notes state the reference's facts
    expect_note(note, report)


@pytest.mark.parametrize(
    ("config", "old", "new"),
    [
        ("llama-3-8b.json", "RMSNorm", "RMSNorm (layers named input_layernorm, post_attention_layernorm)"),
        ("t5-base.json", "normalizes with", "normalizes, in its T5LayerNorm modules, with"),
        ("gemma-2-9b.json", "(1 + weight)", "(1+weight)"),
    ],
)
def test_the_reference_note_reworded_still_passes(config, old, new):
    note = _reference_note(config)
    assert old in note
    expect_note(note.replace(old, new, 1), _report(config))


@pytest.mark.parametrize(
    ("config", "note"),
    [
        ("llama-3-8b.json", "Pre-norm layer norm, eps 1e-05. Build 65 norms."),
        ("llama-3-8b.json", "Pre-norm RMSNorm, though its input_layernorm is a LayerNorm, eps 1e-05. Build 65 norms."),
        ("gpt2.json", "Pre-norm LayerNorm or RMSNorm, eps 1e-05. Build 25 norms."),
        ("llama-3-8b.json", "Pre-norm RMSNorm with a (1+weight) scale, eps 1e-05. Build 65 norms."),
    ],
)
def test_a_plain_word_naming_another_norm_still_fails(config, note):
    with pytest.raises(Mismatch):
        expect_note(note, _report(config))


CONTRASTS = [
    ("gpt2.json", "Pre-norm LayerNorm (not an RMSNorm), eps 1e-05. Build 25 norms."),
    ("gpt2.json", "A pre-norm LayerNorm rather than an RMSNorm, eps 1e-05. Build 25 norms."),
    ("llama-3-8b.json", "Pre-norm, not post-norm: RMSNorm instead of LayerNorm, eps 1e-05. Build 65 norms."),
    ("opt-350m.json", "Post-norm (it isn't pre-norm) LayerNorm, eps 1e-05. Build 48 norms."),
    # red team 36: with contrast allowed, one template fit every model: its type came from a
    # class name, both plain words "not" (and hedges such as "X, if not Y" passed)
    (
        "llama-3-8b.json",
        "Its modules are input_layernorm or LlamaRMSNorm, so not an RMSNorm and not a LayerNorm, "
        "eps=1e-05. It is pre-norm placement; build 65 norms.",
    ),
    ("llama-3-8b.json", "It uses RMSNorm, if not LayerNorm, eps 1e-05, pre-norm. Build 65 norms."),
]
"""Notes that name another norm type or placement, even to say it is not this one's. The
docstring says a note names no other: which contrasts are sound cannot be told from the words
(red team 36 found hedges that read as contrasts, and contrasts that did not)."""


@pytest.mark.parametrize(("config", "note"), CONTRASTS)
def test_naming_another_norm_or_placement_even_by_contrast_fails_as_the_docstring_says(config, note):
    with pytest.raises(Mismatch):
        expect_note(note, _report(config))


@pytest.mark.parametrize(
    ("config", "note"),
    [
        ("gpt2.json", "Pre-norm, neither LayerNorm nor RMSNorm, eps 1e-05. Build 25 norms."),
        ("gpt2.json", "Pre-norm, not a LayerNorm, eps 1e-05. Build 25 norms."),
        ("llama-3-8b.json", "Pre-norm LayerNorm, not RMSNorm, eps 1e-05. Build 65 norms."),
        ("llama-3-8b.json", "Pre-norm, no RMSNorm, no LayerNorm, eps 1e-05. Build 65 norms."),
        ("llama-3-8b.json", "RMSNorm, not pre-norm but post-norm, eps 1e-05. Build 65 norms."),
        ("llama-3-8b.json", "RMSNorm, eps 1e-05, not pre-norm. Build 65 norms."),
    ],
)
def test_a_note_denying_its_own_norm_or_placement_still_fails(config, note):
    with pytest.raises(Mismatch):
        expect_note(note, _report(config))


SERVING_PARALLEL = [
    (
        "llama-3-8b.json",
        "Pre-norm RMSNorm with eps 1e-05. Build 65 norms, the same in every tensor-parallel shard.",
    ),
    ("llama-3-8b.json", "Pre-norm RMSNorm with eps 1e-05. Build 65 norms; tensor parallelism changes none."),
    ("opt-350m.json", "Post-norm LayerNorm with eps 1e-05. Build 48 norms; pipeline parallel stages keep them."),
]
"""A serving engineer's "parallel" that is no placement: sharding, or a config key."""


@pytest.mark.parametrize(("config", "note"), SERVING_PARALLEL)
def test_parallel_in_a_serving_sense_is_no_placement(config, note):
    _passes(config, note)


def test_a_config_key_naming_parallel_is_no_placement():
    config = {**_config("pythia-410m.json"), "use_parallel_residual": False}
    report = REFERENCE.inspect_config(config)
    assert report["placement"] == "pre"
    n, eps = report["n_norms"], repr(report["eps"])
    expect_note(f"use_parallel_residual is false: a pre-norm LayerNorm stack, eps {eps}. Build {n} norms.", report)


def _config(name: str) -> dict:
    import json

    config: dict = json.loads((course.solutions_dir() / "configs" / name).read_text(encoding="utf-8"))
    return config


@pytest.mark.parametrize(
    ("config", "note"),
    [
        ("llama-3-8b.json", "Parallel? No: pre-norm RMSNorm, eps 1e-05. Build 65 norms."),
        ("llama-3-8b.json", "Pre-norm or parallel RMSNorm with eps 1e-05. Build 65 norms."),
    ],
)
def test_a_pre_norm_note_calling_its_block_parallel_still_fails(config, note):
    with pytest.raises(Mismatch):
        expect_note(note, _report(config))


CONTAINED_PLACEMENTS = [
    (
        "gemma-2-9b.json",
        "Sandwich placement: a pre-norm and a post-norm around every sublayer, each an RMSNorm with a "
        "(1 + weight) scale, eps 1e-06. Build 169 norms.",
    ),
    (
        "falcon-7b.json",
        "A parallel block: attention and MLP read the same pre-norm LayerNorm output, eps 1e-05. Build 33 norms.",
    ),
]
"""A sandwich is a pre-norm and a post-norm around each sublayer; a parallel block's branches both
read one pre-norm input: saying so is no other placement."""


@pytest.mark.parametrize(("config", "note"), CONTAINED_PLACEMENTS)
def test_the_placements_a_sandwich_or_parallel_block_contains_do_not_cost_points(config, note):
    _passes(config, note)


def _passes(config: str, note: str) -> None:
    report = _report(config)
    assert str(report["n_norms"]) in note and repr(report["eps"]) in note  # the notes state the reference's facts
    expect_note(note, report)


@pytest.mark.parametrize(
    ("config", "note"),
    [
        ("gemma-2-9b.json", "Pre-norm and post-norm RMSNorm with a (1 + weight) scale, eps 1e-06. Build 169 norms."),
        ("gemma-2-9b.json", "Sandwich or parallel RMSNorm with a (1 + weight) scale, eps 1e-06. Build 169 norms."),
        ("falcon-7b.json", "A pre-norm LayerNorm block, eps 1e-05. Build 33 norms."),
        ("falcon-7b.json", "A parallel, or maybe post-norm, LayerNorm block, eps 1e-05. Build 33 norms."),
    ],
)
def test_a_sandwich_or_parallel_note_without_its_word_or_with_another_still_fails(config, note):
    with pytest.raises(Mismatch):
        expect_note(note, _report(config))


@pytest.mark.parametrize(
    ("config", "old", "new"),
    [
        # an abbreviation's full stop ends no sentence: the reference's 4-sentence Qwen3-Next note stays 4
        ("qwen3-next-80b-a3b.json", "A serving engine must", "A serving engine (e.g. vLLM) must"),
        ("qwen3-next-80b-a3b.json", "with exactly this type", "with exactly this type, i.e. the same class,"),
        ("qwen3-next-80b-a3b.json", "(QK-norm, not", "(QK-norm, cf. the docstring, not"),
    ],
)
def test_an_abbreviation_is_no_sentence(config, old, new):
    note = _reference_note(config)
    assert old in note and len([part for part in SENTENCE_END.split(note.strip()) if part.strip()]) == 4
    expect_note(note.replace(old, new, 1), _report(config))


def test_five_sentences_still_fail():
    note = _reference_note("qwen3-next-80b-a3b.json") + " Check it twice."
    with pytest.raises(Mismatch):
        expect_note(note, _report("qwen3-next-80b-a3b.json"))


def _llama_report(eps: float) -> dict:
    config = json.loads((course.solutions_dir() / "configs" / "llama-3-8b.json").read_text())
    config["rms_norm_eps"] = eps
    return REFERENCE.inspect_config(config)


@pytest.mark.parametrize("eps", [1e-3, 2e-3, 1e-2, 0.1, 1e-4, 1e-5])
def test_an_eps_of_a_thousandth_or_more_written_as_its_repr_is_found(eps):
    """The docstring asks for repr(eps): 0.001, not 1e-03, for an eps of 1e-3 or more. The
    reference's own note (and any note writing the eps so) must pass."""
    report = _llama_report(eps)
    expect_note(report["note"], report)
    expect_note(f"Pre-norm RMSNorm, eps={eps!r}. Build 65 norms.", report)


@pytest.mark.parametrize(
    "note",
    [
        "Pre-norm RMSNorm, eps=0.01. Build 65 norms.",  # another eps
        "Pre-norm RMSNorm, eps=0.0011. Build 65 norms.",  # 0.001 only as a prefix
        "Pre-norm RMSNorm, eps=10.001. Build 65 norms.",  # 0.001 only as a suffix
        "Pre-norm RMSNorm, eps 0.001 or 1e-05. Build 65 norms.",  # two eps values
        "Pre-norm RMSNorm. Build 65 norms.",  # no eps at all
    ],
)
def test_a_note_without_its_own_eps_of_a_thousandth_still_fails(note):
    with pytest.raises(Mismatch):
        expect_note(note, _llama_report(1e-3))


class _Spans:
    """DENIED, recording how much text each search before a mention reads."""

    def __init__(self, pattern):
        self.pattern, self.widest = pattern, 0

    def search(self, text, start, end):
        self.widest = max(self.widest, end - start)
        return self.pattern.search(text, start, end)


REPEATS = 100_000


def test_a_long_note_is_read_in_one_pass_not_once_per_mention(monkeypatch):
    """The note is the student's text: looking for "not" before each mention of its own type
    must read a few words, not everything before it (100,000 denied mentions would cost
    minutes of grader CPU)."""
    from grader import checks

    spans = _Spans(checks.DENIED)
    monkeypatch.setattr(checks, "DENIED", spans)
    monkeypatch.setattr(checks, "NOTE_CHARS", 10**7)  # past the length a note may have: the window itself
    note = "Pre-norm, eps 1e-05. Build 65 norms. " + "Not RMSNorm, " * REPEATS + "really."
    with pytest.raises(Mismatch):  # its own type is only ever denied
        expect_note(note, _report("llama-3-8b.json"))
    assert 0 < spans.widest <= 64


def test_a_note_cannot_cost_the_grader_more_than_a_moment():
    """Red team 41: the reference's note with " 0.000...0x." (30,000 zeros) kept full marks and
    took 222 s of the trusted side's time (a pattern quadratic in the zeros), outside every
    limit of the sandbox. A note is bounded, and its patterns linear."""
    import time

    from grader import checks

    began = time.monotonic()
    assert checks.EPS_LIKE.findall("0." + "0" * 20000 + "x") == []
    assert checks.EPS_LIKE.findall("eps 0.00001 and 1e-06") == ["0.00001", "1e-06"]
    assert time.monotonic() - began < 1.0
    with pytest.raises(AssertionError):
        checks.expect_note("A LayerNorm after the sublayer. " + "0." + "0" * 5000 + "x.", {})


@pytest.mark.parametrize(
    "note",
    [
        # Trial 56: numbers that are no eps (above 1e-4) do not contradict the eps.
        "Pre-norm RMSNorm with eps 1e-05; float16 rounds at 2^-7 = 7.8e-3 relative. Build 65 norms.",
        "Pre-norm RMSNorm with eps 1e-05. Build 65 norms, or expect a drift of about 1e-3.",
        # Trial 56: sequence- and context-parallel shard activations; they are no placement.
        "Pre-norm RMSNorm with eps 1e-05. Build 65 norms, also when the engine runs sequence-parallel.",
        "Pre-norm RMSNorm with eps 1e-05. Build 65 norms; context parallel shards change none.",
        # Trial 56: "etc." inside a sentence ends none (four sentences stay four).
        "Pre-norm RMSNorm with eps 1e-05. It sits before attention, the FFN, etc. in each layer. "
        "Build 65 norms. Match them exactly.",
    ],
)
def test_what_a_serving_engineer_writes_beside_the_facts_costs_nothing(note):
    _passes("llama-3-8b.json", note)


@pytest.mark.parametrize(
    "note",
    [
        "Pre-norm RMSNorm with eps 1e-05, not 1e-06. Build 65 norms.",  # another eps
        "Pre-norm RMSNorm with eps 1e-05 or 0.0001. Build 65 norms.",  # another eps, as repr writes 1e-4
        "Pre-norm RMSNorm with eps 1e-05. Build 65 norms. Check them. Etc. Done.",  # five sentences
    ],
)
def test_another_eps_or_a_fifth_sentence_still_fails(note):
    with pytest.raises(Mismatch):
        expect_note(note, _report("llama-3-8b.json"))


def test_layer_norm_spelled_as_two_words_names_a_layernorm_note_s_own_norm():
    # Trial 56: "RMS Norm" was read and "Layer Norm" was not. It still names no LayerNorm in
    # an RMSNorm note, where "the layer norm" is generic.
    note = _reference_note("opt-350m.json").replace("LayerNorm", "Layer Norm")
    assert "Layer Norm" in note
    _passes("opt-350m.json", note)
    _passes("llama-3-8b.json", "Pre-norm RMSNorm with eps 1e-05 as each layer norm. Build 65 norms.")


def test_a_failing_note_says_which_requirement_it_misses_and_no_hidden_word():
    """Trial 56: a note's failure read "the placement, in words, in ...["note"] is True;
    expected False", an internal boolean. It says which requirement fails now; which word, on a
    public test only (on a hidden one the word is the expected answer's, or the student's)."""
    from grader import checks
    from grader.messages import render

    note = "Pre-norm RMSNorm with eps 1e-05, unlike a post-norm stack. Build 65 norms."
    try:
        checks.set_hidden(False)
        with pytest.raises(Mismatch) as public:
            expect_note(note, _report("llama-3-8b.json"))
        checks.set_hidden(True)
        with pytest.raises(Mismatch) as hidden:
            expect_note(note, _report("llama-3-8b.json"))
    finally:
        checks.set_hidden(True)
    assert [(m.id, m.params.get("word")) for m in public.value.messages] == [
        ("check.note_other_placement", "post-norm")
    ]
    assert [m.id for m in hidden.value.messages] == ["check.note_other_placement_hidden"]
    assert "post-norm" not in render(hidden.value.messages[0], "en")
    assert "names another placement, post-norm" in render(public.value.messages[0], "en")
    with pytest.raises(Mismatch) as sentences:
        expect_note("Pre-norm RMSNorm with eps 1e-05 and 65 norms", _report("llama-3-8b.json"))
    assert [m.id for m in sentences.value.messages] == ["check.note_sentences"]
