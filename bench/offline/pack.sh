#!/bin/bash
# Packs what the GPU test layer and the benches need on a Linux x86-64 machine that has a GPU
# driver but no package registry: this machine's Node binary and node_modules without the
# linters, other platforms' binaries, source maps and the onnxruntime-web builds the benches do
# not load. Run from the repository root after `npm ci`; writes .offline/pack.tar.xz (about 54 MB)
# and the Debian Vulkan loader and libglvnd packages into .offline/debs (Dawn reaches an NVIDIA
# driver's Vulkan ICD through them). Both paths are for the machine, not for git.
set -euo pipefail
cd "$(dirname "$0")/../.."
mkdir -p .offline/debs
staging=$(mktemp -d)
cp "$(command -v node)" "$staging/node"
tar -cf - \
  --exclude='*.map' \
  --exclude='node_modules/.cache' --exclude='node_modules/.vite' --exclude='node_modules/.vite-temp' \
  --exclude='node_modules/webgpu/dist/darwin-universal' --exclude='node_modules/webgpu/dist/linux-arm64' \
  --exclude='node_modules/webgpu/dist/win32-*' \
  --exclude='node_modules/typescript' --exclude='node_modules/prettier' \
  --exclude='node_modules/eslint' --exclude='node_modules/@eslint' \
  --exclude='node_modules/@typescript-eslint' --exclude='node_modules/typescript-eslint' \
  --exclude='node_modules/svelte-check' --exclude='node_modules/eslint-plugin-svelte' \
  --exclude='node_modules/svelte-eslint-parser' --exclude='node_modules/katex/dist/fonts' \
  --exclude='ort-wasm-simd-threaded.jsep.wasm' --exclude='ort-wasm-simd-threaded.jspi.wasm' \
  --exclude='ort-wasm-simd-threaded.wasm' \
  --exclude='node_modules/@tensorflow/*/dist/*.es2017*' \
  --exclude='node_modules/@tensorflow/*/dist/*.fesm*' \
  --exclude='node_modules/@tensorflow/*/dist/*.min.js' \
  node_modules -C "$staging" node | xz -T0 -8 > .offline/pack.tar.xz
rm -rf "$staging"
# Debian's packages unpack into / on the target (dpkg -x): the loader and the GL dispatch
# libraries the NVIDIA ICD (libGLX_nvidia) needs. With the loader alone the ICD fails with
# "Could not get 'vkCreateInstance'".
if command -v apt-get > /dev/null; then
  (cd .offline/debs && apt-get download libvulkan1 libegl1 libglvnd0 libopengl0 libgl1 libglx0 libgles2)
fi
ls -la .offline/pack.tar.xz .offline/debs
