import { svelte } from '@sveltejs/vite-plugin-svelte';
import { playwright } from '@vitest/browser-playwright';
import { defineConfig } from 'vitest/config';
import { CHROMIUM_ARGS, findChromium } from './scripts/chromium.mjs';
import { HeavyFirstSequencer } from './scripts/heavy-first-sequencer.ts';
import { useVulkanDriver } from './scripts/vulkan.mjs';

// Dawn in Node (the GPU-in-Node test layer) gets the machine's Vulkan driver, or SwiftShader's
// software one where there is none; the test workers inherit the choice. Said once per test run.
const vulkan = useVulkanDriver();
if (process.env.VITEST && !process.env.LAB_VULKAN_SAID) {
  // The config is read once per test project (and per run-ts process): one line is enough.
  process.env.LAB_VULKAN_SAID = '1';
  console.error(vulkan);
}

/**
 * GPU tests fail when no adapter is found. A developer without a driver may opt out with
 * ALLOW_NO_GPU=1 (the tests then skip with a loud message); CI never may.
 */
const gpuRequired = process.env.CI === 'true' || process.env.ALLOW_NO_GPU !== '1';

const gpuTests = ['tests/**/*.gpu.test.ts'];

/**
 * The GPU test files the browser layer runs beside its own (*.browser.test.ts). All of them run in
 * Node (Dawn on SwiftShader); Chromium's WebGPU is the same software driver behind its own Dawn,
 * so what the browser adds is its shader compiler and its validation. There every kernel compiles
 * into its pipeline (tests/gpu/kernels-compile.browser.test.ts); the RL ops, the nn kernels, the
 * real-model families' parity (forward, generation, LoRA, its training pass and one LoRA-GRPO
 * update against the independent reference) and the GPU worker run in full. The tiny GPT's and
 * the MLP's model-level files (compositions of kernels checked above) and the CLI's GPU files
 * (they read files) run in Node only.
 */
const browserGpuTests = [
  'tests/gpu/*.gpu.test.ts',
  'tests/gpu/nn/*.gpu.test.ts',
  'tests/gpu/models/llama-*.gpu.test.ts',
  'tests/gpu/models/lora-*.gpu.test.ts',
  'tests/gpu/worker/*.gpu.test.ts',
];

/** The CPU layer (Vitest in Node), run as two projects that share its workers: see below. */
const cpuLayer = {
  include: ['tests/**/*.test.ts'],
  exclude: [...gpuTests, 'tests/**/*.browser.test.ts', 'tests/e2e/**'],
  environment: 'node',
  // One worker per core. Vitest's default keeps one core free, which on a 2-core CI machine runs
  // every file one after another; these tests are single-threaded and CPU-bound, so a second
  // worker nearly halves the layer.
  maxWorkers: '100%',
  // Vitest's 5 s default sits near the time of the slower unit tests (model set-up, ESLint's
  // first lint) when the machine is busy; a hang still fails in 30 s.
  testTimeout: 30_000,
};

/** The CPU test files that replace a module with vi.mock (tests/lint/mocks.test.ts keeps this). */
const mockingTests = [
  'tests/cli/model-file.test.ts',
  'tests/cli/output-file.test.ts',
  'tests/cli/sft.test.ts',
  'tests/cli/train-endings.test.ts',
];

export default defineConfig({
  plugins: [svelte()],
  worker: { format: 'es' },
  // Pre-bundled up front: discovering them on first use makes Vite reload the page mid-test.
  optimizeDeps: { include: ['onnxruntime-web', 'onnxruntime-web/webgpu'] },
  build: {
    target: 'es2022',
    rolldownOptions: {
      output: {
        // KaTeX (its code is a third of the lesson page's) in a chunk of its own: loaded beside
        // the lesson page, and kept in the browser's cache when the app's code changes.
        codeSplitting: { groups: [{ name: 'katex', test: /node_modules[\\/]katex[\\/]/ }] },
      },
    },
  },
  test: {
    provide: { gpuRequired },
    sequence: { sequencer: HeavyFirstSequencer },
    projects: [
      {
        extends: true,
        test: {
          ...cpuLayer,
          name: 'cpu',
          exclude: [...cpuLayer.exclude, ...mockingTests],
          // A worker keeps the modules it loaded from one file to the next: without this, each of
          // the ~290 files loads the source graph afresh (about 100 s of the layer's CPU time).
          // The files that replace a module with vi.mock run in cpu-mocks below, where a mock
          // can neither miss a module cached by an earlier file nor leak into a later one.
          isolate: false,
        },
      },
      { extends: true, test: { ...cpuLayer, name: 'cpu-mocks', include: mockingTests } },
      {
        extends: true,
        test: {
          name: 'gpu-node',
          include: gpuTests,
          environment: 'node',
          // Dawn is a native addon: separate processes isolate it from the other layers.
          pool: 'forks',
          // One process keeps its modules, and so its one Dawn device, from file to file: loading
          // each file's graph and acquiring a device afresh cost ~45 s of the layer. No file here
          // mocks a module (tests/lint/mocks.test.ts).
          isolate: false,
          testTimeout: 60_000,
        },
      },
      {
        extends: true,
        test: {
          name: 'browser',
          include: [...browserGpuTests, 'tests/**/*.browser.test.ts'],
          testTimeout: 60_000,
          // One page for every file: its modules, its WebGPU device and the pipelines it compiled
          // carry over (loading each file in a page of its own cost ~40 s of the layer). No file
          // here mocks a module (tests/lint/mocks.test.ts).
          isolate: false,
          browser: {
            enabled: true,
            headless: true,
            screenshotFailures: false,
            provider: playwright({
              launchOptions: { executablePath: findChromium(), args: CHROMIUM_ARGS },
            }),
            instances: [{ browser: 'chromium' }],
          },
        },
      },
    ],
  },
});
