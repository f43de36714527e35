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
            level; ``model_type`` is always the top-level one. The config is only read: no key
            of it, or of its ``text_config``, is added, removed or changed.

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
        ``qk_norm``     bool  attention normalizes its queries and keys (QK-norm)
        ``note``        str   2 to 4 English sentences for a serving engineer: the norm type in
                              words ("LayerNorm", "RMSNorm", or "RMSNorm with a (1 + weight)
                              scale"), the eps written as ``repr(eps)`` (e.g. ``1e-06``), the
                              placement in words ("pre-norm", "post-norm", "sandwich",
                              "norm-on-output" or "parallel"; case does not matter), and the
                              number of norms to build; it names no other norm type or
                              placement, not even to contrast it, and no other number of
                              1e-4 or less (a reader would take it for another eps)
        =============== ===== ====================================================================

    What you need to know about each family is in its published config and in its modelling
    code, not here: reading them is the exercise. The rules the lesson teaches decide most of
    it:

    1. **The eps key names the norm.** ``rms_norm_eps`` means an RMSNorm; ``layer_norm_eps``,
       ``layer_norm_epsilon`` and ``norm_epsilon`` mean a LayerNorm, unless the modelling code
       says otherwise (a class called ``...LayerNorm`` that never subtracts the mean is an
       RMSNorm). The report's ``eps`` is that key's value.
    2. **A missing eps key means the library's default** for the norm class the code builds (the
       ``eps=`` default of that class, or of ``torch.nn.LayerNorm``), with ``eps_source``
       ``"default"``.
    3. **Decoder-only language models are pre-norm** with two norms per layer and a final norm,
       unless their code shows another placement (below).
    4. **An RMSNorm that multiplies by** ``1 + weight`` (its weight starts at zero) is a
       ``"gemma_rmsnorm"``: loading it as a plain RMSNorm shrinks every activation.
    5. **Count what sits on the residual path**: see Counting.

    Families the report must know, and where to read each one's code (in Hugging Face
    transformers, ``src/transformers/models/``; look for the norm classes, the decoder layer's
    ``forward`` and the model's last norm):

        ================================================ ==========================================
        model_type                                       modelling code
        ================================================ ==========================================
        gpt2, gptj, gpt_neox, bloom, phi, starcoder2     ``<model_type>/modeling_<model_type>.py``
        falcon, olmo, opt, bert, roberta, t5             ``<model_type>/modeling_<model_type>.py``
        llama, mistral, mixtral, phi3, olmo2             ``<model_type>/modeling_<model_type>.py``
        qwen2, qwen3, qwen3_moe, qwen3_next              ``<model_type>/modeling_<model_type>.py``
        gemma, gemma2, gemma3 (and gemma3_text)          ``<model_type>/modeling_<model_type>.py``
        qwen3_5, qwen3_5_moe (and their _text configs)   ``qwen3_5/modular_qwen3_5.py``
        ================================================ ==========================================

    The bank in ``configs/`` holds a published config of many of them; a config's key that
    switches the architecture (``do_layer_norm_before``, ``use_parallel_residual``,
    ``parallel_attn``, ``new_decoder_architecture``, ``qk_layernorm``...) is read where its
    modelling code reads it, with the same default.

    Placement (what the decoder layer's ``forward`` does with each sublayer ``f``):
        * ``"pre"``: ``x + f(norm(x))``;
        * ``"post"``: ``norm(x + f(x))``;
        * ``"sandwich"``: ``x + norm(f(norm(x)))``, a norm before and after every sublayer;
        * ``"post_sublayer"``: ``x + norm(f(x))``, each sublayer's output normalized;
        * ``"parallel"``: ``x + attn(norm(x)) + ffn(norm(x))``, attention and MLP read the same
          stream in parallel (one shared norm, or one norm each).

    Counting ``n_norms``:
        ``norms per layer * n_layers + (1 if a norm follows the embedding) + (1 if a final
        norm)``, each counted once however many sublayers share it. An encoder-decoder counts
        both stacks (``n_layers`` is then encoder layers + decoder layers). Not counted:
        QK-norms (that is ``qk_norm``), a norm inside a token mixer, any vision tower.

    Layer count and width are read from the first key present among ``num_hidden_layers``,
    ``n_layer``, ``num_layers``, ``n_layers`` and among ``hidden_size``, ``n_embd``, ``n_embed``,
    ``d_model`` (T5: ``num_layers`` and ``num_decoder_layers``).

    Unknown ``model_type`` (or none): rules 1 and 3 decide, from the first eps key present
    (``rms_norm_eps``, ``layer_norm_eps``, ``layer_norm_epsilon``): pre-norm, two norms per
    layer, a final norm, no QK-norm; the note says these were inferred.

    Raises:
        ValueError: the file does not hold a JSON object; the ``model_type`` is unknown and
            none of the three eps keys above is present; or no layer count or width key is
            present.
    """
    ### BEGIN SOLUTION hint: load the JSON if given a path, pick the family's row by model_type (or by the eps key name for an unknown type), then read eps, layers and width and add up the norms
    if isinstance(config, (str, Path)):
        config = json.loads(Path(config).read_text())
    if not isinstance(config, dict):
        raise ValueError("a model config must be a JSON object")
    model_type = str(config.get("model_type") or "unknown").lower()
    text_config = config.get("text_config")
    # multimodal wrappers keep the language model's keys under text_config
    cfg = {**config, **text_config} if isinstance(text_config, dict) else config

    def row(norm, eps_key, eps_default, placement="pre", per_layer=2, embedding=0, final=True, qk=False, seq2seq=False):
        return dict(
            norm=norm,
            eps_key=eps_key,
            eps_default=eps_default,
            placement=placement,
            per_layer=per_layer,
            embedding=embedding,
            final=final,
            qk=qk,
            seq2seq=seq2seq,
        )

    # the switches below mirror the defaults of each transformers config class
    neox_parallel = cfg.get("use_parallel_residual", True)
    parallel_attn = cfg.get("parallel_attn", True)
    new_arch = cfg.get("new_decoder_architecture", False)
    falcon_branch_norms = cfg.get("num_ln_in_parallel_attn") or (2 if new_arch else 1)
    opt_pre = cfg.get("do_layer_norm_before", True)
    post_norm_encoder = row("layernorm", "layer_norm_eps", 1e-12, "post", embedding=1, final=False)
    llama_like = row("rmsnorm", "rms_norm_eps", 1e-6)
    qwen_hybrid = row("gemma_rmsnorm", "rms_norm_eps", 1e-6, qk=True)
    gemma_sandwich = row("gemma_rmsnorm", "rms_norm_eps", 1e-6, "sandwich", 4)
    families = {
        "gpt2": row("layernorm", "layer_norm_epsilon", 1e-5),
        "gptj": row("layernorm", "layer_norm_epsilon", 1e-5, "parallel", 1),
        "gpt_neox": row("layernorm", "layer_norm_eps", 1e-5, "parallel" if neox_parallel else "pre"),
        "falcon": row(
            "layernorm",
            "layer_norm_epsilon",
            1e-5,
            "parallel" if parallel_attn or new_arch else "pre",
            falcon_branch_norms if parallel_attn else 2,
        ),
        "bloom": row("layernorm", "layer_norm_epsilon", 1e-5, embedding=1),
        "phi": row("layernorm", "layer_norm_eps", 1e-5, "parallel", 1, qk=bool(cfg.get("qk_layernorm", False))),
        "starcoder2": row("layernorm", "norm_epsilon", 1e-5),
        "olmo": row("layernorm", None, 1e-5),  # F.layer_norm(..., eps=1e-5) hard-coded
        "opt": row(
            "layernorm",
            None,
            1e-5,
            "pre" if opt_pre else "post",  # nn.LayerNorm default
            final=bool(opt_pre) and not cfg.get("_remove_final_layer_norm", False),
        ),
        "bert": post_norm_encoder,
        "roberta": post_norm_encoder,
        "t5": row("rmsnorm", "layer_norm_epsilon", 1e-6, seq2seq=True),
        "llama": llama_like,
        "mistral": llama_like,
        "qwen2": llama_like,
        "qwen3": {**llama_like, "qk": True},
        "qwen3_moe": {**llama_like, "qk": True},
        "mixtral": {**llama_like, "eps_default": 1e-5},
        "phi3": {**llama_like, "eps_default": 1e-5},
        "olmo2": row("rmsnorm", "rms_norm_eps", 1e-5, "post_sublayer", qk=True),
        "gemma": row("gemma_rmsnorm", "rms_norm_eps", 1e-6),
        "gemma2": gemma_sandwich,
        "gemma3": {**gemma_sandwich, "qk": True},
        "gemma3_text": {**gemma_sandwich, "qk": True},
        "qwen3_next": qwen_hybrid,
        "qwen3_5": qwen_hybrid,
        "qwen3_5_text": qwen_hybrid,
        "qwen3_5_moe": qwen_hybrid,
        "qwen3_5_moe_text": qwen_hybrid,
    }

    family = families.get(model_type)
    if family is None and isinstance(text_config, dict):
        family = families.get(str(text_config.get("model_type", "")).lower())
    inferred_from = None
    if family is None:
        for key, norm in (
            ("rms_norm_eps", "rmsnorm"),
            ("layer_norm_eps", "layernorm"),
            ("layer_norm_epsilon", "layernorm"),
        ):
            if cfg.get(key) is not None:
                family, inferred_from = row(norm, key, None), key
                break
        else:
            raise ValueError(
                f"model_type {model_type!r} is not a known family and the config has none of "
                "rms_norm_eps, layer_norm_eps, layer_norm_epsilon: the norm type cannot be told"
            )

    eps_key = family["eps_key"]
    if eps_key is not None and cfg.get(eps_key) is not None:
        eps, eps_source = float(cfg[eps_key]), eps_key
    else:
        eps, eps_source = float(family["eps_default"]), "default"

    def first_int(keys, what):
        for key in keys:
            if cfg.get(key) is not None:
                return int(cfg[key])
        raise ValueError(f"model_type {model_type!r}: no {what} under any of {', '.join(keys)}")

    hidden_size = first_int(("hidden_size", "n_embd", "n_embed", "d_model"), "width")
    if family["seq2seq"]:
        encoder = first_int(("num_layers",), "encoder layer count")
        decoder = int(cfg.get("num_decoder_layers") or encoder)
        n_layers = encoder + decoder
        n_norms = 2 * encoder + 1 + 3 * decoder + 1  # decoder layers add a cross-attention norm
        breakdown = (
            f"2 in each of the {encoder} encoder layers, 3 in each of the {decoder} "
            "decoder layers and a final norm closing each stack"
        )
    else:
        n_layers = first_int(("num_hidden_layers", "n_layer", "num_layers", "n_layers"), "layer count")
        n_norms = family["per_layer"] * n_layers + family["embedding"] + int(family["final"])
        breakdown = f"{family['per_layer']} in each of the {n_layers} layers"
        breakdown += ", one after the embedding" if family["embedding"] else ""
        breakdown += ", one final norm" if family["final"] else ", no final norm"

    norm_words = {
        "layernorm": "LayerNorm",
        "rmsnorm": "RMSNorm",
        "gemma_rmsnorm": "RMSNorm with a (1 + weight) scale",
    }[family["norm"]]
    placement_words = {
        "pre": "pre-norm placement, x + f(norm(x))",
        "post": "post-norm placement, norm(x + f(x)), which renormalizes the stream itself after every addition",
        "sandwich": "sandwich placement, x + norm(f(norm(x))), a norm before and after every sublayer",
        "post_sublayer": "norm-on-output placement, x + norm(f(x)), where each sublayer's "
        "output is normalized before it is added",
        "parallel": "parallel-residual placement, x + attn(norm(x)) + ffn(norm(x)), where "
        "attention and FFN read the same input",
    }[family["placement"]]
    if eps_source != "default":
        source_words = f"read from {eps_source}"
    elif eps_key is None:
        source_words = "the library default, this family's configs carry no eps key"
    else:
        source_words = f"the library default, the config has no {eps_key}"
    subject = model_type if model_type != "unknown" else "This model"
    sentences = [
        f"{subject} normalizes with {norm_words}, eps={eps!r} ({source_words}), in {placement_words}.",
        f"A serving engine must build {n_norms} norms on the residual path ({breakdown}) with "
        "exactly this type, eps and placement, or its activations drift away from the trained "
        "model's.",
    ]
    if family["norm"] == "gemma_rmsnorm":
        sentences.append(
            "The checkpoint stores each scale as its offset from 1, so loading it "
            "into a plain RMSNorm (x * weight) shrinks activations towards zero."
        )
    if family["qk"]:
        sentences.append(
            "Attention also normalizes its queries and keys (QK-norm, not "
            "counted above), which the engine must reproduce as well."
        )
    if inferred_from is not None:
        sentences.append(
            f"The model_type {model_type!r} is not in the family table, so the norm "
            f"type was inferred from the {inferred_from} key and a pre-norm stack "
            "with a final norm was assumed: check the modelling code before serving."
        )

    return {
        "model_type": model_type,
        "norm_type": family["norm"],
        "eps": eps,
        "eps_source": eps_source,
        "placement": family["placement"],
        "n_layers": n_layers,
        "hidden_size": hidden_size,
        "n_norms": n_norms,
        "final_norm": bool(family["final"]),
        "qk_norm": bool(family["qk"]),
        "note": " ".join(sentences),
    }
    ### END SOLUTION
