"""A PEFT LoRA adapter for tests/fixtures/hf/llama-tiny and its golden numbers.

Written from the LoRA paper (Hu et al. 2021, "LoRA: Low-Rank Adaptation of Large Language
Models") and PEFT's documented file layout, not from the lab's TypeScript:

  a targeted nn.Linear y = x W^T (+ b) becomes y = x W^T (+ b) + (lora_alpha / r) * (x A^T) B^T
  A = lora_A.weight [r, in], B = lora_B.weight [out, r]; PEFT initialises A Kaiming-uniform with
  a = sqrt(5) (bound = gain * sqrt(3 / fan_in), gain = sqrt(2 / (1 + a^2)), so 1 / sqrt(in)) and
  B to zeros. "all-linear" on a causal LM: every linear layer of the decoder blocks (q/k/v/o_proj,
  gate/up/down_proj), never the output head.

  adapter_config.json: PEFT's LoraConfig fields as save_pretrained writes them (sorted keys,
  indent 2); adapter_model.safetensors: the tensors under
  base_model.model.<module path>.lora_A.weight / .lora_B.weight (the adapter name "default" is
  not part of the saved names).

B is NOT zero here (as after training), so the adapter changes the model's outputs. Writes
tests/fixtures/hf/llama-tiny-lora/ (adapter_config.json, adapter_model.safetensors, golden.json);
golden.json holds:

  score: for the base fixture's golden sequences, the log-probs with the adapter applied (and,
    for comparison, without: the adapter must move them).
  grpo: ONE LoRA-GRPO step on fixed completions. logp[b, t] = log p(ids[b, t+1] | ids[b, <=t]);
    loss = -sum_{b,t} mask * A_b * exp(logp - logp_old) / sum mask with logp_old = logp detached
    (the first step: ratio 1), the token-mean aggregation; the adapter gradients (autograd); the
    adapters after one torch.optim.AdamW step (lr 1e-3, betas 0.9 / 0.999, eps 1e-8,
    weight_decay 0); and the log-probs under the updated adapters.

Self-checks (it stops on a failure): the adapter forward equals the explicit-loop forward of
forward.py on merged weights W + scaling * B A (a second path, <= 1e-10); the file reads back
to the written tensors; the adapter moves the log-probs by > 0.05 somewhere.

Run: /usr/bin/python3 scripts/reference/make_lora_fixture.py  (after make_hf_fixtures.py)
"""

import json
import math
import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import forward  # noqa: E402
import safetensors_io  # noqa: E402
from make_hf_fixtures import read_model, write_json  # noqa: E402

torch.set_default_dtype(torch.float64)

REPO = os.path.dirname(os.path.dirname(HERE))
BASE = os.path.join(REPO, "tests", "fixtures", "hf", "llama-tiny")
OUT = os.path.join(REPO, "tests", "fixtures", "hf", "llama-tiny-lora")

R = 4
ALPHA = 8
SCALING = ALPHA / R
ATTENTION = ["q_proj", "k_proj", "v_proj", "o_proj"]
MLP = ["gate_proj", "up_proj", "down_proj"]
SEED = 4101
B_STD = 0.1
GRAD_DIGITS = 12

ADAM = {"lr": 1e-3, "betas": [0.9, 0.999], "eps": 1e-8, "weight_decay": 0.0}


def module_path(layer, module):
    group = "self_attn" if module in ATTENTION else "mlp"
    return f"model.layers.{layer}.{group}.{module}"


def peft_name(path, which):
    return f"base_model.model.{path}.lora_{which}.weight"


def adapter_config():
    """PEFT LoraConfig as save_pretrained writes it, for this adapter."""
    return {
        "alpha_pattern": {},
        "auto_mapping": None,
        "base_model_name_or_path": "llama-tiny",
        "bias": "none",
        "eva_config": None,
        "exclude_modules": None,
        "fan_in_fan_out": False,
        "inference_mode": True,
        "init_lora_weights": True,
        "layer_replication": None,
        "layers_pattern": None,
        "layers_to_transform": None,
        "loftq_config": {},
        "lora_alpha": ALPHA,
        "lora_bias": False,
        "lora_dropout": 0.0,
        "megatron_config": None,
        "megatron_core": "megatron.core",
        "modules_to_save": None,
        "peft_type": "LORA",
        "r": R,
        "rank_pattern": {},
        "revision": None,
        # PEFT expands "all-linear" to the module names it matched; sorted here for stable bytes.
        "target_modules": sorted(ATTENTION + MLP),
        "task_type": "CAUSAL_LM",
        "use_dora": False,
        "use_rslora": False,
    }


def make_adapter(cfg, weights):
    """PEFT name -> float64 array: A as PEFT initialises it, B random (non-zero)."""
    rng = np.random.default_rng(SEED)
    out = {}
    for layer in range(cfg["num_hidden_layers"]):
        for module in ATTENTION + MLP:
            path = module_path(layer, module)
            fan_out, fan_in = weights[path + ".weight"].shape
            a = math.sqrt(5.0)
            bound = math.sqrt(2.0 / (1.0 + a * a)) * math.sqrt(3.0 / fan_in)
            out[peft_name(path, "A")] = rng.uniform(-bound, bound, (R, fan_in))
            out[peft_name(path, "B")] = B_STD * rng.standard_normal((fan_out, R))
    return out


def lora_modules(adapter):
    """PEFT name -> torch tensor (leaf, requiring grad), and the forward's module -> (A, B, s)."""
    params = {n: torch.tensor(v, requires_grad=True) for n, v in adapter.items()}
    modules = {}
    for name in params:
        if name.endswith(".lora_A.weight"):
            path = name[len("base_model.model.") : -len(".lora_A.weight")]
            modules[path] = (params[name], params[peft_name(path, "B")], SCALING)
    return params, modules


def logprobs_of(cfg, weights, ids, modules):
    """log p(ids[t + 1] | ids[<= t]) for t < T - 1, torch [T - 1]."""
    logits = forward.forward_torch(cfg, weights, ids, lora=modules)
    logp = torch.log_softmax(logits, dim=-1)
    return logp[torch.arange(len(ids) - 1), torch.tensor(ids[1:], dtype=torch.long)]


def merged_weights(cfg, weights, adapter):
    """W + scaling * B A for every adapted layer: the same function without adapters."""
    merged = dict(weights)
    for layer in range(cfg["num_hidden_layers"]):
        for module in ATTENTION + MLP:
            path = module_path(layer, module)
            a, b = adapter[peft_name(path, "A")], adapter[peft_name(path, "B")]
            merged[path + ".weight"] = weights[path + ".weight"] + SCALING * (b @ a)
    return merged


def round_sig(x, digits=GRAD_DIGITS):
    return float(f"{x:.{digits - 1}e}")


def flat(tensor):
    return [round_sig(float(v)) for v in np.asarray(tensor, dtype=np.float64).reshape(-1)]


def score_block(cfg, weights, adapter, sequences):
    _, modules = lora_modules(adapter)
    merged = merged_weights(cfg, weights, adapter)
    out, worst_merge, moved = [], 0.0, 0.0
    for ids in sequences:
        with torch.no_grad():
            lp = logprobs_of(cfg, weights, ids, modules)
            base = logprobs_of(cfg, weights, ids, None)
            logits = forward.forward_torch(cfg, weights, ids, lora=modules).numpy()
        loops = forward.forward_loops(cfg, merged, ids)
        worst_merge = max(worst_merge, float(np.max(np.abs(loops - logits))))
        moved = max(moved, float((lp - base).abs().max()))
        out.append({"ids": ids, "logprobs": lp.tolist(), "base_logprobs": base.tolist()})
    if worst_merge > 1e-10:
        raise RuntimeError(f"adapter forward and merged-weight loops differ by {worst_merge}")
    if moved < 0.05:
        raise RuntimeError(f"the adapter moves the log-probs by only {moved}")
    return out, {"adapter_vs_merged_loops_max_logit_diff": worst_merge, "max_logprob_shift": moved}


def grpo_case(vocab_ids):
    """Three prompt + completion rows of 10 tokens; row 1's completion is 4 tokens then padding."""
    rng = np.random.default_rng(SEED + 1)
    T, prompt = 10, 4
    lengths = [6, 4, 6]
    ids = [[int(i) for i in rng.integers(0, vocab_ids, T)] for _ in lengths]
    # mask[b][t] scores ids[b][t + 1]: completion tokens sit at positions prompt .. prompt + n - 1.
    mask = [[1 if prompt <= t + 1 < prompt + n else 0 for t in range(T - 1)] for n in lengths]
    return ids, mask, [1.0, -0.5, 0.75]


def grpo_block(cfg, weights, adapter):
    ids, mask, advantages = grpo_case(379)  # ordinary tokens only (379+ are special)
    params, modules = lora_modules(adapter)
    names = sorted(params)
    logp = torch.stack([logprobs_of(cfg, weights, row, modules) for row in ids])  # [B, T - 1]
    m = torch.tensor(mask, dtype=torch.float64)
    adv = torch.tensor(advantages)[:, None]
    ratio = torch.exp(logp - logp.detach())
    loss = -(m * adv * ratio).sum() / m.sum()
    loss.backward()
    grads = {n: params[n].grad.detach().clone() for n in names}
    opt = torch.optim.AdamW(
        [params[n] for n in names],
        lr=ADAM["lr"],
        betas=tuple(ADAM["betas"]),
        eps=ADAM["eps"],
        weight_decay=ADAM["weight_decay"],
    )
    opt.step()
    with torch.no_grad():
        after = torch.stack([logprobs_of(cfg, weights, row, modules) for row in ids])
    return {
        "ids": ids,
        "mask": mask,
        "advantages": advantages,
        "logprobs": logp.detach().tolist(),
        "loss": float(loss),
        "adamw": ADAM,
        "grads": {n: flat(grads[n]) for n in names},
        "updated": {n: flat(params[n].detach()) for n in names},
        "logprobs_after": after.tolist(),
    }


def main():
    with open(os.path.join(BASE, "config.json")) as f:
        cfg = json.load(f)
    with open(os.path.join(BASE, "golden.json")) as f:
        base_golden = json.load(f)
    weights = read_model(BASE)
    forward.check_weights(cfg, weights)
    os.makedirs(OUT, exist_ok=True)

    adapter = make_adapter(cfg, weights)
    names = sorted(adapter)
    safetensors_io.write_file(
        os.path.join(OUT, "adapter_model.safetensors"), [(n, adapter[n]) for n in names], "F32"
    )
    # Golden numbers from what the file stores (float32-rounded), read back.
    stored, dtypes, meta = safetensors_io.read_file(os.path.join(OUT, "adapter_model.safetensors"))
    if sorted(stored) != names or set(dtypes.values()) != {"F32"} or meta != {"format": "pt"}:
        raise RuntimeError("adapter file did not read back as written")
    for n in names:
        if np.max(np.abs(stored[n] - adapter[n].astype(np.float32))) != 0:
            raise RuntimeError(f"{n}: stored values differ from the float32 rounding")
    with open(os.path.join(OUT, "adapter_config.json"), "w", encoding="utf-8", newline="\n") as f:
        f.write(json.dumps(adapter_config(), indent=2, sort_keys=True) + "\n")

    sequences = [s["ids"] for s in base_golden["sequences"] if len(s["ids"]) >= 2]
    score, checks = score_block(cfg, weights, stored, sequences)
    grpo = grpo_block(cfg, weights, stored)
    golden = {
        "base_model": "llama-tiny",
        "r": R,
        "lora_alpha": ALPHA,
        "scaling": SCALING,
        "score": score,
        "grpo": grpo,
        "checks": checks,
    }
    write_json(os.path.join(OUT, "golden.json"), golden)
    print(f"llama-tiny-lora: {len(names)} tensors, loss {grpo['loss']:.6f}, checks {checks}")


if __name__ == "__main__":
    main()
