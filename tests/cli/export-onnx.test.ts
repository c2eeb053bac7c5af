/**
 * `npm run export:onnx`'s flags and files: --verify is a switch, the output's folder is created,
 * and a run file given as the model is named as one (the ONNX round trip itself is tested in
 * tests/onnx/export-onnx-cli.test.ts).
 */
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { main } from '../../src/cli/export-onnx';
import { saveActorCritic } from '../../src/models/mlp-checkpoint';
import { CpuActorCritic, initAgent, ppoAgentLayout } from '../../src/models/mlp-policy';
import { importActorCriticOnnx } from '../../src/onnx/import';

async function checkpoint(dir: string): Promise<string> {
  const agent = ppoAgentLayout(4, 2);
  const input = join(dir, 'agent.ckpt');
  writeFileSync(
    input,
    await saveActorCritic(new CpuActorCritic(agent, initAgent(agent, 2)), { seed: 2 }),
  );
  return input;
}

describe('npm run export:onnx: flags and files', () => {
  it('refuses --verify=yes instead of skipping the check', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'export-'));
    const input = await checkpoint(dir);
    await expect(main([`--in=${input}`, '--verify=yes'])).rejects.toThrow(
      "--verify is a switch (--verify or --verify=false), got 'yes'",
    );
    expect(existsSync(join(dir, 'agent.onnx'))).toBe(false);
  });

  it('creates the output folder', async () => {
    vi.spyOn(console, 'log').mockImplementation(() => {});
    const dir = mkdtempSync(join(tmpdir(), 'export-'));
    const out = join(dir, 'new', 'folder', 'agent.onnx');
    expect(await main([`--in=${await checkpoint(dir)}`, `--out=${out}`])).toBe(0);
    expect(importActorCriticOnnx(new Uint8Array(readFileSync(out))).params.length).toBeGreaterThan(
      0,
    );
    vi.restoreAllMocks();
  });

  it('names a run file given as the model, and an --out that is a folder', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'export-'));
    const run = join(dir, 'run.json');
    writeFileSync(run, JSON.stringify({ format: 'agent-rl-lab/run', version: 1 }));
    await expect(main([`--in=${run}`])).rejects.toThrow(
      `--in=${run} is a run file, not a model; --in takes a checkpoint`,
    );
    await expect(main([`--in=${await checkpoint(dir)}`, `--out=${dir}`])).rejects.toThrow(
      `--out=${dir} is a folder`,
    );
    await expect(main(['--in'])).rejects.toThrow('--in needs a value');
  });
});
