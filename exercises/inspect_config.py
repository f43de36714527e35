"""Read a model's Hugging Face ``config.json`` and report its normalization contract.

The lab's production extension: "inspect a real model config (rms_norm_eps, norm module names)
and write one paragraph on what your serving engine must match for correctness". The bank of
published configs in ``configs/`` is the material; :func:`inspect_config` turns one config into
a structured report plus that paragraph.
"""

import json
from pathlib import Path


def inspect_config(config):
    """What a serving engine must match about a model's norms, read from its config.

    Args:
        config: a parsed ``config.json`` (a dict), or the path (``str`` or ``pathlib.Path``) of
            such a file. When the config keeps its language model under ``"text_config"``
            (Gemma-3, Qwen3.5), every key below is looked up there first, then at the top
            level; ``model_type`` is always the top-level one.

    Returns:
        A dict with exactly these keys:

        =============== ===== ====================================================================
        key             type  value
        =============== ===== ====================================================================
        ``model_type``  str   the config's ``model_type`` lower-cased, ``"unknown"`` if absent
        ``norm_type``   str   ``"layernorm"``, ``"rmsnorm"``, or ``"gemma_rmsnorm"`` (an RMSNorm
                              whose scale is ``1 + weight``: the checkpoint stores the scale's
                              offset from 1)
        ``eps``         float the epsilon of the residual-path norms
        ``eps_source``  str   the key ``eps`` was read from, or ``"default"`` when the family's
                              key is absent and the library default was used
        ``placement``   str   ``"pre"``, ``"post"``, ``"sandwich"``, ``"post_sublayer"`` or
                              ``"parallel"`` (see Placement)
        ``n_layers``    int   transformer layers; T5: encoder layers + decoder layers
        ``hidden_size`` int   width of the residual stream
        ``n_norms``     int   normalization modules on the residual path (see Counting)
        ``final_norm``  bool  a norm sits between the last layer and the output head
        ``qk_norm``     bool  attention normalizes queries and keys per head
        ``note``        str   2 to 4 English sentences for a serving engineer: the norm type in
                              words ("LayerNorm", "RMSNorm", or "RMSNorm with a (1 + weight)
                              scale"), the eps written as ``repr(eps)`` (e.g. ``1e-06``), the
                              placement in words, and the number of norms to build
        =============== ===== ====================================================================

    Families (``model_type``; eps key with the default used when the key is absent; norms per
    layer; other residual-path norms). "final" is the norm before the head, "embedding" a norm
    right after the token embedding:

        ================================ ============= ============================ ===== =========
        model_type                       norm_type     eps key (default)            layer other
        ================================ ============= ============================ ===== =========
        gpt2                             layernorm     layer_norm_epsilon (1e-5)    2     final
        gptj                             layernorm     layer_norm_epsilon (1e-5)    1     final
        gpt_neox                         layernorm     layer_norm_eps (1e-5)        2     final
        falcon                           layernorm     layer_norm_epsilon (1e-5)    1-2   final
        bloom                            layernorm     layer_norm_epsilon (1e-5)    2     emb+final
        phi                              layernorm     layer_norm_eps (1e-5)        1     final
        starcoder2                       layernorm     norm_epsilon (1e-5)          2     final
        olmo                             layernorm     no key (1e-5, fixed in code) 2     final
        opt                              layernorm     no key (1e-5, nn.LayerNorm)  2     final*
        bert, roberta                    layernorm     layer_norm_eps (1e-12)       2     embedding
        t5                               rmsnorm       layer_norm_epsilon (1e-6)    2/3   2 finals
        llama, mistral, qwen2, qwen3,    rmsnorm       rms_norm_eps (1e-6)          2     final
        qwen3_moe
        mixtral, phi3                    rmsnorm       rms_norm_eps (1e-5)          2     final
        olmo2                            rmsnorm       rms_norm_eps (1e-5)          2     final
        gemma                            gemma_rmsnorm rms_norm_eps (1e-6)          2     final
        gemma2, gemma3, gemma3_text      gemma_rmsnorm rms_norm_eps (1e-6)          4     final
        qwen3_next, qwen3_5,             gemma_rmsnorm rms_norm_eps (1e-6)          2     final
        qwen3_5_text, qwen3_5_moe,
        qwen3_5_moe_text
        ================================ ============= ============================ ===== =========

    T5's ``T5LayerNorm`` does not subtract the mean, so it is an RMSNorm despite its key name.
    OLMo (1) uses a LayerNorm without learned scale or shift. QK-norm is present in qwen3,
    qwen3_moe, gemma3, gemma3_text, olmo2, qwen3_next and the qwen3_5 family, and in phi when
    ``qk_layernorm`` is true; absent everywhere else.

    Placement:
        * ``"pre"``: ``x + f(norm(x))``. Every family not named below, opt when
          ``do_layer_norm_before`` (default true) is true, gpt_neox when
          ``use_parallel_residual`` is false, falcon when both ``parallel_attn`` and
          ``new_decoder_architecture`` are false.
        * ``"post"``: ``norm(x + f(x))``. bert, roberta, and opt when ``do_layer_norm_before``
          is false (OPT-350m).
        * ``"sandwich"``: ``x + norm(f(norm(x)))``. gemma2, gemma3, gemma3_text.
        * ``"post_sublayer"``: ``x + norm(f(x))``. olmo2.
        * ``"parallel"``: ``x + attn(norm(x)) + ffn(norm(x))``. gptj, phi; gpt_neox when
          ``use_parallel_residual`` (default true) is true; falcon when ``parallel_attn``
          (default true) or ``new_decoder_architecture`` (default false) is true.

    Counting ``n_norms``:
        ``norms per layer * n_layers + (1 if embedding norm) + (1 if final norm)``, where

        * falcon has 2 norms per layer when ``parallel_attn`` is false; otherwise
          ``num_ln_in_parallel_attn`` norms, which defaults to 2 when
          ``new_decoder_architecture`` is true and to 1 otherwise (Falcon-7B: ``L + 1``;
          Falcon-40B: ``2L + 1``);
        * opt has a final norm only when ``do_layer_norm_before`` is true and
          ``_remove_final_layer_norm`` (default false) is false (OPT-350m: ``2L``);
        * t5 counts both stacks: ``2 * num_layers + 1`` (encoder and its final norm) plus
          ``3 * num_decoder_layers + 1`` (the decoder adds a cross-attention norm);
          ``num_decoder_layers`` defaults to ``num_layers``;
        * hybrid models (qwen3_next, qwen3_5 family) have 2 norms per layer whether the layer
          mixes tokens with Gated DeltaNet or with full attention.

        Not counted: per-head QK-norms, the gated norm inside a Gated DeltaNet mixer, and any
        vision tower.

    Layer count and width are read from the first key present among ``num_hidden_layers``,
    ``n_layer``, ``num_layers``, ``n_layers`` and among ``hidden_size``, ``n_embd``, ``n_embed``,
    ``d_model`` (T5: ``num_layers`` and ``num_decoder_layers``).

    Unknown ``model_type`` (or none): the norm is decided by the first eps key present,
    ``rms_norm_eps`` gives an RMSNorm, ``layer_norm_eps`` or ``layer_norm_epsilon`` a
    LayerNorm; placement is then ``"pre"`` with 2 norms per layer, a final norm and no QK-norm,
    and the note says that these were inferred.

    Raises:
        ValueError: the file does not hold a JSON object; the ``model_type`` is unknown and
            none of the three eps keys above is present; or no layer count or width key is
            present.
    """
    raise NotImplementedError("load the JSON if given a path, pick the family's row by model_type (or by the eps key name for an unknown type), then read eps, layers and width and add up the norms")
