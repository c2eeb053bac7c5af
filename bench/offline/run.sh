#!/bin/bash
# On the GPU machine, from a copy of the repository with .offline/ beside it (see pack.sh): the
# GPU-in-Node tests, the kernel bench, the learning bench and the lessons' widgets, on the GPU
# through Dawn. Logs and results go to $OUT (default /tmp/offline-out); each stage has its own
# time limit, so a stage cut short still leaves its log.
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/offline-out}
mkdir -p "$OUT"
export NO_COLOR=1 FORCE_COLOR=0
T0=$(date +%s)
stamp() { echo "[$(($(date +%s) - T0)) s] $*"; }

. bench/offline/setup.sh || exit 3

stamp "GPU-in-Node tests"
timeout 120 node node_modules/vitest/vitest.mjs run --project gpu-node > "$OUT/tests.txt" 2>&1
echo "exit $?" >> "$OUT/tests.txt"
grep -E "FAIL|Test Files|Tests  " "$OUT/tests.txt"

stamp "kernel bench (the RL math suites, against the peers)"
timeout 200 node scripts/bench.mjs --node-only \
  --suites=token-logprobs,log-softmax,policy-loss,gae,whiten,kl-loss,value-loss > "$OUT/bench.txt" 2>&1
echo "exit $?" >> "$OUT/bench.txt"

stamp "kernel bench (training steps and generation)"
timeout 100 node scripts/bench.mjs --node-only --suites=policy-step,grpo,generation \
  > "$OUT/bench-training.txt" 2>&1
echo "exit $?" >> "$OUT/bench-training.txt"

stamp "learning bench: GRPO vs PPO on reverse"
timeout 200 node scripts/run-ts.mjs bench/learn/run.ts --only=token --backend=webgpu > "$OUT/learn.txt" 2>&1
echo "exit $?" >> "$OUT/learn.txt"

stamp "the lessons' language-model widgets"
timeout 120 node scripts/run-ts.mjs bench/learn/run.ts --only=lessons --backend=webgpu \
  > "$OUT/lessons.txt" 2>&1
echo "exit $?" >> "$OUT/lessons.txt"

tar -cf "$OUT/results.tar" bench/results
stamp "done: logs and bench/results in $OUT"
