#!/bin/bash
# On the GPU machine, after setup.sh has unpacked .offline/ (Node, packages) and the chromium
# parts of pack-chromium.sh have arrived (in .offline-chromium/ or, from an earlier call, in
# /tmp/chromium-parts/): unpacks Chromium, checks that it finds the hardware adapter, then runs
# the browser halves that need it — the lab's UI frame bench with runs on the GPU, the lessons'
# times on WebGPU and the kernel bench in Chromium — each under a time limit. Logs and results go
# to $OUT (default /tmp/offline-out).
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/offline-out}
mkdir -p "$OUT" /tmp/chromium-parts
export NO_COLOR=1 FORCE_COLOR=0
T0=$(date +%s)
stamp() { echo "[$(($(date +%s) - T0)) s] $*"; }

. bench/offline/setup.sh > /dev/null || exit 3
mv .offline-chromium/chromium.part-* /tmp/chromium-parts/ 2> /dev/null
if [ ! -x /opt/chromium-pack/chromium ]; then
  cat /tmp/chromium-parts/chromium.part-* | xz -d | tar -C /opt -xf - || exit 4
fi
export CHROMIUM_PATH=/opt/chromium-pack/chromium-packed
stamp "chromium unpacked"
# The first set of flags that gives headless Chromium the hardware adapter (probe-chromium.mjs).
if ! timeout 90 node bench/offline/probe-chromium.mjs; then
  stamp "Chromium found no hardware adapter"
  exit 5
fi
CHROMIUM_EXTRA_ARGS=$(cat /tmp/chromium-flags)
export CHROMIUM_EXTRA_ARGS

stamp "UI frames: four runs on WebGPU, and 100k points"
timeout "${UI_LIMIT:-110}" node scripts/bench.mjs --suites=ui-frames --ui-backend=webgpu > "$OUT/ui-webgpu.txt" 2>&1
echo "exit $?" >> "$OUT/ui-webgpu.txt"

stamp "lesson times on WebGPU"
timeout "${LESSONS_LIMIT:-150}" node scripts/bench.mjs --suites=lesson-times --backends=webgpu > "$OUT/lessons.txt" 2>&1
echo "exit $?" >> "$OUT/lessons.txt"

stamp "kernel bench in Chromium"
timeout "${KERNELS_LIMIT:-120}" node scripts/bench.mjs --browser-only --no-ui --suites=token-logprobs > "$OUT/bench-chromium.txt" 2>&1
echo "exit $?" >> "$OUT/bench-chromium.txt"

tar -cf "$OUT/results.tar" bench/results
stamp "done"
