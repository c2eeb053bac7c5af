/**
 * The shipped starting checkpoints in public/models/ against their manifest: every file is under
 * 2 MB with the recorded size and sha256; the checkpoint, the .onnx and the manifest agree on the
 * config (the lab's small model, worked out below by hand), tokenizer and weights (bit for bit);
 * and a greedy run on the first 32 of the manifest's evaluation prompts succeeds at least as often
 * as the recorded 256-prompt rate − 0.15 (a cheap check that the weights are the trained ones).
 *
 * Context by hand, task.maxChars + 10 (capped at 256):
 *   reverse / copy 3–6 letters   maxChars = 2·6 + 1 = 13       (6 letters, the separator, 6)  → 23
 *   sort 3–6 letters: the same (copy-noisy, reverse-noisy and sort-noisy are their tasks warmed up
 *   on noisy demonstrations: the same context)
 *   addition 1–2 digits          maxChars = 3·2 + 3 = 9        ('99+99=' and '198')           → 19
 *   (addition-noisy writes the sum reversed: the same characters)
 *   multiply 1–2 digits, tools   maxChars = 8·2 + 50 = 66      (a call, its result, answer)   → 76
 *   countdown 3 numbers ≤ 9, target ≤ 50: prompt '9 9 9>50:' 9, answer 3 digits, 2 operators and
 *                                one pair of parentheses 7: maxChars = 16                       → 26
 *   shopping, sized for its top rung (3 items; the longest item name, 'umbrella', has 8 letters):
 *                                maxChars = 3·(2·8 + 44) + 60 = 240                            → 250
 */
import { describe, expect, it } from 'vitest';
import { sha256, type ManifestEntry } from '../../scripts/build-models';
import { CpuLanguageModel } from '../../src/models/lm-cpu';
import { CharTokenizer } from '../../src/models/tokenizer';
import { importTransformerOnnx } from '../../src/onnx/import';
import { evaluateTask } from '../../src/rl/evaluate';
import { shoppingDifficultyLevels, shoppingTask } from '../../src/agents/tasks/shopping';
import { createTokenTask } from '../../src/agents/token-task-registry';
import type { Settings } from '../../src/worker/run-protocol';
import { loadShipped, readShipped, shippedManifest } from './shipped';

const MAX_BYTES = 2 * 1024 * 1024;
const CHECK_PROMPTS = 32;
const SLACK = 0.15;

const EXPECTED_CONTEXT: Record<string, number> = {
  reverse: 23,
  copy: 23,
  'copy-noisy': 23,
  'reverse-noisy': 23,
  'sort-noisy': 23,
  addition: 19,
  'addition-noisy': 19,
  countdown: 26,
  multiply: 76,
  shopping: 250,
  'multiply-recall': 76,
};

const manifest = shippedManifest();

describe('src/models/shipped-manifest.json', () => {
  it('lists the lab’s eleven models once each, with recipe and result', () => {
    expect(manifest.version).toBe(1);
    expect(manifest.models.map((m) => m.name).sort()).toEqual([
      'addition',
      'addition-noisy',
      'copy',
      'copy-noisy',
      'countdown',
      'multiply',
      'multiply-recall',
      'reverse',
      'reverse-noisy',
      'shopping',
      'sort-noisy',
    ]);
    for (const m of manifest.models) {
      expect(m.recipe.steps, m.name).toBeGreaterThan(0);
      expect(m.recipe.backend).toBe('cpu');
      expect(m.evalPrompts).toBe(256);
      expect(m.successRate).toBeGreaterThanOrEqual(0);
      expect(m.successRate).toBeLessThanOrEqual(1);
      // A multiple of 1/256: a count of correct prompts.
      expect(Number.isInteger(m.successRate * m.evalPrompts)).toBe(true);
      // Sampled: G answers for each of the 256 prompts; a prompt passes when one of them is right,
      // so pass@G is at least pass@1, and both are counts.
      const { passAt1, passAtG, groupSize } = m.sampled;
      expect(passAtG, m.name).toBeGreaterThanOrEqual(passAt1);
      expect(Number.isInteger(passAt1 * m.evalPrompts * groupSize)).toBe(true);
      expect(Number.isInteger(passAtG * m.evalPrompts)).toBe(true);
    }
  });
});

describe.each(manifest.models.map((m) => [m.name, m] as [string, ManifestEntry]))(
  'shipped model %s',
  (name, entry) => {
    it('files: under 2 MB, recorded size and sha256', () => {
      for (const file of [entry.checkpoint, entry.onnx]) {
        const bytes = readShipped(file.file);
        expect(bytes.length, file.file).toBeLessThan(MAX_BYTES);
        expect(bytes.length, file.file).toBe(file.bytes);
        expect(sha256(bytes), file.file).toBe(file.sha256);
      }
    });

    it('config: the lab’s small model with a value head; the .onnx holds the same weights', () => {
      const shipped = loadShipped(name);
      const vocab = CharTokenizer.createDefault().vocabSize;
      const expected = {
        vocab,
        context: EXPECTED_CONTEXT[name],
        width: 64,
        layers: 2,
        heads: 4,
        tiedEmbeddings: true,
        valueHead: true,
      };
      expect(entry.config).toEqual(expected);
      expect(shipped.config).toEqual(expected);
      expect(shipped.tokenizer).toEqual(CharTokenizer.createDefault().spec);
      expect(shipped.checkpoint.step).toBe(entry.recipe.steps + (entry.recipe.ownFirstSteps ?? 0));
      expect(shipped.checkpoint.seed).toBe(entry.recipe.seed);
      // Shopping's model holds its curriculum's top rung, which is longer than its own task.
      const sizedFor =
        name === 'shopping'
          ? shoppingTask(shoppingDifficultyLevels.at(-1)!).maxChars
          : shipped.task.maxChars;
      expect(sizedFor + 10).toBe(expected.context);

      const onnx = importTransformerOnnx(readShipped(entry.onnx.file));
      expect(onnx.config).toEqual(expected);
      expect(onnx.tokenizerSpec).toEqual(shipped.tokenizer);
      expect(new Uint32Array(onnx.params.buffer)).toEqual(new Uint32Array(shipped.params.buffer));
      expect(onnx.meta.task).toBe(entry.task);
    });

    it(`greedy success on ${CHECK_PROMPTS} of the evaluation prompts ≥ recorded − ${SLACK}`, async () => {
      const shipped = loadShipped(name);
      const model = new CpuLanguageModel(shipped.config, shipped.params);
      // The same seed draws the same prompts in the same order: these are the manifest's first 32.
      const { successRate } = await evaluateTask(model, shipped.tokenizerObject, shipped.task, {
        samples: CHECK_PROMPTS,
        seed: entry.evalSeed,
      });
      expect(successRate).toBeGreaterThanOrEqual(entry.successRate - SLACK);
    }, 20_000);

    it(`sampled as the lessons sample: pass@1 and pass@G on ${CHECK_PROMPTS} prompts near the recorded`, async () => {
      const shipped = loadShipped(name);
      const model = new CpuLanguageModel(shipped.config, shipped.params);
      const { temperature, groupSize, passAt1, passAtG } = entry.sampled;
      const measured = await evaluateTask(model, shipped.tokenizerObject, shipped.task, {
        samples: CHECK_PROMPTS,
        seed: entry.evalSeed,
        repeats: groupSize,
        sampling: { temperature },
      });
      // 32 prompts × G answers: about ±0.08 (one standard error) on pass@1 near 0.3.
      expect(Math.abs(measured.successRate - passAt1), 'pass@1').toBeLessThanOrEqual(SLACK);
      expect(Math.abs(measured.promptPassRate - passAtG), 'pass@G').toBeLessThanOrEqual(2 * SLACK);
    }, 30_000);

    // Only mixed warm-ups have parts to check (a test per model that has them, none skipped).
    if (entry.warmUp === undefined) return;
    it('a mixed warm-up: its own task first, and every part it knows as recorded', async () => {
      const parts = entry.warmUp!;
      expect(parts[0]).toMatchObject({ task: entry.task, taskOptions: entry.taskOptions });
      expect(parts[0]!.successRate).toBe(entry.successRate);
      const shipped = loadShipped(name);
      const model = new CpuLanguageModel(shipped.config, shipped.params);
      for (const part of parts.slice(1)) {
        const task = createTokenTask(part.task, part.taskOptions as Settings);
        const { successRate } = await evaluateTask(model, shipped.tokenizerObject, task, {
          samples: CHECK_PROMPTS,
          seed: entry.evalSeed,
        });
        expect(successRate, part.task).toBeGreaterThanOrEqual(part.successRate - SLACK);
      }
    }, 30_000);
  },
);
