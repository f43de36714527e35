"""Hidden suite for the production extension ``inspect_config``.

Expected answers come from the reference solution (``reference``), except where a test checks a
published fact about a family, which is then written out. Configs come from the bank in
``solutions/configs`` and from the published configs below, which the bank does not hold. Each
test names, in a comment, the mistake it is there to catch.
"""

import json
from collections.abc import Iterable
from functools import cache
from typing import Any

import pytest

from grader.checks import expect_config_unchanged, expect_keys, expect_note, expect_raises, expect_value, file_arg
from grader.course import solutions_dir
from grader.proxy import StudentProxy
from grader.reference import Reference, fresh_copy

KEYS = (
    "model_type",
    "norm_type",
    "eps",
    "eps_source",
    "placement",
    "n_layers",
    "hidden_size",
    "n_norms",
    "final_norm",
    "qk_norm",
    "note",
)

BANK = (
    "bert-base-uncased.json",
    "falcon-7b.json",
    "gemma-2-9b.json",
    "gpt2.json",
    "llama-2-7b.json",
    "llama-3-8b.json",
    "mistral-7b.json",
    "olmo-2-7b.json",
    "opt-1.3b.json",
    "opt-350m.json",
    "pythia-410m.json",
    "qwen2.5-7b.json",
    "qwen3-8b.json",
    "qwen3-next-80b-a3b.json",
    "qwen3.8-27b.json",
    "t5-base.json",
)

# Published config.json values of models the bank does not hold (Hugging Face model repos;
# keys irrelevant to norms trimmed). Entries marked "variant" are edits of a published config.

MIXTRAL_8X7B = {  # mistralai/Mixtral-8x7B-v0.1
    "architectures": ["MixtralForCausalLM"],
    "attention_dropout": 0.0,
    "bos_token_id": 1,
    "eos_token_id": 2,
    "hidden_act": "silu",
    "hidden_size": 4096,
    "initializer_range": 0.02,
    "intermediate_size": 14336,
    "max_position_embeddings": 32768,
    "model_type": "mixtral",
    "num_attention_heads": 32,
    "num_experts_per_tok": 2,
    "num_hidden_layers": 32,
    "num_key_value_heads": 8,
    "num_local_experts": 8,
    "output_router_logits": False,
    "rms_norm_eps": 1e-05,
    "rope_theta": 1000000.0,
    "router_aux_loss_coef": 0.02,
    "sliding_window": None,
    "tie_word_embeddings": False,
    "vocab_size": 32000,
}

PHI3_MINI = {  # microsoft/Phi-3-mini-4k-instruct
    "architectures": ["Phi3ForCausalLM"],
    "attention_dropout": 0.0,
    "bos_token_id": 1,
    "embd_pdrop": 0.0,
    "eos_token_id": 32000,
    "hidden_act": "silu",
    "hidden_size": 3072,
    "initializer_range": 0.02,
    "intermediate_size": 8192,
    "max_position_embeddings": 4096,
    "model_type": "phi3",
    "num_attention_heads": 32,
    "num_hidden_layers": 32,
    "num_key_value_heads": 32,
    "original_max_position_embeddings": 4096,
    "pad_token_id": 32000,
    "resid_pdrop": 0.0,
    "rms_norm_eps": 1e-05,
    "rope_scaling": None,
    "rope_theta": 10000.0,
    "sliding_window": 2047,
    "tie_word_embeddings": False,
    "vocab_size": 32064,
}

GEMMA_7B = {  # google/gemma-7b
    "architectures": ["GemmaForCausalLM"],
    "attention_bias": False,
    "attention_dropout": 0.0,
    "bos_token_id": 2,
    "eos_token_id": 1,
    "head_dim": 256,
    "hidden_act": "gelu",
    "hidden_size": 3072,
    "initializer_range": 0.02,
    "intermediate_size": 24576,
    "max_position_embeddings": 8192,
    "model_type": "gemma",
    "num_attention_heads": 16,
    "num_hidden_layers": 28,
    "num_key_value_heads": 16,
    "pad_token_id": 0,
    "rms_norm_eps": 1e-06,
    "rope_scaling": None,
    "rope_theta": 10000.0,
    "vocab_size": 256000,
}

GEMMA3_4B = {  # google/gemma-3-4b-it: the language model under text_config, no rms_norm_eps key
    "architectures": ["Gemma3ForConditionalGeneration"],
    "boi_token_index": 255999,
    "eoi_token_index": 256000,
    "eos_token_id": [1, 106],
    "image_token_index": 262144,
    "initializer_range": 0.02,
    "mm_tokens_per_image": 256,
    "model_type": "gemma3",
    "text_config": {
        "hidden_size": 2560,
        "intermediate_size": 10240,
        "model_type": "gemma3_text",
        "num_hidden_layers": 34,
        "rope_scaling": {"factor": 8.0, "rope_type": "linear"},
        "sliding_window": 1024,
    },
}

GEMMA3_1B = {  # google/gemma-3-1b-it: text only, flat
    "architectures": ["Gemma3ForCausalLM"],
    "attention_bias": False,
    "attention_dropout": 0.0,
    "bos_token_id": 2,
    "eos_token_id": [1, 106],
    "head_dim": 256,
    "hidden_activation": "gelu_pytorch_tanh",
    "hidden_size": 1152,
    "initializer_range": 0.02,
    "intermediate_size": 6912,
    "max_position_embeddings": 32768,
    "model_type": "gemma3_text",
    "num_attention_heads": 4,
    "num_hidden_layers": 26,
    "num_key_value_heads": 1,
    "pad_token_id": 0,
    "query_pre_attn_scalar": 256,
    "rms_norm_eps": 1e-06,
    "rope_local_base_freq": 10000,
    "rope_theta": 1000000,
    "sliding_window": 512,
    "sliding_window_pattern": 6,
    "vocab_size": 262144,
}

GPTJ_6B = {  # EleutherAI/gpt-j-6b
    "activation_function": "gelu_new",
    "architectures": ["GPTJForCausalLM"],
    "attn_pdrop": 0.0,
    "bos_token_id": 50256,
    "embd_pdrop": 0.0,
    "eos_token_id": 50256,
    "initializer_range": 0.02,
    "layer_norm_epsilon": 1e-05,
    "model_type": "gptj",
    "n_embd": 4096,
    "n_head": 16,
    "n_inner": None,
    "n_layer": 28,
    "n_positions": 2048,
    "resid_pdrop": 0.0,
    "rotary": True,
    "rotary_dim": 64,
    "tie_word_embeddings": False,
    "vocab_size": 50400,
}

ROBERTA_BASE = {  # FacebookAI/roberta-base: layer_norm_eps 1e-05, not RobertaConfig's 1e-12
    "architectures": ["RobertaForMaskedLM"],
    "attention_probs_dropout_prob": 0.1,
    "bos_token_id": 0,
    "eos_token_id": 2,
    "hidden_act": "gelu",
    "hidden_dropout_prob": 0.1,
    "hidden_size": 768,
    "initializer_range": 0.02,
    "intermediate_size": 3072,
    "layer_norm_eps": 1e-05,
    "max_position_embeddings": 514,
    "model_type": "roberta",
    "num_attention_heads": 12,
    "num_hidden_layers": 12,
    "pad_token_id": 1,
    "type_vocab_size": 1,
    "vocab_size": 50265,
}

FALCON_40B = {  # tiiuae/falcon-40b: new_decoder_architecture, ln_attn and ln_mlp per layer
    "alibi": False,
    "apply_residual_connection_post_layernorm": False,
    "architectures": ["FalconForCausalLM"],
    "attention_dropout": 0.0,
    "bias": False,
    "bos_token_id": 11,
    "eos_token_id": 11,
    "hidden_dropout": 0.0,
    "hidden_size": 8192,
    "initializer_range": 0.02,
    "layer_norm_epsilon": 1e-05,
    "model_type": "falcon",
    "multi_query": True,
    "new_decoder_architecture": True,
    "num_attention_heads": 128,
    "num_hidden_layers": 60,
    "num_kv_heads": 8,
    "parallel_attn": True,
    "vocab_size": 65024,
}

OPT_125M = {  # facebook/opt-125m: pre-norm OPT, no eps key
    "_name_or_path": "facebook/opt-125m",
    "activation_dropout": 0.0,
    "activation_function": "relu",
    "architectures": ["OPTForCausalLM"],
    "attention_dropout": 0.0,
    "bos_token_id": 2,
    "do_layer_norm_before": True,
    "dropout": 0.1,
    "eos_token_id": 2,
    "ffn_dim": 3072,
    "hidden_size": 768,
    "init_std": 0.02,
    "layerdrop": 0.0,
    "max_position_embeddings": 2048,
    "model_type": "opt",
    "num_attention_heads": 12,
    "num_hidden_layers": 12,
    "pad_token_id": 1,
    "prefix": "</s>",
    "vocab_size": 50272,
    "word_embed_proj_dim": 768,
}

REDPAJAMA_3B = {  # togethercomputer/RedPajama-INCITE-Instruct-3B-v1: GPT-NeoX, sequential
    "architectures": ["GPTNeoXForCausalLM"],
    "bos_token_id": 0,
    "eos_token_id": 0,
    "hidden_act": "gelu",
    "hidden_size": 2560,
    "initializer_range": 0.02,
    "intermediate_size": 10240,
    "layer_norm_eps": 1e-05,
    "max_position_embeddings": 2048,
    "model_type": "gpt_neox",
    "num_attention_heads": 32,
    "num_hidden_layers": 32,
    "rotary_emb_base": 10000,
    "rotary_pct": 1.0,
    "tie_word_embeddings": False,
    "use_parallel_residual": False,
    "vocab_size": 50432,
}

BLOOM_560M = {  # bigscience/bloom-560m: a LayerNorm on the embeddings before the first block
    "apply_residual_connection_post_layernorm": False,
    "architectures": ["BloomForCausalLM"],
    "attention_dropout": 0.0,
    "bos_token_id": 1,
    "eos_token_id": 2,
    "hidden_dropout": 0.0,
    "hidden_size": 1024,
    "initializer_range": 0.02,
    "layer_norm_epsilon": 1e-05,
    "model_type": "bloom",
    "n_head": 16,
    "n_layer": 24,
    "offset_alibi": 100,
    "pad_token_id": 3,
    "vocab_size": 250880,
}

FLAN_T5_SMALL = {  # google/flan-t5-small: num_decoder_layers written out
    "architectures": ["T5ForConditionalGeneration"],
    "d_ff": 1024,
    "d_kv": 64,
    "d_model": 512,
    "decoder_start_token_id": 0,
    "dense_act_fn": "gelu_new",
    "dropout_rate": 0.1,
    "eos_token_id": 1,
    "feed_forward_proj": "gated-gelu",
    "initializer_factor": 1.0,
    "is_encoder_decoder": True,
    "is_gated_act": True,
    "layer_norm_epsilon": 1e-06,
    "model_type": "t5",
    "n_positions": 512,
    "num_decoder_layers": 8,
    "num_heads": 6,
    "num_layers": 8,
    "pad_token_id": 0,
    "relative_attention_max_distance": 128,
    "relative_attention_num_buckets": 32,
    "tie_word_embeddings": False,
    "vocab_size": 32128,
}

STABLELM2_1_6B = {  # stabilityai/stablelm-2-1_6b: a model_type outside the documented families
    "architectures": ["StableLmForCausalLM"],
    "bos_token_id": 100257,
    "eos_token_id": 100257,
    "hidden_act": "silu",
    "hidden_size": 2048,
    "initializer_range": 0.02,
    "intermediate_size": 5632,
    "layer_norm_eps": 1e-05,
    "max_position_embeddings": 4096,
    "model_type": "stablelm",
    "num_attention_heads": 32,
    "num_hidden_layers": 24,
    "num_key_value_heads": 32,
    "partial_rotary_factor": 0.25,
    "qk_layernorm": False,
    "rope_theta": 10000,
    "tie_word_embeddings": False,
    "use_parallel_residual": False,
    "use_qkv_bias": True,
    "vocab_size": 100352,
}

INTERNLM2_7B = {  # internlm/internlm2-7b: a model_type outside the documented families
    "architectures": ["InternLM2ForCausalLM"],
    "bias": False,
    "bos_token_id": 1,
    "eos_token_id": 2,
    "hidden_act": "silu",
    "hidden_size": 4096,
    "initializer_range": 0.02,
    "intermediate_size": 14336,
    "max_position_embeddings": 32768,
    "model_type": "internlm2",
    "num_attention_heads": 32,
    "num_hidden_layers": 32,
    "num_key_value_heads": 8,
    "pad_token_id": 2,
    "rms_norm_eps": 1e-05,
    "rope_theta": 1000000,
    "vocab_size": 92544,
}


# Families of the docstring's table the bank does not hold. The config shapes follow the published
# config.json of the model named (keys irrelevant to norms trimmed); each family fact a test relies on
# is read in transformers' code, cited on the test.

STARCODER2_3B = {  # bigcode/starcoder2-3b
    "architectures": ["Starcoder2ForCausalLM"],
    "attention_dropout": 0.1,
    "bos_token_id": 0,
    "embedding_dropout": 0.1,
    "eos_token_id": 0,
    "hidden_act": "gelu_pytorch_tanh",
    "hidden_size": 3072,
    "initializer_range": 0.018042,
    "intermediate_size": 12288,
    "max_position_embeddings": 16384,
    "model_type": "starcoder2",
    "norm_epsilon": 1e-05,
    "num_attention_heads": 24,
    "num_hidden_layers": 30,
    "num_key_value_heads": 2,
    "residual_dropout": 0.1,
    "sliding_window": 4096,
    "use_bias": True,
    "vocab_size": 49152,
}

PHI_2 = {  # microsoft/phi-2
    "architectures": ["PhiForCausalLM"],
    "attention_dropout": 0.0,
    "bos_token_id": 50256,
    "embd_pdrop": 0.0,
    "eos_token_id": 50256,
    "hidden_act": "gelu_new",
    "hidden_size": 2560,
    "initializer_range": 0.02,
    "intermediate_size": 10240,
    "layer_norm_eps": 1e-05,
    "max_position_embeddings": 2048,
    "model_type": "phi",
    "num_attention_heads": 32,
    "num_hidden_layers": 32,
    "num_key_value_heads": 32,
    "partial_rotary_factor": 0.4,
    "qk_layernorm": False,
    "resid_pdrop": 0.1,
    "rope_theta": 10000.0,
    "tie_word_embeddings": False,
    "vocab_size": 51200,
}

OLMO_1B = {  # allenai/OLMo-1B-hf: no eps key, OlmoLayerNorm hard-codes eps=1e-5
    "architectures": ["OlmoForCausalLM"],
    "attention_bias": False,
    "attention_dropout": 0.0,
    "clip_qkv": None,
    "eos_token_id": 50279,
    "hidden_act": "silu",
    "hidden_size": 2048,
    "initializer_range": 0.02,
    "intermediate_size": 8192,
    "max_position_embeddings": 2048,
    "model_type": "olmo",
    "num_attention_heads": 16,
    "num_hidden_layers": 16,
    "num_key_value_heads": 16,
    "pad_token_id": 1,
    "rope_theta": 10000.0,
    "tie_word_embeddings": True,
    "vocab_size": 50304,
}

QWEN3_30B_A3B = {  # Qwen/Qwen3-30B-A3B
    "architectures": ["Qwen3MoeForCausalLM"],
    "attention_bias": False,
    "attention_dropout": 0.0,
    "bos_token_id": 151643,
    "decoder_sparse_step": 1,
    "eos_token_id": 151645,
    "head_dim": 128,
    "hidden_act": "silu",
    "hidden_size": 2048,
    "initializer_range": 0.02,
    "intermediate_size": 6144,
    "max_position_embeddings": 40960,
    "mlp_only_layers": [],
    "model_type": "qwen3_moe",
    "moe_intermediate_size": 768,
    "num_attention_heads": 32,
    "num_experts": 128,
    "num_experts_per_tok": 8,
    "num_hidden_layers": 48,
    "num_key_value_heads": 4,
    "rms_norm_eps": 1e-06,
    "rope_theta": 1000000.0,
    "tie_word_embeddings": False,
    "vocab_size": 151936,
}

FALCON_11B = {  # tiiuae/falcon-11B: new decoder architecture, but one shared norm per layer
    "activation": "gelu",
    "alibi": False,
    "architectures": ["FalconForCausalLM"],
    "attention_dropout": 0.0,
    "bias": False,
    "bos_token_id": 11,
    "eos_token_id": 11,
    "ffn_hidden_size": 16384,
    "hidden_dropout": 0.0,
    "hidden_size": 4096,
    "initializer_range": 0.02,
    "layer_norm_epsilon": 1e-05,
    "max_position_embeddings": 8192,
    "model_type": "falcon",
    "multi_query": True,
    "new_decoder_architecture": True,
    "num_attention_heads": 32,
    "num_hidden_layers": 60,
    "num_kv_heads": 8,
    "num_ln_in_parallel_attn": 1,
    "parallel_attn": True,
    "vocab_size": 65024,
}


def bank(name: str) -> dict[str, Any]:
    """A published config of the bank, as a fresh dict the test may change."""
    config: dict[str, Any] = json.loads(_bank_text(name))
    return config


@cache
def _bank_text(name: str) -> str:
    # Read once per process: the tests load a bank config about 140 times a grading.
    return (solutions_dir() / "configs" / name).read_text(encoding="utf-8")


def without(config: dict[str, Any], key: str) -> dict[str, Any]:
    """variant: a published config with one key removed."""
    config = fresh_copy(config)
    config.pop(key)
    return config


def with_values(config: dict[str, Any], **values: Any) -> dict[str, Any]:
    """variant: a published config with some values changed."""
    return {**fresh_copy(config), **values}


LAYER_KEYS = ("num_hidden_layers", "n_layer", "num_layers", "n_layers", "num_decoder_layers")
WIDTH_KEYS = ("hidden_size", "n_embd", "n_embed", "d_model")
EPS_KEYS = ("rms_norm_eps", "layer_norm_eps", "layer_norm_epsilon", "norm_epsilon")


def resized(config: dict[str, Any]) -> dict[str, Any]:
    """variant: another model of the same family (more layers, a wider stream, another eps),
    so that an answer remembered for one published config is not right for it."""
    config = fresh_copy(config)
    inner = config.get("text_config")
    for part in ([inner] if isinstance(inner, dict) else []) + [config]:
        for key in LAYER_KEYS:
            if isinstance(part.get(key), int):
                part[key] = part[key] * 2 + 1
        for key in WIDTH_KEYS:
            if isinstance(part.get(key), int):
                part[key] = part[key] * 2
        for key in EPS_KEYS:
            if isinstance(part.get(key), float):
                part[key] = part[key] * 10
    return config


def expect_family(student: StudentProxy, reference: Reference, configs: Iterable[Any], fields: Iterable[str]) -> None:
    """The report is right on each config and on a resized one of the same family: a family's
    facts, read, not one model's answer, remembered."""
    checked = (*fields, "n_layers", "hidden_size", "n_norms", "eps")
    for config in configs:
        for variant in (config, resized(config)):
            expect_fields(report_of(student, variant), reference.inspect_config(variant), checked)


def report_of(student: StudentProxy, config: Any) -> Any:
    """The student's report, checked to be a dict with exactly the documented keys before any
    test looks inside it."""
    report = student.inspect_config(config)
    expect_keys(report, KEYS, what="inspect_config(config)")
    return report


def expect_fields(got: Any, want: dict[str, Any], fields: Iterable[str]) -> None:
    expect_keys(got, KEYS, what="inspect_config(config)")
    for field in fields:
        expect_value(got[field], want[field], what=f'inspect_config(config)["{field}"]')


def all_bank_configs() -> list[dict[str, Any]]:
    return [bank(name) for name in BANK]


@pytest.mark.points(1)
def test_report_keys_and_types(student: StudentProxy, reference: Reference) -> None:
    """The report has exactly the documented keys, each with its documented type."""
    # mistake: extra or missing keys; eps returned as a string, counts as floats, flags as 0/1
    for config in all_bank_configs():
        report = report_of(student, config)
        # Keys copied from the config are no reading of it: the layer count's key has another name.
        expect_fields(report, reference.inspect_config(config), ("n_layers", "hidden_size"))
        # The types alone could come from a constant dict: the model type must also be read.
        expect_value(
            report["model_type"],
            str(config.get("model_type", "unknown")).lower(),
            what='inspect_config(config)["model_type"]',
        )
        for field, kind in (
            ("model_type", str),
            ("norm_type", str),
            ("eps", float),
            ("eps_source", str),
            ("placement", str),
            ("n_layers", int),
            ("hidden_size", int),
            ("n_norms", int),
            ("final_norm", bool),
            ("qk_norm", bool),
            ("note", str),
        ):
            got = report[field]
            ok = isinstance(got, kind) and (kind is bool or not isinstance(got, bool))
            expect_value(ok, True, what=f'type of inspect_config(config)["{field}"]')


@pytest.mark.points(2)
def test_bank_norm_type_and_placement(student: StudentProxy, reference: Reference) -> None:
    """Norm type and placement are right for every config in the bank."""
    # mistake: one norm type or placement for all models (RMSNorm pre-norm everywhere)
    for config in all_bank_configs():
        expect_fields(
            report_of(student, config), reference.inspect_config(config), ("model_type", "norm_type", "placement")
        )


@pytest.mark.points(2)
def test_bank_eps(student: StudentProxy, reference: Reference) -> None:
    """eps and the key it came from are right for every config in the bank."""
    # mistake: the family's eps key ignored (always reading rms_norm_eps) or a hard-coded eps
    for config in all_bank_configs():
        expect_fields(report_of(student, config), reference.inspect_config(config), ("eps", "eps_source"))


@pytest.mark.points(1)
def test_bank_layers_and_width(student: StudentProxy, reference: Reference) -> None:
    """Layer count and width are right for every config in the bank."""
    # mistake: reading only num_hidden_layers/hidden_size (GPT-2 uses n_layer/n_embd, T5
    # d_model) or missing the text_config of a multimodal wrapper; with two layer-count or two
    # width keys, one read before the docstring's first (n_layer before num_hidden_layers,
    # d_model before hidden_size or n_embd)
    both = (
        with_values(bank("llama-2-7b.json"), n_layer=5, n_layers=7, d_model=24),
        with_values(bank("gpt2.json"), num_layers=5, n_layers=9, d_model=40, n_embed=56),
    )
    for config in (*all_bank_configs(), *both):
        expect_fields(report_of(student, config), reference.inspect_config(config), ("n_layers", "hidden_size"))


@pytest.mark.points(2)
def test_bank_norm_counts(student: StudentProxy, reference: Reference) -> None:
    """The number of residual-path norms, the final norm and QK-norm are right across the bank."""
    # mistake: a flat 2L + 1 for every model (embedding norms, post-norm OPT, sandwich and
    # parallel layouts all differ)
    for config in all_bank_configs():
        expect_fields(
            report_of(student, config), reference.inspect_config(config), ("n_norms", "final_norm", "qk_norm")
        )


@pytest.mark.points(1)
def test_eps_comes_from_the_family_key(student: StudentProxy, reference: Reference) -> None:
    """eps is read from the key each family uses, including when it differs from the default
    (and when it is 0: a key that is there is read, whatever its value)."""
    # mistake: the family's eps key ignored, e.g. always reading rms_norm_eps, or returning
    # RobertaConfig's 1e-12 default although roberta-base sets layer_norm_eps; or a present
    # key taken for a missing one when its value is false (`cfg.get(key) or default`)
    configs = (
        ROBERTA_BASE,
        GPTJ_6B,
        MIXTRAL_8X7B,
        bank("t5-base.json"),
        with_values(bank("llama-2-7b.json"), rms_norm_eps=1e-04),
        with_values(bank("gpt2.json"), layer_norm_epsilon=1e-06),
        with_values(bank("llama-2-7b.json"), rms_norm_eps=0.0),
    )
    for config in configs:
        expect_fields(report_of(student, config), reference.inspect_config(config), ("eps", "eps_source"))


@pytest.mark.points(1)
def test_missing_eps_key_uses_the_library_default(student: StudentProxy, reference: Reference) -> None:
    """A config without its eps key reports the family's library default, eps_source "default"."""
    # mistake: no default at all (a crash or None), or another family's default
    configs = (
        without(bank("llama-2-7b.json"), "rms_norm_eps"),
        without(bank("bert-base-uncased.json"), "layer_norm_eps"),
        without(MIXTRAL_8X7B, "rms_norm_eps"),
        GEMMA3_4B,
    )
    for config in configs:
        expect_fields(report_of(student, config), reference.inspect_config(config), ("eps", "eps_source"))


@pytest.mark.points(1)
def test_opt_uses_nn_layernorm_default_eps(student: StudentProxy, reference: Reference) -> None:
    """OPT configs carry no eps key: the report gives nn.LayerNorm's default, 1e-5."""
    # mistake: missing default eps for OPT (crash, None, 0, or 1e-6)
    for config in (OPT_125M, bank("opt-1.3b.json"), bank("opt-350m.json")):
        report = report_of(student, config)
        expect_value(report["eps"], 1e-5, what='inspect_config(config)["eps"]')
        expect_value(report["eps_source"], "default", what='inspect_config(config)["eps_source"]')
        expect_value(report["norm_type"], "layernorm", what='inspect_config(config)["norm_type"]')
    expect_family(student, reference, (OPT_125M, bank("opt-1.3b.json")), ("norm_type", "eps_source", "placement"))


@pytest.mark.points(1)
def test_post_norm_opt_has_no_final_norm(student: StudentProxy, reference: Reference) -> None:
    """OPT with do_layer_norm_before false is post-norm and has no final norm; without the key it
    is pre-norm (OPTConfig's default is true)."""
    # mistake: do_layer_norm_before ignored, so OPT-350m reported as pre-norm with 2L + 1 norms;
    # an absent key read as false (cfg.get("do_layer_norm_before") with no default)
    configs = (
        bank("opt-350m.json"),
        OPT_125M,
        with_values(OPT_125M, _remove_final_layer_norm=True),
        resized(without(OPT_125M, "do_layer_norm_before")),
    )
    for config in configs:
        expect_fields(
            report_of(student, config), reference.inspect_config(config), ("placement", "n_norms", "final_norm")
        )


@pytest.mark.points(1)
def test_bert_family_is_post_norm(student: StudentProxy, reference: Reference) -> None:
    """BERT and RoBERTa are post-norm LayerNorm encoders: an embedding norm, no final norm."""
    # mistake: BERT reported as pre-norm (the modern default) or given a final norm
    for config in (bank("bert-base-uncased.json"), ROBERTA_BASE):
        report = report_of(student, config)
        expect_value(report["placement"], "post", what='inspect_config(config)["placement"]')
        expect_fields(report, reference.inspect_config(config), ("norm_type", "n_norms", "final_norm", "qk_norm"))
    expect_family(student, reference, (bank("bert-base-uncased.json"), ROBERTA_BASE), ("placement", "final_norm"))


@pytest.mark.points(1)
def test_gemma_family_scales_by_one_plus_weight(student: StudentProxy, reference: Reference) -> None:
    """Every Gemma generation uses the RMSNorm whose scale is 1 + weight; only Gemma-3 adds QK-norm."""
    # mistake: Gemma reported as plain RMSNorm (its weights are stored as offsets from 1), or
    # Gemma-3's QK-norm given to every generation (gemma/modeling_gemma.py's GemmaAttention has
    # no q_norm/k_norm)
    for config in (GEMMA_7B, bank("gemma-2-9b.json"), GEMMA3_4B, GEMMA3_1B):
        report = report_of(student, config)
        expect_value(report["norm_type"], "gemma_rmsnorm", what='inspect_config(config)["norm_type"]')
        expect_fields(report, reference.inspect_config(config), ("placement", "n_norms", "qk_norm"))


@pytest.mark.points(1)
def test_gemma3_reads_its_text_config(student: StudentProxy, reference: Reference) -> None:
    """A Gemma-3 config that nests the language model is read from its text_config."""
    # mistake: text_config ignored, so no layer count, or the wrapper's missing keys crash
    for config in (GEMMA3_4B, GEMMA3_1B):
        expect_fields(
            report_of(student, config),
            reference.inspect_config(config),
            ("model_type", "n_layers", "hidden_size", "n_norms", "qk_norm", "eps"),
        )


@pytest.mark.points(1)
def test_final_norm_is_counted(student: StudentProxy, reference: Reference) -> None:
    """Decoder-only pre-norm models count their final norm."""
    # mistake: n_norms without the final norm (2L instead of 2L + 1)
    for config in (MIXTRAL_8X7B, PHI3_MINI, bank("mistral-7b.json"), bank("qwen2.5-7b.json")):
        expect_fields(
            report_of(student, config),
            reference.inspect_config(config),
            ("n_norms", "final_norm", "norm_type", "placement", "qk_norm"),
        )


@pytest.mark.points(1)
def test_t5_counts_encoder_and_decoder(student: StudentProxy, reference: Reference) -> None:
    """T5 counts both stacks: encoder and decoder layers, norms and final norms."""
    # mistake: T5 counting only the encoder, or the decoder without its cross-attention norm
    configs = (bank("t5-base.json"), FLAN_T5_SMALL, with_values(bank("t5-base.json"), num_decoder_layers=2))
    for config in configs:
        expect_fields(
            report_of(student, config),
            reference.inspect_config(config),
            ("norm_type", "n_layers", "n_norms", "final_norm"),
        )


@pytest.mark.points(1)
def test_falcon_7b_is_parallel_with_one_norm(student: StudentProxy, reference: Reference) -> None:
    """Falcon-7B runs attention and MLP in parallel off one input_layernorm per layer; so does a
    Falcon config that leaves parallel_attn out (FalconConfig's default is true)."""
    # mistake: Falcon parallel missed (reported as pre-norm, counting 2 norms per layer); an
    # absent parallel_attn read as false (cfg.get("parallel_attn") with no default)
    config = bank("falcon-7b.json")
    report = report_of(student, config)
    expect_value(report["placement"], "parallel", what='inspect_config(config)["placement"]')
    expect_fields(report, reference.inspect_config(config), ("n_norms", "eps"))
    expect_family(student, reference, (config,), ("placement", "final_norm"))
    unsaid = resized(without(config, "parallel_attn"))
    expect_fields(report_of(student, unsaid), reference.inspect_config(unsaid), ("placement", "n_norms"))


@pytest.mark.points(1)
def test_falcon_new_decoder_architecture(student: StudentProxy, reference: Reference) -> None:
    """Falcon's new decoder architecture is parallel with two norms per layer, whatever
    parallel_attn says (FalconDecoderLayer adds the MLP's output to attention's when either is set)."""
    # mistake: new_decoder_architecture ignored (one norm per layer), or parallel_attn false
    # taken as the only switch for parallel placement; a new architecture with parallel_attn
    # false reported as pre-norm
    configs = (
        FALCON_40B,
        with_values(bank("falcon-7b.json"), parallel_attn=False),
        resized(with_values(FALCON_40B, parallel_attn=False)),
    )
    for config in configs:
        expect_fields(report_of(student, config), reference.inspect_config(config), ("placement", "n_norms"))


@pytest.mark.points(1)
def test_gptj_is_parallel(student: StudentProxy, reference: Reference) -> None:
    """GPT-J is a parallel block with a single norm per layer."""
    # mistake: every LayerNorm model taken as GPT-2 style pre-norm with two norms per layer
    expect_fields(
        report_of(student, GPTJ_6B),
        reference.inspect_config(GPTJ_6B),
        ("placement", "n_layers", "hidden_size", "n_norms", "eps"),
    )
    expect_family(student, reference, (GPTJ_6B,), ("placement", "norm_type", "qk_norm"))


@pytest.mark.points(1)
def test_gpt_neox_follows_use_parallel_residual(student: StudentProxy, reference: Reference) -> None:
    """GPT-NeoX placement follows use_parallel_residual and keeps two norms per layer either way."""
    # mistake: GPT-NeoX always parallel (or always pre), or one norm per layer when parallel
    for config in (bank("pythia-410m.json"), REDPAJAMA_3B):
        expect_fields(report_of(student, config), reference.inspect_config(config), ("placement", "n_norms"))


@pytest.mark.points(1)
def test_olmo2_norms_sublayer_outputs(student: StudentProxy, reference: Reference) -> None:
    """OLMo-2 normalizes each sublayer's output before adding it."""
    # mistake: OLMo-2 placement reported as pre-norm (its norms are named post_*) or post
    config = bank("olmo-2-7b.json")
    report = report_of(student, config)
    expect_value(report["placement"], "post_sublayer", what='inspect_config(config)["placement"]')
    expect_fields(report, reference.inspect_config(config), ("n_norms", "qk_norm", "eps"))
    expect_family(student, reference, (config,), ("placement", "qk_norm", "norm_type"))


def flat_qwen3_5_text() -> list[dict[str, Any]]:
    """variant: the language model of the bank's Qwen3.5 config saved on its own (its
    text_config as the whole config), as the dense and the MoE text family."""
    inner = resized(bank("qwen3.8-27b.json"))["text_config"]
    return [{**fresh_copy(inner), "model_type": kind} for kind in ("qwen3_5_text", "qwen3_5_moe_text")]


@pytest.mark.points(1)
def test_hybrid_qwen(student: StudentProxy, reference: Reference) -> None:
    """Hybrid linear/full-attention Qwen models: zero-centred RMSNorm, two norms in every layer."""
    # mistake: counting norms only in full-attention layers, plain RMSNorm for Qwen3-Next, or
    # the nested text_config of the 27B model missed
    # and the flat text-only configs of the Qwen3.5 families (model_type qwen3_5_text,
    # qwen3_5_moe_text, in the docstring's table) taken for unknown plain-RMSNorm models
    configs = (bank("qwen3-next-80b-a3b.json"), bank("qwen3.8-27b.json"), *flat_qwen3_5_text())
    for config in configs:
        expect_fields(
            report_of(student, config),
            reference.inspect_config(config),
            ("model_type", "norm_type", "placement", "n_layers", "hidden_size", "n_norms", "qk_norm"),
        )


@pytest.mark.points(2)
def test_unknown_model_type_falls_back_on_the_eps_key(student: StudentProxy, reference: Reference) -> None:
    """An unknown model_type is treated by its eps key: RMSNorm or LayerNorm, pre-norm."""
    # mistake: unknown families refused outright, or the norm type guessed from the name; the
    # docstring's final norm and "no QK-norm" for them not reported
    configs = (
        INTERNLM2_7B,
        STABLELM2_1_6B,
        without(bank("gpt2.json"), "model_type"),
        # variant: both an RMSNorm and a LayerNorm key; the docstring's order decides (rms_norm_eps first)
        with_values(INTERNLM2_7B, layer_norm_eps=1e-06),
    )
    # mistake (the last config): the eps keys tried in another order than the docstring's
    for config in configs:
        expect_fields(
            report_of(student, config),
            reference.inspect_config(config),
            ("model_type", "norm_type", "eps", "eps_source", "placement", "n_norms", "final_norm", "qk_norm"),
        )


@pytest.mark.points(1)
def test_config_without_family_or_eps_key_raises(student: StudentProxy, reference: Reference) -> None:
    """A config of an unknown family without any eps key is refused with ValueError, and so is one
    without a layer count or a width, or a file that holds no JSON object."""
    # mistake: guessing a norm type (or returning a report with eps None) instead of refusing;
    # a missing layer count or width reported as 0 (or None), a JSON list read as a config
    # mistake: only a JSON list refused (isinstance(config, list)), so a file holding a number or
    # a string fails with AttributeError
    # Refusing earns points only from an inspect_config that also reads a config it can read.
    config = bank("llama-2-7b.json")
    expect_fields(report_of(student, config), reference.inspect_config(config), ["norm_type", "eps", "placement"])
    refused: tuple[Any, ...] = (
        {"model_type": "mystery_lm", "hidden_size": 512, "num_hidden_layers": 8},
        {"hidden_size": 64, "num_hidden_layers": 2, "vocab_size": 100},
        without(bank("llama-2-7b.json"), "hidden_size"),
        without(bank("gpt2.json"), "n_layer"),
        file_arg("config.json", json.dumps([bank("llama-2-7b.json")])),
        file_arg("config.json", "42"),
        file_arg("config.json", '"llama"'),
    )
    for argument in refused:
        with expect_raises(ValueError, what="inspect_config(config)"):
            student.inspect_config(argument)


@pytest.mark.points(1)
def test_path_argument(student: StudentProxy, reference: Reference) -> None:
    """A path to a config.json file, a str or a pathlib.Path, gives the same report as the parsed dict."""
    # mistake: only dicts accepted (json.load skipped, or the path treated as JSON text), or
    # only a str taken for a path (isinstance(config, str): a Path is then "not a JSON object")
    for config, as_path in ((MIXTRAL_8X7B, False), (bank("qwen3.8-27b.json"), True)):
        argument = file_arg("config.json", json.dumps(config, indent=2), as_path)
        expect_fields(
            report_of(student, argument), reference.inspect_config(config), [key for key in KEYS if key != "note"]
        )


@pytest.mark.points(1)
def test_leaves_its_config_unchanged(student: StudentProxy, reference: Reference) -> None:
    """inspect_config only reads its config: no key of it, or of the text_config inside it, is
    added, removed or given another value."""
    # mistake: the language model's keys merged into the caller's config (config.update(text_config)),
    # or a missing key filled in where it is read (text.setdefault("rms_norm_eps", ...)), which
    # changes every later use of that config in the caller's program (trial 60)
    configs = (
        resized(without(bank("llama-3-8b.json"), "rms_norm_eps")),
        resized(bank("qwen3.8-27b.json")),
        resized(GEMMA3_4B),
    )
    for config in configs:
        report = report_of(student, config)
        changed = student.recorded().mutated
        # Left alone earns the point only with a report right about what it read (decision 1).
        expect_fields(report, reference.inspect_config(config), ("n_layers", "hidden_size", "eps", "eps_source"))
        expect_config_unchanged(changed, function="inspect_config")


@pytest.mark.points(2)
def test_note_names_norm_and_eps(student: StudentProxy, reference: Reference) -> None:
    """The note says, in 2 to 4 sentences, the norm type in words, the eps, the placement and
    how many norms to build, consistently with the report."""
    # mistake: a fixed template note (always "RMSNorm", always 1e-06), the (1 + weight) scale of
    # Gemma-style norms left out, or a note that lists every name and value
    configs = [*all_bank_configs(), ROBERTA_BASE, GEMMA_7B, INTERNLM2_7B, STABLELM2_1_6B]
    for config in configs:
        want = reference.inspect_config(config)
        report = report_of(student, config)
        # The note earns points only with a report that is right about what the note says.
        expect_fields(report, want, ["norm_type", "eps", "placement", "n_norms"])
        expect_note(report["note"], want)


@pytest.mark.points(1)
def test_bloom_counts_its_embedding_norm(student: StudentProxy, reference: Reference) -> None:
    """BLOOM normalizes the embeddings before the first block: a norm beyond its layers' and the final one."""
    # mistake: BLOOM's word_embeddings_layernorm left out of n_norms
    expect_fields(
        report_of(student, BLOOM_560M),
        reference.inspect_config(BLOOM_560M),
        ("norm_type", "placement", "n_layers", "hidden_size", "n_norms", "eps"),
    )
    expect_family(student, reference, (BLOOM_560M,), ("norm_type", "placement", "qk_norm"))


@pytest.mark.points(1)
def test_gpt_neox_without_the_switch_takes_the_library_default(student: StudentProxy, reference: Reference) -> None:
    """A GPT-NeoX config without use_parallel_residual gets GPTNeoXConfig's default: parallel."""
    # mistake: a missing use_parallel_residual read as False
    # Resized, so that Pythia's own report, remembered, is not the answer.
    config = resized(without(bank("pythia-410m.json"), "use_parallel_residual"))
    fields = ("placement", "n_layers", "hidden_size", "n_norms")
    expect_fields(report_of(student, config), reference.inspect_config(config), fields)


def qwen3_5_moe() -> dict[str, Any]:
    """variant: the bank's Qwen3.5 config (text_config nested) relabelled as the MoE family."""
    config = resized(bank("qwen3.8-27b.json"))
    config["model_type"] = "qwen3_5_moe"
    config["text_config"]["model_type"] = "qwen3_5_moe_text"
    return config


@pytest.mark.points(1)
def test_starcoder2_is_a_layernorm_model(student: StudentProxy, reference: Reference) -> None:
    """StarCoder2 is a pre-norm LayerNorm model whose eps key is norm_epsilon."""
    # mistake: StarCoder2 taken for an RMSNorm model (it is Mistral-like), or its eps read from
    # another key; transformers starcoder2/modular_starcoder2.py builds
    # nn.LayerNorm(config.hidden_size, eps=config.norm_epsilon) in each layer and as the final norm
    config = with_values(STARCODER2_3B, norm_epsilon=1e-06)
    expect_fields(
        report_of(student, config),
        reference.inspect_config(config),
        ("model_type", "norm_type", "eps", "eps_source", "placement", "n_norms", "final_norm", "qk_norm"),
    )
    expect_family(student, reference, (STARCODER2_3B,), ("norm_type", "eps_source", "placement"))


@pytest.mark.points(1)
def test_phi_is_parallel_and_reads_qk_layernorm(student: StudentProxy, reference: Reference) -> None:
    """Phi runs attention and MLP in parallel off one norm per layer; qk_layernorm switches QK-norm."""
    # mistake: Phi reported as a sequential pre-norm model with two norms per layer, or
    # qk_layernorm never read; transformers phi/modular_phi.py: PhiDecoderLayer has a single
    # input_layernorm feeding both self_attn and mlp, PhiAttention adds q_layernorm/k_layernorm
    # when config.qk_layernorm (PhiConfig default False)
    for config in (PHI_2, with_values(PHI_2, qk_layernorm=True), without(PHI_2, "qk_layernorm")):
        expect_fields(
            report_of(student, config),
            reference.inspect_config(config),
            ("norm_type", "placement", "n_norms", "final_norm", "qk_norm"),
        )
    expect_family(student, reference, (with_values(PHI_2, qk_layernorm=True),), ("placement", "qk_norm"))


@pytest.mark.points(1)
def test_olmo_is_a_layernorm_model_without_eps_key(student: StudentProxy, reference: Reference) -> None:
    """OLMo (the first one) normalizes with a weightless LayerNorm whose eps is fixed in its code."""
    # mistake: OLMo taken for an RMSNorm model like OLMo-2, or given RMSNorm's 1e-6; transformers
    # olmo/modeling_olmo.py: OlmoLayerNorm calls F.layer_norm(..., eps=1e-5), no config key
    for config in (OLMO_1B, resized(OLMO_1B)):
        expect_fields(
            report_of(student, config),
            reference.inspect_config(config),
            ("model_type", "norm_type", "eps", "eps_source", "placement", "n_norms", "qk_norm"),
        )


@pytest.mark.points(1)
def test_qwen3_moe_families_normalize_queries_and_keys(student: StudentProxy, reference: Reference) -> None:
    """The Qwen3 MoE families keep their dense siblings' norms, QK-norm included."""
    # mistake: the MoE variants treated as plain Llama-style models; transformers
    # qwen3_moe/modular_qwen3_moe.py: Qwen3MoeAttention(Qwen3Attention) keeps q_norm/k_norm;
    # qwen3_5_moe/modular_qwen3_5_moe.py: Qwen3_5MoeRMSNorm(Qwen3NextRMSNorm), a (1 + weight)
    # RMSNorm, and Qwen3_5MoeAttention(Qwen3NextAttention) with its QK-norm
    for config in (QWEN3_30B_A3B, qwen3_5_moe()):
        expect_fields(
            report_of(student, config),
            reference.inspect_config(config),
            ("model_type", "norm_type", "eps", "placement", "n_layers", "n_norms", "qk_norm"),
        )
    expect_family(student, reference, (QWEN3_30B_A3B,), ("norm_type", "qk_norm"))


@pytest.mark.points(1)
def test_falcon_reads_num_ln_in_parallel_attn(student: StudentProxy, reference: Reference) -> None:
    """A Falcon config that says how many norms its parallel block has is taken at its word."""
    # mistake: num_ln_in_parallel_attn ignored, so a new-architecture Falcon always gets two norms
    # per layer; transformers falcon/modeling_falcon.py FalconDecoderLayer: num_ln_in_parallel_attn
    # defaults to 2 only when absent with new_decoder_architecture, and 1 builds one input_layernorm
    for config in (FALCON_11B, resized(FALCON_11B), with_values(FALCON_11B, num_ln_in_parallel_attn=2)):
        expect_fields(
            report_of(student, config), reference.inspect_config(config), ("placement", "n_layers", "n_norms")
        )


@pytest.mark.points(1)
def test_missing_eps_key_default_of_more_families(student: StudentProxy, reference: Reference) -> None:
    """Without its eps key, each family of the docstring's table reports its own config class's
    default (Qwen2, Mistral, Phi-3, OLMo-2, RoBERTa, T5, and every family the other tests of
    defaults leave out)."""
    # mistake: one default for every RMSNorm family; transformers qwen2/configuration_qwen2.py and
    # mistral/configuration_mistral.py default rms_norm_eps to 1e-6, phi3/configuration_phi3.py to 1e-5;
    # olmo2/configuration_olmo2.py to 1e-5 (not the 1e-6 of most RMSNorm families), RobertaConfig's
    # layer_norm_eps to 1e-12 (not roberta-base's 1e-05), T5Config's layer_norm_epsilon to 1e-6
    configs = (
        resized(without(bank("qwen2.5-7b.json"), "rms_norm_eps")),
        resized(without(bank("mistral-7b.json"), "rms_norm_eps")),
        resized(without(PHI3_MINI, "rms_norm_eps")),
        resized(without(bank("olmo-2-7b.json"), "rms_norm_eps")),
        resized(without(ROBERTA_BASE, "layer_norm_eps")),
        resized(without(bank("t5-base.json"), "layer_norm_epsilon")),
        # mistake: a wrong default for one family only (GPT2Config, GPTJConfig, GPTNeoXConfig,
        # FalconConfig, BloomConfig, PhiConfig, Starcoder2Config: 1e-5; Qwen3, Qwen3-MoE, Gemma,
        # Gemma-2, Gemma-3 text, Qwen3-Next, Qwen3.5: 1e-6)
        *(resized(config) for config in _every_family_without_eps()),
    )
    for config in configs:
        expect_fields(
            report_of(student, config), reference.inspect_config(config), ("eps", "eps_source", "n_layers", "n_norms")
        )


def _every_family_without_eps() -> list[dict[str, Any]]:
    """A config of each family the other tests of defaults leave out, its eps key removed (at both
    levels of a wrapper with a text_config)."""
    flat = [
        without(bank("gpt2.json"), "layer_norm_epsilon"),
        without(GPTJ_6B, "layer_norm_epsilon"),
        without(bank("pythia-410m.json"), "layer_norm_eps"),
        without(bank("falcon-7b.json"), "layer_norm_epsilon"),
        without(BLOOM_560M, "layer_norm_epsilon"),
        without(PHI_2, "layer_norm_eps"),
        without(STARCODER2_3B, "norm_epsilon"),
        without(bank("qwen3-8b.json"), "rms_norm_eps"),
        without(QWEN3_30B_A3B, "rms_norm_eps"),
        without(GEMMA_7B, "rms_norm_eps"),
        without(bank("gemma-2-9b.json"), "rms_norm_eps"),
        without(GEMMA3_1B, "rms_norm_eps"),
        without(bank("qwen3-next-80b-a3b.json"), "rms_norm_eps"),
        *({key: value for key, value in c.items() if key != "rms_norm_eps"} for c in flat_qwen3_5_text()),
    ]
    for wrapper in (bank("qwen3.8-27b.json"), qwen3_5_moe()):
        nested = fresh_copy(wrapper)
        nested.pop("rms_norm_eps", None)
        nested["text_config"].pop("rms_norm_eps", None)
        flat.append(nested)
    return flat


@pytest.mark.points(1)
def test_text_config_keys_come_first(student: StudentProxy, reference: Reference) -> None:
    """When a key is both in text_config and at the top level, the text_config one is read."""
    # mistake: the wrapper's top-level keys win over the language model's (the docstring: "looked
    # up there first, then at the top level")
    for config in (bank("qwen3.8-27b.json"), GEMMA3_4B):
        config = resized(config)
        config.update(num_hidden_layers=3, hidden_size=96, rms_norm_eps=1e-03)  # variant: a wrapper's own keys
        expect_fields(
            report_of(student, config),
            reference.inspect_config(config),
            ("model_type", "n_layers", "hidden_size", "n_norms", "eps"),
        )


@pytest.mark.points(1)
def test_unknown_family_with_only_norm_epsilon_raises(student: StudentProxy, reference: Reference) -> None:
    """An unknown model_type whose only eps key is norm_epsilon is refused: that key tells no norm type."""
    # mistake: norm_epsilon added to the keys an unknown family is inferred from (the docstring
    # names three: rms_norm_eps, layer_norm_eps, layer_norm_epsilon)
    # Refusing earns points only from an inspect_config that also reads the known family.
    expect_fields(
        report_of(student, STARCODER2_3B),
        reference.inspect_config(STARCODER2_3B),
        ("norm_type", "eps", "eps_source", "n_norms"),
    )
    for model_type in ("bigcode_lm", None):
        config = resized(with_values(STARCODER2_3B, model_type=model_type))
        if model_type is None:
            config.pop("model_type")
        with expect_raises(ValueError, what="inspect_config(config)"):
            student.inspect_config(config)


@pytest.mark.points(1)
def test_model_type_is_lower_cased(student: StudentProxy, reference: Reference) -> None:
    """A model_type written with capitals is reported lower-cased, and its family is recognized."""
    # mistake: model_type reported as written, so "Gemma2" is not the gemma2 family (it falls back
    # on its eps key: a plain pre-norm RMSNorm) and "Falcon" not the parallel falcon one
    configs = (
        resized(with_values(bank("gemma-2-9b.json"), model_type="Gemma2")),
        resized(with_values(bank("falcon-7b.json"), model_type="Falcon")),
    )
    for config in configs:
        expect_fields(
            report_of(student, config),
            reference.inspect_config(config),
            ("model_type", "norm_type", "eps", "placement", "n_norms", "qk_norm"),
        )
