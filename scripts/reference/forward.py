"""Reference forward pass, float64, for the Llama family (as SmolLM2 uses it), Qwen2 and Qwen3.

Written from the architectures' published descriptions (the Hugging Face model cards / docs):

  x = embed_tokens[ids]                                       [T, H]
  per layer:
    h = RMSNorm(x; input_layernorm)                           RMSNorm(v) = v / sqrt(mean(v^2)+eps) * w
    q = h Wq^T (+bq), k = h Wk^T (+bk), v = h Wv^T (+bv)     [T, nh*hd], [T, nkv*hd], [T, nkv*hd]
    Qwen3 only: q, k viewed per head get RMSNorm over head_dim (q_norm, k_norm) BEFORE rotary
    rotary, "rotate half" convention: inv_freq_i = theta^(-2i/hd), i < hd/2, angle = pos*inv_freq,
      cos/sin = cat(c, c) / cat(s, s) over hd, out = v*cos + rotate_half(v)*sin,
      rotate_half([a, b]) = [-b, a] with a, b the two halves
    grouped-query attention: query head j reads kv head j // (nh/nkv); scores q.k / sqrt(hd),
      causal (key position <= query position), softmax over keys
    x = x + o Wo^T (+bo)   (Qwen2: q/k/v biases, no o bias; Llama: biases only if attention_bias)
    h = RMSNorm(x; post_attention_layernorm)
    x = x + down(silu(gate(h)) * up(h))   (biases only if Llama mlp_bias)
  logits = RMSNorm(x; norm) lm_head^T   (lm_head = embed_tokens when tie_word_embeddings)

Two independent paths compute this: forward_torch (batched torch matmuls) and forward_loops
(numpy, one position and one head at a time, scalar rotary and softmax). make_hf_fixtures.py
checks they agree.
"""

import math

import numpy as np
import torch

torch.set_default_dtype(torch.float64)


class Arch:
    """What a config.json says about the computation (only the keys this reference needs)."""

    def __init__(self, cfg):
        self.model_type = cfg["model_type"]
        if self.model_type not in ("llama", "qwen2", "qwen3"):
            raise ValueError(f"model_type must be llama, qwen2 or qwen3, got {self.model_type}")
        if cfg.get("hidden_act", "silu") != "silu":
            raise ValueError(f"hidden_act must be silu, got {cfg['hidden_act']}")
        if cfg.get("rope_scaling") not in (None, {}):
            raise ValueError("rope_scaling is not supported by this reference")
        self.hidden = cfg["hidden_size"]
        self.layers = cfg["num_hidden_layers"]
        self.nh = cfg["num_attention_heads"]
        self.nkv = cfg.get("num_key_value_heads", self.nh)
        self.hd = cfg.get("head_dim") or self.hidden // self.nh
        self.eps = cfg["rms_norm_eps"]
        self.theta = cfg["rope_theta"]
        self.vocab = cfg["vocab_size"]
        self.tied = cfg.get("tie_word_embeddings", False)
        if self.nh % self.nkv != 0:
            raise ValueError("num_attention_heads must be a multiple of num_key_value_heads")
        if self.model_type == "llama":
            self.qkv_bias = self.o_bias = bool(cfg.get("attention_bias", False))
            self.mlp_bias = bool(cfg.get("mlp_bias", False))
        elif self.model_type == "qwen2":
            self.qkv_bias, self.o_bias, self.mlp_bias = True, False, False
        else:
            self.qkv_bias = self.o_bias = bool(cfg.get("attention_bias", False))
            self.mlp_bias = False
        self.qk_norm = self.model_type == "qwen3"

    def expected_names(self, intermediate):
        """Every tensor name the checkpoint must hold -> its shape ([out, in] for linear weights)."""
        H, hd = self.hidden, self.hd
        shapes = {"model.embed_tokens.weight": [self.vocab, H], "model.norm.weight": [H]}
        if not self.tied:
            shapes["lm_head.weight"] = [self.vocab, H]
        for l in range(self.layers):
            p = f"model.layers.{l}."
            shapes[p + "input_layernorm.weight"] = [H]
            shapes[p + "post_attention_layernorm.weight"] = [H]
            shapes[p + "self_attn.q_proj.weight"] = [self.nh * hd, H]
            shapes[p + "self_attn.k_proj.weight"] = [self.nkv * hd, H]
            shapes[p + "self_attn.v_proj.weight"] = [self.nkv * hd, H]
            shapes[p + "self_attn.o_proj.weight"] = [H, self.nh * hd]
            if self.qkv_bias:
                shapes[p + "self_attn.q_proj.bias"] = [self.nh * hd]
                shapes[p + "self_attn.k_proj.bias"] = [self.nkv * hd]
                shapes[p + "self_attn.v_proj.bias"] = [self.nkv * hd]
            if self.o_bias:
                shapes[p + "self_attn.o_proj.bias"] = [H]
            if self.qk_norm:
                shapes[p + "self_attn.q_norm.weight"] = [hd]
                shapes[p + "self_attn.k_norm.weight"] = [hd]
            shapes[p + "mlp.gate_proj.weight"] = [intermediate, H]
            shapes[p + "mlp.up_proj.weight"] = [intermediate, H]
            shapes[p + "mlp.down_proj.weight"] = [H, intermediate]
            if self.mlp_bias:
                shapes[p + "mlp.gate_proj.bias"] = [intermediate]
                shapes[p + "mlp.up_proj.bias"] = [intermediate]
                shapes[p + "mlp.down_proj.bias"] = [H]
        return shapes


def check_weights(cfg, weights):
    """Every expected tensor present with its shape, nothing else."""
    arch = Arch(cfg)
    want = arch.expected_names(cfg["intermediate_size"])
    have = {k: list(v.shape) for k, v in weights.items()}
    if set(want) != set(have):
        raise ValueError(f"tensor names differ: missing {set(want) - set(have)}, extra {set(have) - set(want)}")
    for k in want:
        if want[k] != have[k]:
            raise ValueError(f"{k}: shape {have[k]}, expected {want[k]}")


# ---------------------------------------------------------------- batched torch path


def _rms_norm(x, w, eps):
    # x [..., d], w [d]; mean over the last axis
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w


def _rotary_tables(T, hd, theta, dtype):
    inv_freq = 1.0 / (theta ** (torch.arange(0, hd, 2, dtype=torch.float64) / hd))  # [hd/2]
    angles = torch.arange(T, dtype=torch.float64)[:, None] * inv_freq[None, :]  # [T, hd/2]
    emb = torch.cat([angles, angles], dim=-1)  # [T, hd]
    return emb.cos().to(dtype), emb.sin().to(dtype)


def _rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat([-x[..., half:], x[..., :half]], dim=-1)


def forward_torch(cfg, weights, ids, dtype=torch.float64, trace=None, lora=None):
    """ids: list of ints -> logits, torch [T, vocab] in `dtype` (float64 for the golden values;
    float32 only to measure how far an f32 implementation lands from them).

    lora: optional dict, linear module name (e.g. "model.layers.0.self_attn.q_proj") -> (A, B,
    scaling), torch tensors A [r, in], B [out, r]: that layer computes x W^T (+b) + scaling *
    (x A^T) B^T, the LoRA update as the paper and PEFT define it (gradients flow into A and B).

    trace: optional dict that receives intermediate values per layer l, each [T, width]:
    "layers.{l}.q" / ".k" (after q/k norm and rotary, heads concatenated), ".attn" (attention
    output before o_proj), ".out" (the residual stream after the layer); and "final_norm"."""
    a = Arch(cfg)
    W = {k: torch.from_numpy(np.asarray(v, dtype=np.float64)).to(dtype) for k, v in weights.items()}

    def linear(x, name, bias):
        y = x @ W[name + ".weight"].T
        if bias:
            y = y + W[name + ".bias"]
        if lora is not None and name in lora:
            A, B, scaling = lora[name]
            y = y + scaling * ((x @ A.T) @ B.T)
        return y

    T = len(ids)
    x = W["model.embed_tokens.weight"][torch.tensor(ids, dtype=torch.long)]  # [T, H]
    cos, sin = _rotary_tables(T, a.hd, a.theta, dtype)
    cos, sin = cos[:, None, :], sin[:, None, :]  # broadcast over heads
    causal = torch.ones(T, T, dtype=torch.bool).tril()  # [query, key]
    rep = a.nh // a.nkv
    for l in range(a.layers):
        p = f"model.layers.{l}."
        h = _rms_norm(x, W[p + "input_layernorm.weight"], a.eps)
        q = linear(h, p + "self_attn.q_proj", a.qkv_bias).view(T, a.nh, a.hd)
        k = linear(h, p + "self_attn.k_proj", a.qkv_bias).view(T, a.nkv, a.hd)
        v = linear(h, p + "self_attn.v_proj", a.qkv_bias).view(T, a.nkv, a.hd)
        if a.qk_norm:
            q = _rms_norm(q, W[p + "self_attn.q_norm.weight"], a.eps)
            k = _rms_norm(k, W[p + "self_attn.k_norm.weight"], a.eps)
        q = q * cos + _rotate_half(q) * sin
        k = k * cos + _rotate_half(k) * sin
        if trace is not None:
            trace[f"layers.{l}.q"] = q.reshape(T, a.nh * a.hd).clone()
            trace[f"layers.{l}.k"] = k.reshape(T, a.nkv * a.hd).clone()
        k = k.repeat_interleave(rep, dim=1)  # [T, nh, hd]: kv head j serves query heads j*rep..
        v = v.repeat_interleave(rep, dim=1)
        scores = torch.einsum("qhd,khd->hqk", q, k) / math.sqrt(a.hd)  # [nh, T, T]
        scores = scores.masked_fill(~causal, float("-inf"))
        probs = torch.softmax(scores, dim=-1)
        o = torch.einsum("hqk,khd->qhd", probs, v).reshape(T, a.nh * a.hd)
        if trace is not None:
            trace[f"layers.{l}.attn"] = o.clone()
        x = x + linear(o, p + "self_attn.o_proj", a.o_bias)
        h = _rms_norm(x, W[p + "post_attention_layernorm.weight"], a.eps)
        gate = linear(h, p + "mlp.gate_proj", a.mlp_bias)
        up = linear(h, p + "mlp.up_proj", a.mlp_bias)
        x = x + linear(torch.nn.functional.silu(gate) * up, p + "mlp.down_proj", a.mlp_bias)
        if trace is not None:
            trace[f"layers.{l}.out"] = x.clone()
    x = _rms_norm(x, W["model.norm.weight"], a.eps)
    if trace is not None:
        trace["final_norm"] = x.clone()
    head = W["model.embed_tokens.weight"] if a.tied else W["lm_head.weight"]
    return x @ head.T


# ---------------------------------------------------------------- explicit-loop numpy path


def _rms_vec(v, w, eps):
    ms = math.fsum(float(e) * float(e) for e in v) / len(v)
    return v / math.sqrt(ms + eps) * w


def _rotate_vec(v, pos, theta):
    """Rotate pairs (i, i + hd/2) by pos * theta^(-2i/hd), one pair at a time."""
    hd = len(v)
    out = np.empty(hd)
    for i in range(hd // 2):
        ang = pos * theta ** (-2.0 * i / hd)
        c, s = math.cos(ang), math.sin(ang)
        a, b = v[i], v[i + hd // 2]
        out[i] = a * c - b * s
        out[i + hd // 2] = b * c + a * s
    return out


def forward_loops(cfg, weights, ids, trace=None):
    """Same function, one position and one head at a time -> numpy float64 [T, vocab].
    trace: as in forward_torch (numpy arrays)."""
    a = Arch(cfg)
    W = {k: np.asarray(v, dtype=np.float64) for k, v in weights.items()}
    T = len(ids)
    xs = [W["model.embed_tokens.weight"][i].copy() for i in ids]

    def lin(vec, name, bias):
        y = W[name + ".weight"].dot(vec)
        return y + W[name + ".bias"] if bias else y

    for l in range(a.layers):
        p = f"model.layers.{l}."
        qs, ks, vs = [], [], []
        for t in range(T):
            h = _rms_vec(xs[t], W[p + "input_layernorm.weight"], a.eps)
            q = lin(h, p + "self_attn.q_proj", a.qkv_bias)
            k = lin(h, p + "self_attn.k_proj", a.qkv_bias)
            v = lin(h, p + "self_attn.v_proj", a.qkv_bias)
            qh = [q[j * a.hd : (j + 1) * a.hd] for j in range(a.nh)]
            kh = [k[j * a.hd : (j + 1) * a.hd] for j in range(a.nkv)]
            vh = [v[j * a.hd : (j + 1) * a.hd] for j in range(a.nkv)]
            if a.qk_norm:
                qh = [_rms_vec(e, W[p + "self_attn.q_norm.weight"], a.eps) for e in qh]
                kh = [_rms_vec(e, W[p + "self_attn.k_norm.weight"], a.eps) for e in kh]
            qs.append([_rotate_vec(e, t, a.theta) for e in qh])
            ks.append([_rotate_vec(e, t, a.theta) for e in kh])
            vs.append(vh)
        if trace is not None:
            trace[f"layers.{l}.q"] = np.stack([np.concatenate(e) for e in qs])
            trace[f"layers.{l}.k"] = np.stack([np.concatenate(e) for e in ks])
            trace[f"layers.{l}.attn"] = []
        new_xs = []
        for t in range(T):
            heads = []
            for j in range(a.nh):
                g = j // (a.nh // a.nkv)
                sc = [float(qs[t][j].dot(ks[s][g])) / math.sqrt(a.hd) for s in range(t + 1)]
                m = max(sc)
                ex = [math.exp(e - m) for e in sc]
                z = math.fsum(ex)
                o = np.zeros(a.hd)
                for s in range(t + 1):
                    o += (ex[s] / z) * vs[s][g]
                heads.append(o)
            if trace is not None:
                trace[f"layers.{l}.attn"].append(np.concatenate(heads))
            x = xs[t] + lin(np.concatenate(heads), p + "self_attn.o_proj", a.o_bias)
            h = _rms_vec(x, W[p + "post_attention_layernorm.weight"], a.eps)
            gate = lin(h, p + "mlp.gate_proj", a.mlp_bias)
            up = lin(h, p + "mlp.up_proj", a.mlp_bias)
            act = np.array([g_ / (1.0 + math.exp(-g_)) for g_ in gate]) * up
            new_xs.append(x + lin(act, p + "mlp.down_proj", a.mlp_bias))
        xs = new_xs
        if trace is not None:
            trace[f"layers.{l}.attn"] = np.stack(trace[f"layers.{l}.attn"])
            trace[f"layers.{l}.out"] = np.stack(xs)
    head = W["model.embed_tokens.weight"] if a.tied else W["lm_head.weight"]
    normed = [_rms_vec(x, W["model.norm.weight"], a.eps) for x in xs]
    if trace is not None:
        trace["final_norm"] = np.stack(normed)
    return np.stack([head.dot(x) for x in normed])


def log_softmax_loops(row):
    """log p over one logits row, by max-shifted log-sum-exp with an exact sum."""
    m = max(float(e) for e in row)
    lse = m + math.log(math.fsum(math.exp(float(e) - m) for e in row))
    return np.array([float(e) - lse for e in row])
