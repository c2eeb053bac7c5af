/**
 * `npm run train -- --model=DIR --backend=webgpu`: LoRA-GRPO of the shipped tiny chat model on the
 * GPU (src/models/hf/llama-lm-gpu.ts) follows the CPU's run of the same seed — with the base
 * stored as f32 and each step in micro-batches, the same sampled answers, rewards and losses at
 * every update, and adapters equal to f32 rounding; with f16 storage (the default) it trains too
 * and says so, with the step's memory. Node only (Dawn): the
 * CLI reads files.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { loadLmAdapter, loadLmModel } from '../../../src/cli/lm-model';
import { main as train } from '../../../src/cli/train';
import { testGpu } from '../../support/gpu';

const gpu = await testGpu();
const MODEL = 'public/models/hf/tiny-chat';
const RUN = [
  `--model=${MODEL}`,
  '--task=addition',
  '--max-digits=2',
  '--reverse-answer',
  '--lora-r=4',
  '--lr=5e-3',
  '--prompts-per-update=2',
  '--group-size=4',
  '--log-every=1',
  '--seed=3',
  // The final greedy evaluation (256 prompts) is not what these tests compare.
  '--eval-samples=0',
];

/** Trains with `flags`; returns the printed lines and the adapter written. */
async function run(flags: string[], updates = 2) {
  const out = join(mkdtempSync(join(tmpdir(), 'adapter-')), 'a');
  const log = vi.spyOn(console, 'log').mockImplementation(() => {});
  try {
    const argv = [...RUN, `--updates=${updates}`, ...flags, `--adapter-out=${out}`];
    expect(await train(argv)).toBe(0);
    const lines = log.mock.calls.map((c) => String(c[0]));
    const { model } = await loadLmModel(MODEL);
    return { lines, adapter: await loadLmAdapter(out, model.spec) };
  } finally {
    log.mockRestore();
  }
}

/** The per-update progress lines (metrics printed to 3 decimals). */
const progress = (lines: string[]) => lines.filter((l) => /^\[#*-*\] \d+\/\d+ /.test(l));

describe.skipIf(!gpu)('npm run train -- --model --backend=webgpu', () => {
  it('with f32 storage follows the CPU run: the same metrics at every update, the same adapters', async () => {
    const cpu = await run(['--backend=cpu']);
    // In micro-batches of 3 of its 8 sequences (3, 3, 2): the same update.
    const webgpu = await run(['--backend=webgpu', '--storage=f32', '--micro-batch=3']);
    expect(webgpu.lines[0]).toMatch(
      /on WebGPU — .*, base stored as f32, 3 sequences at a time; a step needs [\d.]+ [kM]B \(activations/,
    );
    expect(progress(cpu.lines)).toHaveLength(2);
    expect(progress(webgpu.lines)).toEqual(progress(cpu.lines));
    const a = webgpu.adapter.params;
    const b = cpu.adapter.params;
    let worst = 0;
    for (let i = 0; i < a.length; i++) worst = Math.max(worst, Math.abs(a[i]! - b[i]!));
    expect(worst).toBeLessThan(1e-5);
    // Trained: B moved from PEFT's zeros.
    const { layout } = webgpu.adapter.group;
    const name = 'base_model.model.model.layers.0.self_attn.q_proj.lora_B.weight';
    expect(layout.view(a, name).some((x) => x !== 0)).toBe(true);
  }, 180_000);

  it('trains with the base stored as f16 by default, and says so', async () => {
    const { lines, adapter } = await run(['--backend=webgpu'], 1);
    expect(lines[0]).toMatch(/base stored as f16; a step needs/);
    expect(progress(lines)).toHaveLength(1);
    expect(adapter.params.every(Number.isFinite)).toBe(true);
  }, 180_000);
});
