"""Extracts the framework-config snapshot the export tests check against.

Run once per pinned release, from git checkouts of TRL and verl (no network, no install):

    python3 scripts/framework-snapshot/extract.py TRL_GIT_DIR VERL_GIT_DIR > tests/fixtures/framework-snapshot.json

It reads the sources at the pinned tags with `git show`, never a working tree, so the snapshot
records exactly the commit named in it. What it extracts:
- TRL: every dataclass field of the config classes the lab exports to (name, annotation, default)
  and, for string options, the values their docstrings list; the names each module exports.
- verl: every leaf key of the flattened trainer config (_generated_ppo_trainer.yaml) with its
  type and default; whether a worker or trainer reads the key's last segment outside the config
  classes (a key that nothing reads is ignored at run time); the values of the string options the
  lab sets, read from the code that dispatches on them.
"""
import ast
import json
import re
import subprocess
import sys

import yaml

TRL_TAG = "v1.9.0"
VERL_TAG = "v0.9.0"

TRL_CLASSES = {
    "GRPOConfig": ("trl/trainer/grpo_config.py", "trl"),
    "RLOOConfig": ("trl/trainer/rloo_config.py", "trl"),
    "DPOConfig": ("trl/trainer/dpo_config.py", "trl"),
    "PPOConfig": ("trl/experimental/ppo/ppo_config.py", "trl.experimental.ppo"),
}
TRL_MODULES = {
    "trl": "trl/__init__.py",
    "trl.experimental.ppo": "trl/experimental/ppo/__init__.py",
    "trl.rewards": "trl/rewards/__init__.py",
}
# transformers.TrainingArguments fields the exports set; TRL's configs inherit them through
# _BaseConfig. Recorded by hand (transformers is not part of this snapshot), with the defaults of
# the transformers release TRL v1.9 requires.
TRAINING_ARGUMENTS = {
    "output_dir": {"type": "str | None", "default": None},
    "per_device_train_batch_size": {"type": "int", "default": 8},
    "gradient_accumulation_steps": {"type": "int", "default": 1},
    "weight_decay": {"type": "float", "default": 0.0},
    "max_grad_norm": {"type": "float", "default": 1.0},
    "max_steps": {"type": "int", "default": -1},
    "seed": {"type": "int", "default": 42},
    "logging_steps": {"type": "float", "default": 500},
}


def git(repo, *args):
    return subprocess.run(["git", "-C", repo, *args], check=True, capture_output=True, text=True).stdout


def literal(node):
    try:
        return ast.literal_eval(node)
    except Exception:
        return ast.unparse(node)


def doc_choices(doc, name):
    """The quoted values a field's docstring paragraph offers ('Possible values', bullets)."""
    m = re.search(rf"^\s+{re.escape(name)} \(`[^\n]*\n((?:\s{{12,}}[^\n]*\n|\s*\n)*)", doc, re.M)
    if not m:
        return None
    text = m.group(1)
    found = []
    for bullet in re.finditer(r"^\s+- ((?:`[^`]+`(?: or )?)+)", text, re.M):
        found += re.findall(r"`[\"']([^`\"']+)[\"']`", bullet.group(1))
    inline = re.search(r"(?:Possible|Supported) values are:?((?:[^.]|\.(?!\s))*)", text)
    if inline and not found:
        found += re.findall(r"`[\"']([^`\"']+)[\"']`", inline.group(1))
    return sorted(set(found)) or None


def trl_class(repo, path, cls):
    src = git(repo, "show", f"{TRL_TAG}:{path}")
    tree = ast.parse(src)
    node = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls)
    doc = ast.get_docstring(node, clean=False) or ""
    fields = {}
    for item in node.body:
        if not (isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)):
            continue
        name = item.target.id
        ann = ast.unparse(item.annotation)
        default = None
        call = item.value
        if isinstance(call, ast.Call) and getattr(call.func, "id", "") == "field":
            for kw in call.keywords:
                if kw.arg == "default":
                    default = literal(kw.value)
                elif kw.arg == "default_factory":
                    body = kw.value.body if isinstance(kw.value, ast.Lambda) else kw.value
                    default = literal(body)
        elif call is not None:
            default = literal(call)
        entry = {"type": ann, "default": default}
        lit = re.fullmatch(r"Literal\[(.*)\](?: \| None)?", ann)
        choices = sorted(ast.literal_eval(f"[{lit.group(1)}]")) if lit else None
        if choices is None and re.search(r"\bstr\b", ann):
            choices = doc_choices(doc, name)
        if choices:
            entry["choices"] = choices
        fields[name] = entry
    return fields


def module_exports(repo, path):
    src = git(repo, "show", f"{TRL_TAG}:{path}")
    return sorted(set(re.findall(r"\"([A-Za-z_][A-Za-z0-9_]*)\"", src)))


def verl_annotations(repo):
    """Field annotations of verl's config dataclasses, bases merged in: {class: {field: annotation}}."""
    files = git(repo, "ls-tree", "-r", "--name-only", VERL_TAG, "verl/workers/config", "verl/trainer/config").split()
    own, bases = {}, {}
    for f in files:
        if not f.endswith(".py"):
            continue
        for node in ast.parse(git(repo, "show", f"{VERL_TAG}:{f}")).body:
            if isinstance(node, ast.ClassDef):
                own[node.name] = {
                    item.target.id: ast.unparse(item.annotation)
                    for item in node.body
                    if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)
                }
                bases[node.name] = [ast.unparse(b).split(".")[-1] for b in node.bases]

    def merged(name, seen=()):
        out = {}
        for base in bases.get(name, []):
            if base in own and base not in seen:
                out.update(merged(base, seen + (name,)))
        out.update(own.get(name, {}))
        return out

    return {name: merged(name) for name in own}


def flatten(node, prefix, out, annotations=None, fields=None):
    if isinstance(node, dict):
        target = str(node.get("_target_", "")).split(".")[-1]
        own = (annotations or {}).get(target)
        for key, value in node.items():
            if key.startswith("_"):
                continue
            flatten(value, f"{prefix}.{key}" if prefix else str(key), out, annotations, own)
        return
    kind = (
        "null" if node is None else "bool" if isinstance(node, bool) else "int" if isinstance(node, int)
        else "float" if isinstance(node, float) else "list" if isinstance(node, list) else "str"
    )
    if isinstance(node, str) and node.startswith("${"):
        kind = "interpolation"
    out[prefix] = {"type": kind, "default": node}
    # The dataclass annotation, where the section names its class: YAML writes some float
    # defaults as integers (entropy_coeff: 0), which the annotation corrects.
    annotation = (fields or {}).get(prefix.split(".")[-1])
    if annotation:
        out[prefix]["annotation"] = annotation


def verl_read_names(repo):
    """Last key segments that code outside the config declarations reads (attribute or get)."""
    files = git(repo, "ls-tree", "-r", "--name-only", VERL_TAG, "verl").split()
    read = set()
    for f in files:
        if not f.endswith(".py") or "/config/" in f or "/tests/" in f:
            continue
        src = git(repo, "show", f"{VERL_TAG}:{f}")
        read.update(re.findall(r"\.([a-z_][a-z0-9_]*)\b", src))
        read.update(re.findall(r"(?:get\(|\[)\"([a-z_][a-z0-9_]*)\"", src))
    return read


def choices_in(src, var):
    """String literals `var` is compared with (== "x", in ("x", "y"), in ["x", "y"])."""
    found = set(re.findall(rf"\b{var}\s*==\s*\"([^\"]+)\"", src))
    for group in re.findall(rf"\b{var}\s+in\s*[\(\[]([^\)\]]*)[\)\]]", src):
        found.update(re.findall(r"\"([^\"]+)\"", group))
    return sorted(found)


def main(trl, verl):
    snapshot = {
        "trl": {
            "release": TRL_TAG,
            "commit": git(trl, "rev-list", "-n", "1", TRL_TAG).strip(),
            "date": git(trl, "log", "-1", "--format=%cs", TRL_TAG).strip(),
            "modules": {m: module_exports(trl, p) for m, p in TRL_MODULES.items()},
            "classes": {
                cls: {"module": module, "fields": {**TRAINING_ARGUMENTS, **trl_class(trl, path, cls)}}
                for cls, (path, module) in TRL_CLASSES.items()
            },
            "inherited_by_hand": sorted(TRAINING_ARGUMENTS),
        }
    }
    cfg = yaml.safe_load(git(verl, "show", f"{VERL_TAG}:verl/trainer/config/_generated_ppo_trainer.yaml"))
    keys = {}
    flatten(cfg, "", keys, verl_annotations(verl))
    read = verl_read_names(verl)
    for key, entry in keys.items():
        entry["read"] = key.split(".")[-1] in read
    core = git(verl, "show", f"{VERL_TAG}:verl/trainer/ppo/core_algos.py")
    enum = core[core.index("class AdvantageEstimator") :]
    enum = enum[: enum.index("\n\n\n")]
    rollout = git(verl, "show", f"{VERL_TAG}:verl/workers/rollout/base.py")
    dapo = git(verl, "show", f"{VERL_TAG}:verl/experimental/reward_loop/reward_manager/dapo.py")
    managers = git(verl, "ls-tree", "--name-only", VERL_TAG, "verl/experimental/reward_loop/reward_manager/")
    choices = {
        "algorithm.adv_estimator": sorted(re.findall(r"= \"([a-z_]+)\"", enum)),
        "actor_rollout_ref.actor.loss_agg_mode": choices_in(core, "loss_agg_mode"),
        "critic.loss_agg_mode": choices_in(core, "loss_agg_mode"),
        "algorithm.kl_penalty": choices_in(core, "kl_penalty"),
        "actor_rollout_ref.actor.kl_loss_type": choices_in(core, "kl_penalty"),
        "actor_rollout_ref.rollout.name": sorted(set(re.findall(r"\(\"([a-z]+)\", \"async\"\)", rollout))),
        "reward.reward_manager.name": sorted(
            m.split("/")[-1][:-3] for m in managers.split() if m.endswith(".py") and not m.endswith("__init__.py")
        ),
    }
    for key, values in choices.items():
        keys[key]["choices"] = values
    # Keys the DAPO reward manager reads from reward.reward_kwargs, which the config does not
    # declare: Hydra adds them with a leading '+'.
    added = {}
    if "overlong_buffer_cfg" in dapo:
        for sub in ("enable", "len", "penalty_factor", "log"):
            if f"overlong_buffer_cfg.{sub}" in dapo:
                added[f"reward.reward_kwargs.overlong_buffer_cfg.{sub}"] = {
                    "type": "bool" if sub in ("enable", "log") else "int" if sub == "len" else "float",
                    "read": True,
                }
        if "get(\"max_resp_len\"" in dapo:
            added["reward.reward_kwargs.max_resp_len"] = {"type": "int", "read": True}
    snapshot["verl"] = {
        "release": VERL_TAG,
        "commit": git(verl, "rev-list", "-n", "1", VERL_TAG).strip(),
        "date": git(verl, "log", "-1", "--format=%cs", VERL_TAG).strip(),
        "keys": keys,
        "added_keys": added,
    }
    json.dump(snapshot, sys.stdout, indent=1, sort_keys=True, default=str)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
