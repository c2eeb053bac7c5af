/**
 * `npm run export:onnx` end to end: a trained checkpoint (transformer, or MLP actor-critic) → .onnx
 * → onnxruntime-web agrees with our forward (--verify) and the import gives the weights back.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { main } from '../../src/cli/export-onnx';
import { encodeCheckpoint } from '../../src/models/checkpoint';
import { saveLanguageModel } from '../../src/models/lm-checkpoint';
import { CpuLanguageModel } from '../../src/models/lm-cpu';
import { saveActorCritic } from '../../src/models/mlp-checkpoint';
import { CpuActorCritic, initAgent, ppoAgentLayout } from '../../src/models/mlp-policy';
import { CharTokenizer } from '../../src/models/tokenizer';
import type { TransformerConfig } from '../../src/models/transformer-config';
import { transformerLayout } from '../../src/models/transformer-params';
import { importActorCriticOnnx, importTransformerOnnx } from '../../src/onnx/import';
import { nodeOrtOptions } from '../../src/onnx/ort-node';
import { packSequences } from '../../src/models/sequence-batch';
import { warmUpOrt } from './helpers';

const tokenizer = CharTokenizer.createDefault();
const config: TransformerConfig = {
  vocab: tokenizer.vocabSize,
  context: 10,
  width: 16,
  layers: 1,
  heads: 2,
  tiedEmbeddings: true,
  valueHead: false,
};

function lines(spy: ReturnType<typeof vi.spyOn>): string {
  return spy.mock.calls.map((c: unknown[]) => c.join(' ')).join('\n');
}

describe('npm run export:onnx', () => {
  beforeAll(() => warmUpOrt({ executionProviders: ['wasm'], ...nodeOrtOptions() }), 60_000);

  it('exports a trained transformer checkpoint that onnxruntime runs like our forward', async () => {
    const log = vi.spyOn(console, 'log').mockImplementation(() => {});
    const model = new CpuLanguageModel(config, transformerLayout(config).initialize(4));
    const optimizer = { lr: 1e-2, weightDecay: 0.01, maxGradNorm: 1 };
    for (const prompt of ['ab=', 'cab=', 'dd=']) {
      const completion = [...prompt.slice(0, -1)].reverse().join('');
      await model.trainCrossEntropy(
        packSequences(tokenizer, [{ prompt, completion }], 10),
        optimizer,
      );
    }
    const dir = mkdtempSync(join(tmpdir(), 'export-onnx-'));
    const input = join(dir, 'policy.ckpt');
    writeFileSync(
      input,
      await saveLanguageModel(model, {
        tokenizer: tokenizer.spec,
        seed: 4,
        meta: { task: 'reverse' },
      }),
    );

    expect(await main([`--in=${input}`, '--verify'])).toBe(0);
    const onnx = importTransformerOnnx(new Uint8Array(readFileSync(join(dir, 'policy.onnx'))));
    expect(onnx.config).toEqual(config);
    expect(onnx.tokenizerSpec).toEqual(tokenizer.spec);
    expect(onnx.params).toEqual(await model.readParams());
    expect(onnx.meta).toEqual({ source: 'policy.ckpt', step: '3', task: 'reverse' });
    expect(lines(log)).toMatch(/verify: onnxruntime-web \(wasm\) vs CPU forward, .* ok/);
    log.mockRestore();
  });

  it('exports an MLP actor-critic checkpoint to --out', async () => {
    const log = vi.spyOn(console, 'log').mockImplementation(() => {});
    const agent = ppoAgentLayout(4, 2);
    const model = new CpuActorCritic(agent, initAgent(agent, 2));
    const dir = mkdtempSync(join(tmpdir(), 'export-onnx-'));
    const input = join(dir, 'agent.ckpt');
    const out = join(dir, 'cartpole.onnx');
    writeFileSync(input, await saveActorCritic(model, { seed: 2 }));
    expect(await main([`--in=${input}`, `--out=${out}`, '--verify'])).toBe(0);
    const back = importActorCriticOnnx(new Uint8Array(readFileSync(out)));
    expect(back.params).toEqual(await model.readParams());
    expect(lines(log)).toMatch(/verify: .* ok/);
    log.mockRestore();
  });

  it('refuses a missing --in, unknown flags and model kinds without an export', async () => {
    await expect(main([])).rejects.toThrow(/--in: the checkpoint to export is required/);
    await expect(main(['--in=x.ckpt', '--fromat=onnx'])).rejects.toThrow(
      /unknown option\(s\): --fromat/,
    );
    const dir = mkdtempSync(join(tmpdir(), 'export-onnx-'));
    const input = join(dir, 'table.ckpt');
    writeFileSync(
      input,
      encodeCheckpoint({ model: { kind: 'tabular', config: {} }, step: 0, seed: 1, tensors: [] }),
    );
    await expect(main([`--in=${input}`])).rejects.toThrow(
      /model kind "tabular" has no ONNX export/,
    );
  });
});
