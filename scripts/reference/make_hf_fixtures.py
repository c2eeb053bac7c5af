#!/usr/bin/env python3
"""Writes tests/fixtures/hf/: three tiny random models in the Hugging Face file layout, a shared
byte-level BPE tokenizer with a ChatML template, and golden values from a float64 reference.

    /usr/bin/python3 scripts/reference/make_hf_fixtures.py [OUT_DIR]

Needs Debian's python3-torch, python3-numpy, python3-regex and python3-jinja2. Deterministic:
fixed seeds, no timestamps; a second run rewrites identical bytes. See scripts/reference/README.md.
"""

import json
import math
import os
import sys
import unicodedata

import numpy as np
import torch

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import bpe_tokenizer  # noqa: E402
import chat_template  # noqa: E402
import corpus  # noqa: E402
import forward  # noqa: E402
import safetensors_io  # noqa: E402

REPO = os.path.dirname(os.path.dirname(HERE))
NUM_MERGES = 123  # 256 bytes + 123 merges + 5 added tokens = 384 token ids
ADDED = [
    ("<|endoftext|>", True),
    ("<|im_start|>", True),
    ("<|im_end|>", True),
    ("<tool_call>", False),
    ("</tool_call>", False),
]
GREEDY_STEPS = 8
LONG_LENGTH = 100  # past the 16/32/64-wide tiles a kernel may use
LOGIT_DIGITS = 9  # significant digits kept for logits (float32 carries about 7)

# ------------------------------------------------------------------ tokenizer


def build_tokenizer():
    merges = bpe_tokenizer.train(corpus.build(), NUM_MERGES)
    if len(merges) != NUM_MERGES:
        raise RuntimeError(f"corpus gave only {len(merges)} merges")
    return bpe_tokenizer.ByteLevelBPE(merges, ADDED)


def tokenizer_config(tok, bos_token, eos_token, pad_token):
    return {
        "add_bos_token": False,
        "add_eos_token": False,
        "add_prefix_space": False,
        "added_tokens_decoder": {
            str(i): {
                "content": c,
                "lstrip": False,
                "normalized": False,
                "rstrip": False,
                "single_word": False,
                "special": special,
            }
            for c, i, special in tok.added
        },
        "additional_special_tokens": ["<|im_start|>", "<|im_end|>"],
        "bos_token": bos_token,
        "chat_template": chat_template.CHAT_TEMPLATE,
        "clean_up_tokenization_spaces": False,
        "eos_token": eos_token,
        "errors": "replace",
        "model_max_length": 256,
        "pad_token": pad_token,
        "split_special_tokens": False,
        "tokenizer_class": "Qwen2Tokenizer",
        "unk_token": None,
    }


# ------------------------------------------------------------------ models


def model_specs(tok):
    eot, ims, ime = tok.token_id("<|endoftext|>"), tok.token_id("<|im_start|>"), tok.token_id("<|im_end|>")
    common = {
        "attention_dropout": 0.0,
        "hidden_act": "silu",
        "hidden_size": 64,
        "initializer_range": 0.02,
        "intermediate_size": 128,
        "max_position_embeddings": 256,
        "num_attention_heads": 4,
        "num_hidden_layers": 2,
        "num_key_value_heads": 2,
        "rope_scaling": None,
        "use_cache": True,
    }
    llama = dict(
        common,
        architectures=["LlamaForCausalLM"],
        model_type="llama",
        attention_bias=False,
        mlp_bias=False,
        pretraining_tp=1,
        bos_token_id=ims,
        eos_token_id=ime,
        rms_norm_eps=1e-5,
        rope_theta=10000.0,
        tie_word_embeddings=True,
        torch_dtype="float32",
        vocab_size=tok.size,  # exactly the tokenizer's 384 ids
    )
    qwen2 = dict(
        common,
        architectures=["Qwen2ForCausalLM"],
        model_type="qwen2",
        bos_token_id=eot,
        eos_token_id=ime,
        max_window_layers=2,
        rms_norm_eps=1e-6,
        rope_theta=1000000.0,
        sliding_window=256,
        use_sliding_window=False,
        tie_word_embeddings=False,
        torch_dtype="bfloat16",
        vocab_size=400,  # padded past the tokenizer's 384 ids, as Qwen checkpoints are
    )
    qwen3 = dict(
        common,
        architectures=["Qwen3ForCausalLM"],
        model_type="qwen3",
        attention_bias=False,
        head_dim=32,  # not hidden_size / num_attention_heads (= 16)
        bos_token_id=eot,
        eos_token_id=ime,
        max_window_layers=2,
        rms_norm_eps=1e-6,
        rope_theta=1000000.0,
        sliding_window=None,
        use_sliding_window=False,
        tie_word_embeddings=True,
        torch_dtype="float16",
        vocab_size=400,
    )
    qwen_gen = {
        "bos_token_id": eot,
        "do_sample": True,
        "eos_token_id": [ime, eot],
        "pad_token_id": eot,
        "repetition_penalty": 1.05,
        "temperature": 0.7,
        "top_k": 20,
        "top_p": 0.8,
    }
    return [
        {
            "name": "llama-tiny",
            "config": llama,
            "dtype": "F32",
            "seed": 1001,
            "shards": 1,
            "generation": {"bos_token_id": ims, "eos_token_id": ime, "pad_token_id": ime},
            "tokens": ("<|im_start|>", "<|im_end|>", "<|im_end|>"),
        },
        {
            "name": "qwen2-tiny",
            "config": qwen2,
            "dtype": "BF16",
            "seed": 1002,
            "shards": 1,
            "generation": qwen_gen,
            "tokens": (None, "<|im_end|>", "<|endoftext|>"),
        },
        {
            "name": "qwen3-tiny",
            "config": qwen3,
            "dtype": "F16",
            "seed": 1003,
            "shards": 2,
            "generation": qwen_gen,
            "tokens": (None, "<|im_end|>", "<|endoftext|>"),
        },
    ]


def random_weights(cfg, seed):
    """name -> float64 array. Large enough std that logits are far from uniform; norm weights
    around 1 (not exactly 1, so a missing multiply shows)."""
    rng = np.random.default_rng(seed)
    shapes = forward.Arch(cfg).expected_names(cfg["intermediate_size"])
    out = {}
    for name in sorted(shapes):
        shape = shapes[name]
        if name.endswith("norm.weight"):
            out[name] = 1.0 + 0.2 * rng.standard_normal(shape)
        elif name.endswith(".bias"):
            out[name] = 0.2 * rng.standard_normal(shape)
        elif "embed_tokens" in name or name == "lm_head.weight":
            out[name] = 0.3 * rng.standard_normal(shape)
        else:
            out[name] = 0.2 * rng.standard_normal(shape)
    return out


def write_model(folder, spec, weights):
    names = sorted(weights)
    dtype = spec["dtype"]
    if spec["shards"] == 1:
        safetensors_io.write_file(os.path.join(folder, "model.safetensors"), [(n, weights[n]) for n in names], dtype)
        return ["model.safetensors"]
    # two shards: embedding + layer 0 in the first, the rest in the second
    first = [n for n in names if n.startswith("model.embed_tokens") or n.startswith("model.layers.0.")]
    second = [n for n in names if n not in first]
    files = ["model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"]
    total = 0
    weight_map = {}
    for fname, group in zip(files, [first, second]):
        total += safetensors_io.write_file(os.path.join(folder, fname), [(n, weights[n]) for n in group], dtype)
        for n in group:
            weight_map[n] = fname
    index = {"metadata": {"total_size": total}, "weight_map": dict(sorted(weight_map.items()))}
    write_json(os.path.join(folder, "model.safetensors.index.json"), index)
    return files


def read_model(folder):
    """Reads back what was written, following the index when there is one: the golden values
    are computed from these numbers, i.e. exactly what the files store."""
    index_path = os.path.join(folder, "model.safetensors.index.json")
    if os.path.exists(index_path):
        with open(index_path) as f:
            files = sorted(set(json.load(f)["weight_map"].values()))
    else:
        files = ["model.safetensors"]
    weights = {}
    for fname in files:
        w, _, meta = safetensors_io.read_file(os.path.join(folder, fname))
        if meta != {"format": "pt"}:
            raise RuntimeError(f"{fname}: metadata {meta}")
        weights.update(w)
    return weights


# ------------------------------------------------------------------ golden values


def round_sig(x, digits=LOGIT_DIGITS):
    return float(f"{x:.{digits - 1}e}")


def check_paths_agree(cfg, weights, ids, logits):
    """The batched torch forward against the explicit per-position, per-head loops."""
    loops = forward.forward_loops(cfg, weights, ids)
    diff = float(np.max(np.abs(loops - logits.numpy())))
    if diff > 1e-10:
        raise RuntimeError(f"batched and loop forwards differ by {diff}")
    return diff


def score_sequence(cfg, weights, ids):
    logits = forward.forward_torch(cfg, weights, ids)  # [T, V]
    logp = torch.log_softmax(logits, dim=-1)
    lp = [float(logp[t - 1, ids[t]]) for t in range(1, len(ids))]
    # logprobs are log_softmax(logits) gathered: recheck from the stored-precision-free rows
    for t in range(1, len(ids)):
        ref = forward.log_softmax_loops(logits[t - 1].numpy())[ids[t]]
        if abs(ref - lp[t - 1]) > 1e-12:
            raise RuntimeError(f"log_softmax mismatch at t={t}: {ref} vs {lp[t - 1]}")
    diff = check_paths_agree(cfg, weights, ids, logits)
    return logits, lp, diff


def float32_distance(cfg, weights, sequences, seqs):
    """How far the same forward in float32 (torch CPU) lands from the float64 golden values:
    a measured guide for the tolerance of an f32 implementation."""
    max_logit, max_lp = 0.0, 0.0
    for ids, exact in zip(sequences, seqs):
        logits = forward.forward_torch(cfg, weights, ids, dtype=torch.float32)
        logp = torch.log_softmax(logits, dim=-1).double()
        ref = forward.forward_torch(cfg, weights, ids)
        max_logit = max(max_logit, float((logits.double() - ref).abs().max()))
        for t in range(1, len(ids)):
            max_lp = max(max_lp, abs(float(logp[t - 1, ids[t]]) - exact["logprobs"][t - 1]))
    return max_logit, max_lp


def intermediates(cfg, weights, ids):
    """Per-layer values for one sequence, to find WHERE an implementation departs; the batched
    and loop paths must agree on each."""
    batched, loops = {}, {}
    forward.forward_torch(cfg, weights, ids, trace=batched)
    forward.forward_loops(cfg, weights, ids, trace=loops)
    if set(batched) != set(loops):
        raise RuntimeError("trace keys differ")
    out = {"ids": ids}
    for key in batched:
        diff = float(np.max(np.abs(batched[key].numpy() - loops[key])))
        if diff > 1e-10:
            raise RuntimeError(f"intermediate {key} differs between paths by {diff}")
        out[key] = [[round_sig(float(v)) for v in row] for row in batched[key]]
    return out


def check_causal_prefix(cfg, weights, ids):
    """Causality: the logits of a prefix do not depend on the tokens after it."""
    full = forward.forward_torch(cfg, weights, ids)
    n = len(ids) // 3
    diff = float((forward.forward_torch(cfg, weights, ids[:n]) - full[:n]).abs().max())
    if diff > 1e-12:
        raise RuntimeError(f"prefix logits change with later tokens by {diff}")
    return diff


def check_rotary_relative(cfg):
    """Rotary: <rot(q, m), rot(k, n)> depends on m - n only (checked at 3 shifts)."""
    a = forward.Arch(cfg)
    rng = np.random.default_rng(5)
    q, k = rng.standard_normal(a.hd), rng.standard_normal(a.hd)
    worst = 0.0
    for m, n in [(5, 2), (9, 2), (30, 7)]:
        base = forward._rotate_vec(q, m - n, a.theta).dot(forward._rotate_vec(k, 0, a.theta))
        for shift in (1, 17, 200):
            got = forward._rotate_vec(q, m + shift, a.theta).dot(forward._rotate_vec(k, n + shift, a.theta))
            worst = max(worst, abs(got - base))
    if worst > 1e-9:
        raise RuntimeError(f"rotary is not relative: {worst}")
    return worst


def f16_storage_block(cfg, weights, sequences, seqs):
    """The same sequences with every stored weight rounded once more to f16 (what an f16 GPU
    copy of these weights holds): the exact reference for f16 storage, and how far that rounding
    alone moves the numbers (a floor for any f16-storage tolerance)."""
    w16 = {k: v.astype(np.float16).astype(np.float64) for k, v in weights.items()}
    out, max_logit, max_lp = [], 0.0, 0.0
    for ids, exact in zip(sequences, seqs):
        logits = forward.forward_torch(cfg, w16, ids)
        logp = torch.log_softmax(logits, dim=-1)
        lp = [float(logp[t - 1, ids[t]]) for t in range(1, len(ids))]
        ref = forward.forward_torch(cfg, weights, ids)
        max_logit = max(max_logit, float((logits - ref).abs().max()))
        max_lp = max(max_lp, max([abs(x - y) for x, y in zip(lp, exact["logprobs"])], default=0.0))
        out.append({"ids": ids, "logprobs": lp})
    return {
        "note": "weights = f16(stored weights), round to nearest even; logits not repeated",
        "max_abs_logit_diff_vs_stored": max_logit,
        "max_abs_logprob_diff_vs_stored": max_lp,
        "sequences": out,
    }


def greedy(cfg, weights, prompt, steps):
    ids = list(prompt)
    out, lps, margins = [], [], []
    for _ in range(steps):
        row = forward.forward_torch(cfg, weights, ids)[-1]
        top2 = torch.topk(row, 2)
        margin = float(top2.values[0] - top2.values[1])
        if margin <= 1e-6:
            raise RuntimeError(f"greedy step has a near tie (margin {margin})")
        nxt = int(top2.indices[0])
        lps.append(float(torch.log_softmax(row, -1)[nxt]))
        margins.append(margin)
        out.append(nxt)
        ids.append(nxt)
    return out, lps, margins


def golden_sequences(tok):
    ims, ime, eot = tok.token_id("<|im_start|>"), tok.token_id("<|im_end|>"), tok.token_id("<|endoftext|>")
    last_merge = 256 + NUM_MERGES - 1
    seq1 = [ims]
    seq7 = [0, 61, 129, 255, 256 + 40, last_merge, ime]
    text = '<|im_start|>user\nAdd 3 and 4.<|im_end|>\n<|im_start|>assistant\n<tool_call>\n{"name": "add"}'
    seq24 = tok.encode(text)
    if len(seq24) < 23:
        raise RuntimeError(f"seq24 text gives only {len(seq24)} ids")
    seq24 = seq24[:22] + [tok.token_id("</tool_call>"), eot]
    prompt = tok.encode("<|im_start|>user\nWhat is 3 + 4?<|im_end|>\n<|im_start|>assistant\n")
    rng = np.random.default_rng(99)
    long_seq = [int(i) for i in rng.integers(0, tok.size, LONG_LENGTH)]
    return [seq1, seq7, seq24], prompt, long_seq


# ------------------------------------------------------------------ output


def write_json(path, obj):
    """Pretty JSON, but lists of plain numbers on one line (the logits rows), UTF-8, newline end."""

    def enc(o, indent):
        pad = "  " * indent
        if isinstance(o, dict):
            if not o:
                return "{}"
            items = [f"{pad}  {json.dumps(k, ensure_ascii=False)}: {enc(v, indent + 1)}" for k, v in o.items()]
            return "{\n" + ",\n".join(items) + "\n" + pad + "}"
        if isinstance(o, list):
            if all(not isinstance(e, (dict, list)) for e in o):
                return "[" + ",".join(json.dumps(e, ensure_ascii=False) for e in o) + "]"
            return "[\n" + ",\n".join(f"{pad}  {enc(e, indent + 1)}" for e in o) + "\n" + pad + "]"
        if isinstance(o, float) and not math.isfinite(o):
            raise ValueError("non-finite number in JSON output")
        return json.dumps(o, ensure_ascii=False)

    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write(enc(obj, 0) + "\n")


def make_model(out_dir, spec, tok, sequences, prompt, long_seq, tok_json):
    folder = os.path.join(out_dir, spec["name"])
    os.makedirs(folder, exist_ok=True)
    for old in os.listdir(folder):
        os.remove(os.path.join(folder, old))
    cfg = spec["config"]
    write_json(os.path.join(folder, "config.json"), dict(sorted(cfg.items())))
    write_json(os.path.join(folder, "generation_config.json"), spec["generation"])
    write_json(os.path.join(folder, "tokenizer.json"), tok_json)
    bos, eos, pad = spec["tokens"]
    write_json(os.path.join(folder, "tokenizer_config.json"), tokenizer_config(tok, bos, eos, pad))
    files = write_model(folder, spec, random_weights(cfg, spec["seed"]))

    weights = read_model(folder)
    forward.check_weights(cfg, weights)
    seqs, max_diff = [], 0.0
    for ids in sequences:
        if max(ids) >= cfg["vocab_size"]:
            raise RuntimeError("sequence id past vocab_size")
        logits, lp, diff = score_sequence(cfg, weights, ids)
        max_diff = max(max_diff, diff)
        seqs.append(
            {
                "ids": ids,
                "logprobs": lp,
                "logits": [[round_sig(float(v)) for v in row] for row in logits],
            }
        )
    f32_logit, f32_lp = float32_distance(cfg, weights, sequences, seqs)
    long_logits, long_lp, long_diff = score_sequence(cfg, weights, long_seq)
    max_diff = max(max_diff, long_diff)
    trace = intermediates(cfg, weights, sequences[1])
    prefix_diff = check_causal_prefix(cfg, weights, sequences[-1])
    rotary_diff = check_rotary_relative(cfg)
    g_ids, g_lp, g_margins = greedy(cfg, weights, prompt, GREEDY_STEPS)
    logit_std = float(torch.cat([forward.forward_torch(cfg, weights, s) for s in sequences]).std())
    golden = {
        "model": spec["name"],
        "architecture": cfg["architectures"][0],
        "stored_dtype": spec["dtype"],
        "vocab_size": cfg["vocab_size"],
        "weight_files": files,
        "reference": "float64 PyTorch forward on the exact stored (rounded) weights; "
        "scripts/reference/forward.py",
        "logits_significant_digits": LOGIT_DIGITS,
        "checks": {
            "batched_vs_loop_forward_max_abs_diff": max_diff,
            "logit_std": logit_std,
            "causal_prefix_max_abs_diff": prefix_diff,
            "rotary_relative_position_max_abs_diff": rotary_diff,
            "float32_forward_max_abs_logit_diff": f32_logit,
            "float32_forward_max_abs_logprob_diff": f32_lp,
        },
        "sequences": seqs,
        "long_sequence": {
            "ids": long_seq,
            "logprobs": long_lp,
            "last_logits": [round_sig(float(v)) for v in long_logits[-1]],
        },
        "intermediates": trace,
        "greedy": {
            "prompt_ids": prompt,
            "ids": g_ids,
            "logprobs": g_lp,
            "top2_margins": g_margins,
            "min_top2_margin": min(g_margins),
        },
    }
    if spec["dtype"] != "F16":
        golden["f16_storage"] = f16_storage_block(cfg, weights, sequences, seqs)
    write_json(os.path.join(folder, "golden.json"), golden)
    size = sum(os.path.getsize(os.path.join(folder, f)) for f in os.listdir(folder))
    print(
        f"{spec['name']}: {size} bytes, batched-vs-loop max diff {max_diff:.2e}, logit std {logit_std:.3f}, "
        f"greedy {g_ids} min margin {min(g_margins):.4f}"
    )


TOKENIZER_STRINGS = [
    "",
    "Hello world!",
    "What is 12 + 7? The answer is 19.",
    "3.14159 and 1,000,000",
    "  leading spaces, trailing spaces   ",
    "line one\nline two\n\n\tindented\r\nwindows",
    "It's the tool's answer; they'll see, won't they?",
    "café résumé naïve",
    "日本語のテキスト 日本",
    "emoji: 🙂 and symbols: €, ©, ™",
    "<|im_start|>user\nhi<|im_end|>\n",
    "text<|endoftext|>more text",
    '<tool_call>\n{"name": "add", "arguments": {"a": 1}}\n</tool_call>',
    "<|im_start|><|im_end|><|endoftext|>",
    "THE ANSWER IS 42!!! ... ok? DON'T, WE'LL SEE.",
    "cafe\u0301 (decomposed e + combining acute: NFC makes it one code point)",
    "a<|im_start|b",
]

CONVERSATIONS = [
    {
        "name": "system_user_generation_prompt",
        "messages": [
            {"role": "system", "content": "You are a calculator."},
            {"role": "user", "content": "What is 12 + 7?"},
        ],
        "tools": None,
        "add_generation_prompt": True,
    },
    {
        "name": "tools_call_and_results",
        "messages": [
            {"role": "user", "content": "Add 12 and 7, and 3 and 4."},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {"type": "function", "function": {"name": "add", "arguments": {"a": 12, "b": 7}}},
                    {"type": "function", "function": {"name": "add", "arguments": {"a": 3, "b": 4}}},
                ],
            },
            {"role": "tool", "content": "19"},
            {"role": "tool", "content": "7"},
            {"role": "assistant", "content": "12 + 7 = 19 and 3 + 4 = 7."},
        ],
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": "add",
                    "description": "Add two integers.",
                    "parameters": {
                        "type": "object",
                        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                        "required": ["a", "b"],
                    },
                },
            }
        ],
        "add_generation_prompt": False,
    },
    {
        "name": "multi_turn_default_system",
        "messages": [
            {"role": "user", "content": "Hi!"},
            {"role": "assistant", "content": "Hello. What can I do?"},
            {"role": "user", "content": "Tell me the time in Tokyo, please."},
        ],
        "tools": None,
        "add_generation_prompt": True,
    },
]


def make_tokenizer_golden(out_dir, tok):
    strings = []
    for s in TOKENIZER_STRINGS:
        ids = tok.encode(s)
        decoded = tok.decode(ids)
        # decode(encode(s)) == s for every NFC string; the one NFD string comes back composed
        if decoded != unicodedata.normalize("NFC", s) or (decoded != s and "decomposed" not in s):
            raise RuntimeError(f"round trip failed for {s!r}")
        strings.append({"text": s, "ids": ids, "tokens": [tok.id_to_token[i] for i in ids], "decoded": decoded})
    special = {"bos_token": None, "eos_token": "<|im_end|>", "pad_token": "<|endoftext|>"}
    chats = []
    for conv in CONVERSATIONS:
        text = chat_template.render(
            chat_template.CHAT_TEMPLATE,
            conv["messages"],
            tools=conv["tools"],
            add_generation_prompt=conv["add_generation_prompt"],
            special_tokens=special,
        )
        ids = tok.encode(text)
        if tok.decode(ids) != text:
            raise RuntimeError(f"round trip failed for chat {conv['name']}")
        chats.append(dict(conv, text=text, ids=ids))
    golden = {
        "tokenizer": "tokenizer.json of every model folder here (identical copies)",
        "vocab_size": tok.size,
        "special_token_ids": {c: i for c, i, _ in tok.added},
        "encode": "no BOS/EOS added: ids are exactly the text's tokens",
        "strings": strings,
        "chat_template_environment": "jinja2 sandbox, trim_blocks and lstrip_blocks, tojson = "
        "json.dumps(x, ensure_ascii=False), variables messages, tools, add_generation_prompt, "
        "bos_token, eos_token, pad_token",
        "chats": chats,
    }
    write_json(os.path.join(out_dir, "tokenizer_golden.json"), golden)
    print(f"tokenizer: {tok.size} ids, {len(strings)} strings and {len(chats)} chats round-trip")


def main():
    out_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(REPO, "tests", "fixtures", "hf")
    os.makedirs(out_dir, exist_ok=True)
    tok = build_tokenizer()
    tok_json = tok.tokenizer_json()
    sequences, prompt, long_seq = golden_sequences(tok)
    for spec in model_specs(tok):
        make_model(out_dir, spec, tok, sequences, prompt, long_seq, tok_json)
    make_tokenizer_golden(out_dir, tok)


if __name__ == "__main__":
    main()
