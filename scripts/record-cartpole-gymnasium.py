#!/usr/bin/env python3
"""Records CartPole-v1 episodes from gymnasium's own code for tests/fixtures/cartpole-gymnasium.json.

    python3 scripts/record-cartpole-gymnasium.py GYMNASIUM_GIT_DIR [OUT.json]

GYMNASIUM_GIT_DIR is a git directory of the Farama-Foundation/Gymnasium repository (a bare clone
works). The script exports its gymnasium/ package at HEAD into a temporary folder and runs
`gymnasium.make("CartPole-v1")` from there: CartPoleEnv inside gymnasium's TimeLimit,
OrderEnforcing and PassiveEnvChecker wrappers, so every number in the fixture is gymnasium's
arithmetic (float64 numpy state, np.sin/np.cos, float32 observations). Needs python3 with numpy;
the only stand-in is an empty module for farama_notifications, an optional dependency that
gymnasium imports only to print notices.

The committed fixture was recorded from Gymnasium commit
3f0476a8cc224dcce2167cc4b6971ae0f04d5cfc (gymnasium 1.4.0, 2026-08-19) with CPython 3.11.7 and
numpy 2.4.6 on x86-64 Linux (glibc 2.36, whose sin/cos numpy calls: another C library, macOS's
or musl, rounds some of them differently, and its episodes drift from these). The fixture names
them too.

Episodes: gymnasium's own seeded resets; the actions come from simple controllers that look at
gymnasium's observations (two balance all 500 steps, one more does with random pushes mixed in,
one swings the pole to ±0.15 rad for 500 steps), a random policy and a constant push that end
early. A replay in the lab starts from the recorded reset state (the lab's reset draws from its
own random stream, not numpy's PCG64) and must reproduce every observation, reward and end flag,
and the final float64 state, bit for bit.
"""

import json
import platform
import subprocess
import sys
import tempfile
import types
from pathlib import Path


def export_package(git_dir: str, into: Path) -> str:
    """Writes gymnasium/ at HEAD of git_dir under `into`; returns the commit."""
    git = ["git", f"--git-dir={git_dir}"]
    commit = subprocess.run(
        [*git, "rev-parse", "HEAD"], check=True, capture_output=True, text=True
    ).stdout.strip()
    files = subprocess.run(
        [*git, "ls-tree", "-r", "--name-only", commit, "gymnasium"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    for name in files:
        if not name.endswith(".py"):
            continue
        data = subprocess.run(
            [*git, "show", f"{commit}:{name}"], check=True, capture_output=True
        ).stdout
        path = into / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return commit


def f32(value) -> float:
    """A float32 as the shortest decimal that reads back to it in float32."""
    import numpy as np

    return float(str(np.float32(value)))


def record(gym, np, seed: int, policy: str, note: str) -> dict:
    env = gym.make("CartPole-v1")
    obs, _ = env.reset(seed=seed)
    reset_state = [float(v) for v in env.unwrapped.state]
    rng = np.random.default_rng(1000 + seed)
    actions, observations, rewards, terminated, truncated = [], [], [], [], []
    while True:
        x, x_dot, theta, theta_dot = (float(v) for v in obs)
        if policy == "balance":
            action = int(theta + 0.5 * theta_dot + 0.05 * x + 0.1 * x_dot > 0)
        elif policy == "balance-noisy":
            action = int(theta + 0.5 * theta_dot + 0.05 * x + 0.1 * x_dot > 0)
            if rng.random() < 0.1:
                action = int(rng.integers(2))
        elif policy == "swing":
            # Leans the pole to ±0.15 rad, switching every 30 steps: large angles, where
            # np.sin/np.cos and V8's Math.sin/Math.cos differ in the last bit most often.
            target = 0.15 if (len(actions) // 30) % 2 == 0 else -0.15
            target -= 0.02 * x + 0.05 * x_dot
            action = int(theta - target + 0.5 * theta_dot > 0)
        elif policy == "random":
            action = int(rng.integers(2))
        else:  # "right"
            action = 1
        obs, reward, term, trunc, _ = env.step(action)
        actions.append(action)
        observations.append([f32(v) for v in obs])
        rewards.append(float(reward))
        terminated.append(bool(term))
        truncated.append(bool(trunc))
        if term or trunc:
            break
    return {
        "note": note,
        "seed": seed,
        "policy": policy,
        "resetState": reset_state,
        "resetObservation": [f32(v) for v in np.array(reset_state, dtype=np.float32)],
        "actions": actions,
        "observations": observations,
        "rewards": rewards,
        "terminated": terminated,
        "truncated": truncated,
        "finalState": [float(v) for v in env.unwrapped.state],
    }


def bound(value) -> float | str:
    """A space bound; JSON has no infinity, so ±inf is written as the string JS's Number() reads."""
    value = float(value)
    if value == float("inf"):
        return "Infinity"
    if value == float("-inf"):
        return "-Infinity"
    return value


def trig_samples(np) -> list:
    """Angles in CartPole's range with numpy's sin and cos, as float64."""
    rng = np.random.default_rng(7)
    xs = np.concatenate([rng.uniform(-0.22, 0.22, 300), rng.uniform(-0.855, 0.855, 100)])
    return [[float(x), float(np.sin(x)), float(np.cos(x))] for x in xs]


def main() -> int:
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    out = Path(sys.argv[2] if len(sys.argv) > 2 else "tests/fixtures/cartpole-gymnasium.json")
    with tempfile.TemporaryDirectory() as tmp:
        commit = export_package(sys.argv[1], Path(tmp))
        sys.path.insert(0, tmp)
        # Optional dependency, used only for notices; absent from Debian.
        sys.modules.setdefault("farama_notifications", types.ModuleType("farama_notifications"))
        import numpy as np

        import gymnasium as gym

        episodes = [
            record(gym, np, 0, "balance", "balanced: truncated at 500"),
            record(gym, np, 1, "balance-noisy", "balanced with 10% random pushes"),
            record(gym, np, 2, "balance", "balanced: truncated at 500"),
            record(gym, np, 5, "swing", "swinging to ±0.15 rad: truncated at 500"),
            record(gym, np, 3, "random", "random actions: the pole falls"),
            record(gym, np, 4, "right", "always push right: the pole falls"),
        ]
        data = {
            "source": {
                "repository": "Farama-Foundation/Gymnasium",
                "commit": commit,
                "gymnasium": gym.__version__,
                "numpy": np.__version__,
                "python": platform.python_version(),
                "machine": f"{platform.system()} {platform.machine()} {platform.libc_ver()}",
                "env": "gymnasium.make('CartPole-v1')",
                "script": "scripts/record-cartpole-gymnasium.py",
            },
            "observationSpace": {
                "low": [bound(v) for v in gym.make("CartPole-v1").observation_space.low],
                "high": [bound(v) for v in gym.make("CartPole-v1").observation_space.high],
            },
            "episodes": episodes,
            "trig": trig_samples(np),
        }
    out.write_text(json.dumps(data, separators=(",", ":"), allow_nan=False) + "\n")
    for e in episodes:
        print(f"seed {e['seed']} {e['policy']}: {len(e['actions'])} steps, truncated={e['truncated'][-1]}")
    print(f"wrote {out} from gymnasium commit {commit}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
