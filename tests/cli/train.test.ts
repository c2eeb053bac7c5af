/** The training CLI end to end (CPU): run files, generated flags, refusals. */
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, vi } from 'vitest';
import { main } from '../../src/cli/train';
import { parseRunFile, runFromJson } from '../../src/compare/run-file';
import { runCatalog } from '../../src/worker/run-spec';

const quiet = () => vi.spyOn(console, 'log').mockImplementation(() => {});

/** A GRPO run on copy small enough for a test: a 16-wide, 1-layer model, 2 SFT steps, 2 updates. */
const TINY_GRPO_RUN = [
  '--algo=grpo',
  '--task=copy',
  '--backend=cpu',
  '--sft-steps=2',
  '--updates=2',
  '--group-size=2',
  '--prompts-per-update=2',
  '--width=16',
  '--layers=1',
  '--heads=2',
];

describe('npm run train', () => {
  it('trains an environment algorithm and writes a run file', async () => {
    quiet();
    const out = join(mkdtempSync(join(tmpdir(), 'train-')), 'run.json');
    const code = await main([
      '--algo=q-learning',
      '--env=cliffwalking',
      '--updates=40',
      '--alpha=0.4',
      `--out=${out}`,
    ]);
    expect(code).toBe(0);
    const run = JSON.parse(readFileSync(out, 'utf8'));
    expect(run.format).toBe('agent-rl-lab/run');
    expect(run.config.alpha).toBe(0.4);
    expect(run.metrics['charts/episodic_return']).toHaveLength(40);
    expect(run.summary.updates).toBe(40);
    // An environment run has no task options, curriculum or reward model to record.
    expect(['taskOptions', 'curriculum', 'rewardModel'].filter((k) => k in run)).toEqual([]);
  });

  it('trains a language-model algorithm on the CPU backend', async () => {
    quiet();
    const out = join(mkdtempSync(join(tmpdir(), 'train-')), 'run.json');
    const code = await main([...TINY_GRPO_RUN, `--out=${out}`]);
    expect(code).toBe(0);
    const run = JSON.parse(readFileSync(out, 'utf8'));
    expect(run.algorithm).toBe('grpo');
    expect(run.backend).toMatch(/CPU/);
    expect(run.metrics['reward/mean']).toHaveLength(2);
    expect(run.summary.successRate).toBeGreaterThanOrEqual(0);
    // No task flag given: the task's defaults, recorded as no options set.
    expect(run.taskOptions).toEqual({});
    expect('curriculum' in run || 'rewardModel' in run).toBe(false);
    // Where it started: a fresh model and 2 SFT steps, which the lab's import keeps.
    expect(run.sftSteps).toBe(2);
    expect('init' in run).toBe(false);
    expect(parseRunFile(readFileSync(out, 'utf8'), runCatalog()).sftSteps).toBe(2);
    // Its model is not the lab's: the file says so, and the import warns before a replay.
    expect(run.model).toEqual({ width: 16, layers: 1, heads: 2, positions: 'learned' });
    expect(runFromJson(readFileSync(out, 'utf8'), runCatalog()).note).toBe(
      'It trained a transformer of width 16, 1 layer, 2 heads, learned positions; the lab builds ' +
        'width 64, 2 layers, 4 heads, learned positions. Starting it here replays its updates on ' +
        'the lab’s model, whose curves will differ from the file’s: compare it as it is.',
    );
  }, 60_000);

  it('--eval-samples sets the final evaluation: 0 skips it, a negative count is refused', async () => {
    quiet();
    const out = join(mkdtempSync(join(tmpdir(), 'train-')), 'run.json');
    expect(await main([...TINY_GRPO_RUN, '--eval-samples=0', `--out=${out}`])).toBe(0);
    const run = JSON.parse(readFileSync(out, 'utf8'));
    expect(run.summary.updates).toBe(2);
    expect('successRate' in run.summary).toBe(false);
    await expect(main([...TINY_GRPO_RUN, '--eval-samples=-1'])).rejects.toThrow(
      "--eval-samples must be an integer in [0, 100000], got '-1'",
    );
  }, 60_000);

  it('trains a new model with rotary positions (--positions=rotary) and records them', async () => {
    quiet();
    const out = join(mkdtempSync(join(tmpdir(), 'train-')), 'run.json');
    const code = await main([...TINY_GRPO_RUN, '--positions=rotary', `--out=${out}`]);
    expect(code).toBe(0);
    const text = readFileSync(out, 'utf8');
    const run = JSON.parse(text);
    expect(run.metrics['reward/mean']).toHaveLength(2);
    expect(run.metrics['reward/mean'].every(Number.isFinite)).toBe(true);
    expect(run.model).toEqual({
      width: 16,
      layers: 1,
      heads: 2,
      positions: 'rotary',
      rotaryBase: 10000,
    });
    // The lab rebuilds it with rotary positions, and names them beside the other trunk.
    const lab = runFromJson(text, runCatalog());
    expect(lab.spec.positions).toBe('rotary');
    expect(lab.note).toContain(
      'width 16, 1 layer, 2 heads, rotary positions (base 10000); the lab builds width 64, 2 ' +
        'layers, 4 heads, rotary positions (base 10000).',
    );
  }, 60_000);

  it('scores the frozen reference on onnxruntime-web with --reference=ort', async () => {
    quiet();
    const dir = mkdtempSync(join(tmpdir(), 'train-'));
    const flags = [
      '--algo=grpo',
      '--task=copy',
      '--backend=cpu',
      '--sft-steps=2',
      '--updates=3',
      '--group-size=2',
      '--prompts-per-update=2',
      '--width=16',
      '--layers=1',
      '--heads=2',
      '--kl-coef=0.1',
      '--lr=0.01',
    ];
    const read = (name: string) => JSON.parse(readFileSync(join(dir, name), 'utf8'));
    expect(await main([...flags, '--reference=ort', `--out=${join(dir, 'ort.json')}`])).toBe(0);
    expect(await main([...flags, `--out=${join(dir, 'ours.json')}`])).toBe(0);
    const [ort, ours] = [read('ort.json'), read('ours.json')];
    expect(ort.backend).toBe('CPU (requested), reference on onnxruntime-web (wasm)');
    expect(ours.backend).toBe('CPU (requested)');
    const kl = (run: { metrics: Record<string, number[]> }) => run.metrics['actor/kl_loss']!;
    expect(kl(ours)[2]).toBeGreaterThan(1e-6);
    kl(ours).forEach((k, i) =>
      expect(Math.abs(kl(ort)[i]! - k)).toBeLessThanOrEqual(1e-5 + 1e-3 * k),
    );
    await expect(main([...flags, '--reference=trt'])).rejects.toThrow(
      "--reference must be one of engine, ort, got 'trt'",
    );
  }, 60_000);

  it('starts from a shipped ONNX export with --init (value head dropped for GRPO)', async () => {
    const log = quiet();
    log.mockClear(); // the spy is shared with the tests before
    const out = join(mkdtempSync(join(tmpdir(), 'train-')), 'run.json');
    const init = fileURLToPath(new URL('../../public/models/reverse.onnx', import.meta.url));
    const flags = ['--task=reverse', '--backend=cpu', '--updates=1', `--init=${init}`];
    const common = ['--group-size=2', '--prompts-per-update=2', `--out=${out}`];
    expect(await main(['--algo=grpo', ...flags, ...common])).toBe(0);
    const run = JSON.parse(readFileSync(out, 'utf8'));
    expect(run.metrics['reward/mean']).toHaveLength(1);
    // The run file carries the starting file, so the lab's import starts from the same weights.
    expect(run.init.file).toBe('reverse.onnx');
    // The shape the file gave (the lab's): no warning on import.
    expect(run.model).toEqual({ width: 64, layers: 2, heads: 4, positions: 'learned' });
    expect(runFromJson(readFileSync(out, 'utf8'), runCatalog()).note).toBeUndefined();
    expect('sftSteps' in run).toBe(false);
    const imported = parseRunFile(readFileSync(out, 'utf8'), runCatalog());
    expect(imported.init).toEqual({
      kind: 'file',
      name: 'reverse.onnx',
      bytes: new Uint8Array(readFileSync(init)),
    });
    // No warm-up line: the run starts from the file's weights.
    expect(log.mock.calls.flat().join('\n')).not.toMatch(/warm-up/);
    // A task longer than the model's context is refused with both lengths.
    await expect(main(['--algo=grpo', ...flags, '--max-length=12'])).rejects.toThrow(
      /context is 23 tokens, but the task needs up to 27/,
    );
  }, 60_000);

  it("trains through the task's curriculum with --curriculum", async () => {
    quiet();
    const out = join(mkdtempSync(join(tmpdir(), 'train-')), 'run.json');
    const common = ['--task=copy', '--backend=cpu', '--width=16', '--layers=1', '--heads=2'];
    const code = await main([
      '--algo=grpo',
      ...common,
      '--sft-steps=2',
      '--updates=2',
      '--group-size=2',
      '--prompts-per-update=2',
      '--curriculum',
      '--curriculum-threshold=0.5',
      '--curriculum-patience=3',
      `--out=${out}`,
    ]);
    expect(code).toBe(0);
    const run = JSON.parse(readFileSync(out, 'utf8'));
    // Two updates on the first rung (a patience of 3 cannot move up yet).
    expect(run.metrics['curriculum/level']).toEqual([0, 0]);
    // The run file records the curriculum; the rungs set the task options, so none are written.
    expect(run.curriculum).toEqual({ threshold: 0.5, patience: 3 });
    expect('taskOptions' in run).toBe(false);
    await expect(
      main(['--algo=grpo', ...common, '--updates=1', '--curriculum', '--max-length=4']),
    ).rejects.toThrow("curriculum sets the task's options rung by rung; leave out --max-length");
    await expect(main(['--algo=dpo', ...common, '--updates=1', '--curriculum'])).rejects.toThrow(
      'curriculum is only for grpo and ppo',
    );
    await expect(
      main(['--algo=grpo', ...common, '--updates=1', '--curriculum-patience=0']),
    ).rejects.toThrow(/patience must be an integer in \[1, 1000\], got 0/);
  }, 60_000);

  it('trains a learned reward model before RL with --reward-model and records it', async () => {
    const log = quiet();
    log.mockClear(); // the spy is shared with the tests before
    const dir = mkdtempSync(join(tmpdir(), 'train-'));
    const init = fileURLToPath(new URL('../../public/models/copy.ckpt', import.meta.url));
    const flags = ['--task=copy', `--init=${init}`, '--backend=cpu', '--prompts-per-update=2'];
    const code = await main([
      '--algo=grpo',
      ...flags,
      '--updates=2',
      '--group-size=4',
      '--reward-model',
      '--reward-model-prompts=8',
      '--reward-model-steps=3',
      '--reward-model-pairs-per-step=4',
      '--correct-weight=0',
      `--out=${join(dir, 'grpo.json')}`,
    ]);
    expect(code).toBe(0);
    const printed = log.mock.calls.flat().join('\n');
    expect(printed).toContain(
      'reward model: 8 prompts × 4 answers, right paired with wrong, then 3 steps of 4 pairs',
    );
    // The report as one line: pairs, the loss first → last, held-out agreement.
    expect(printed).toMatch(
      /^reward model: \d+ pairs, loss \d+\.\d{3} → \d+\.\d{3}, held-out agreement (\d+\.\d% of \d+|n\/a)/m,
    );
    // 3 steps: no progress line (those come at most every 10 steps).
    expect(printed).not.toMatch(/reward model: step/);
    const run = JSON.parse(readFileSync(join(dir, 'grpo.json'), 'utf8'));
    // The flags given, the rest DEFAULT_REWARD_MODEL_CONFIG (4 samples, no noise, lr 1e-3).
    const expected = {
      prompts: 8,
      samplesPerPrompt: 4,
      labelNoise: 0,
      steps: 3,
      pairsPerStep: 4,
      lr: 0.001,
    };
    expect(run.rewardModel).toEqual(expected);
    // No --reward-model-weight: the model trained is used, at weight 1 (as the lab's form does).
    expect(run.config.rewardModelWeight).toBe(1);
    expect(run.config.correctWeight).toBe(0);
    expect(run.metrics['reward/model']).toHaveLength(2);
    expect(run.metrics['reward/model'].every(Number.isFinite)).toBe(true);
    // The lab imports it as a run with that reward model.
    const imported = parseRunFile(readFileSync(join(dir, 'grpo.json'), 'utf8'), runCatalog());
    expect(imported.rewardModel).toEqual(expected);
    expect(imported.taskOptions).toEqual({});

    // PPO with a task option, label noise and its own weight (kept as given).
    expect(
      await main([
        '--algo=ppo',
        ...flags,
        '--max-length=5',
        '--updates=1',
        '--reward-model',
        '--reward-model-prompts=8',
        '--reward-model-steps=2',
        '--reward-model-label-noise=0.25',
        '--reward-model-weight=0.5',
        `--out=${join(dir, 'ppo.json')}`,
      ]),
    ).toBe(0);
    const ppo = JSON.parse(readFileSync(join(dir, 'ppo.json'), 'utf8'));
    expect(ppo.rewardModel).toEqual({
      prompts: 8,
      samplesPerPrompt: 4,
      labelNoise: 0.25,
      steps: 2,
      pairsPerStep: 32,
      lr: 0.001,
    });
    expect(ppo.config.rewardModelWeight).toBe(0.5);
    expect(ppo.taskOptions).toEqual({ maxLength: 5 });
    expect(ppo.task).toBe('ppo on copy(3–5)');
  }, 120_000);

  // Each bad use of the reward-model or retained-task flags → an error naming the flag or field and its range,
  // thrown before any training and with no run file written.
  it.each<[string, string[], string | RegExp]>([
    [
      'an algorithm without a reward model',
      ['--algo=dpo', '--reward-model'],
      'train: reward-model is only for grpo and ppo',
    ],
    [
      'a switch given a value',
      ['--reward-model=yes'],
      "train: reward-model is a switch (--reward-model), got 'yes'",
    ],
    [
      'zero steps',
      ['--reward-model', '--reward-model-steps=0'],
      'rewardModel: steps must be an integer in [1, 2000], got 0',
    ],
    [
      'a label noise of one half',
      ['--reward-model', '--reward-model-label-noise=0.5'],
      'rewardModel: labelNoise must be a number in [0, 0.5), got 0.5',
    ],
    [
      'a learning rate of 0',
      ['--reward-model', '--reward-model-lr=0'],
      'rewardModel: lr must be a number in (0, 1], got 0',
    ],
    [
      'a fractional prompt count',
      ['--reward-model', '--reward-model-prompts=9.5'],
      'rewardModel: prompts must be an integer in [4, 1024], got 9.5',
    ],
    [
      'a value that is not a number',
      ['--reward-model', '--reward-model-pairs-per-step=many'],
      'rewardModel: pairsPerStep must be an integer in [1, 256], got many',
    ],
    [
      'a field flag without the switch',
      ['--reward-model-lr=0.01'],
      'train: reward-model-lr sets the learned reward model, which only --reward-model trains; add --reward-model',
    ],
    [
      'a field flag for dpo',
      ['--algo=dpo', '--reward-model-samples-per-prompt=4'],
      'train: reward-model is only for grpo and ppo',
    ],
    [
      'a misspelled field flag',
      ['--reward-model', '--reward-model-step=3'],
      'unknown option(s): --reward-model-step',
    ],
    [
      'a weight without a reward model',
      ['--reward-model-weight=0.5'],
      'grpo: rewardModelWeight must be 0 in a run without a reward model',
    ],
    [
      'the switch for an environment algorithm',
      ['--algo=q-learning', '--reward-model'],
      /^unknown option\(s\): .*, --reward-model$/,
    ],
    [
      'a retained task for dpo',
      ['--algo=dpo', '--retained=addition'],
      'train: retained is only for grpo and ppo',
    ],
    [
      'an unknown retained task',
      ['--retained=chess'],
      'train: retained must be one of copy, reverse',
    ],
    [
      "a retained task's option out of range",
      ['--retained=addition', '--retained-max-digits=0'],
      'retained: maxDigits must be an integer in [1, 20], got 0',
    ],
    [
      'ptx without a retained task',
      ['--ptx-coef=1'],
      'grpo: ptxCoef needs a retained task in the run (none was given)',
    ],
    [
      "an option for the retained task's flags that it does not have",
      ['--retained=addition', '--retained-alphabet=ab'],
      'unknown option(s): --retained-alphabet',
    ],
  ])('refuses %s', async (_what, bad, message) => {
    quiet();
    const out = join(mkdtempSync(join(tmpdir(), 'train-')), 'run.json');
    const common = ['--task=copy', '--backend=cpu', '--width=16', '--layers=1', '--heads=2'];
    const args = ['--algo=grpo', ...common, '--sft-steps=0', '--updates=1', `--out=${out}`, ...bad];
    await expect(main(args)).rejects.toThrow(message);
    expect(existsSync(out)).toBe(false);
  });

  it('keeps a retained task: ptx and its success rate in the metrics, the task in the file', async () => {
    quiet();
    const out = join(mkdtempSync(join(tmpdir(), 'train-')), 'run.json');
    const code = await main([
      '--algo=ppo',
      '--task=copy',
      '--backend=cpu',
      '--sft-steps=2',
      '--updates=2',
      '--prompts-per-update=2',
      '--minibatches=1',
      '--width=16',
      '--layers=1',
      '--heads=2',
      '--retained=addition',
      '--retained-max-digits=1',
      '--ptx-coef=0.5',
      '--retained-eval-prompts=4',
      `--out=${out}`,
    ]);
    expect(code).toBe(0);
    const run = JSON.parse(readFileSync(out, 'utf8'));
    expect(run.retained).toEqual({ task: 'addition', taskOptions: { maxDigits: 1 } });
    expect(run.metrics['actor/ptx_loss'].every(Number.isFinite)).toBe(true);
    expect(run.metrics['retained/success_rate']).toHaveLength(2);
    expect(parseRunFile(readFileSync(out, 'utf8'), runCatalog()).retained).toEqual(run.retained);
  });

  it('refuses a starting policy too weak to give comparison pairs, naming the count', async () => {
    quiet();
    const common = ['--task=copy', '--backend=cpu', '--width=16', '--layers=1', '--heads=2'];
    // A random model (no warm-up) copies no string of 3–6 letters: no right answer, no pair.
    await expect(
      main([
        '--algo=grpo',
        ...common,
        '--sft-steps=0',
        '--updates=1',
        '--reward-model',
        '--reward-model-prompts=4',
        '--reward-model-samples-per-prompt=2',
      ]),
    ).rejects.toThrow(
      'rewardModel: pairs needs at least 2 right/wrong pairs, the starting policy gave 0',
    );
  }, 60_000);

  it('refuses unknown flags, bad values and unknown algorithms, naming them', async () => {
    quiet();
    await expect(main(['--algo=sarsa', '--updates=1', '--alpah=0.1'])).rejects.toThrow(/--alpah/);
    await expect(main(['--algo=sarsa', '--updates=1', '--gamma=2'])).rejects.toThrow(
      /gamma.*\[0, 1\]/,
    );
    await expect(main(['--algo=nope'])).rejects.toThrow(/algo.*grpo/);
    await expect(main(['--algo=ppo-mlp', '--env=cliffwalking'])).rejects.toThrow(/env.*cartpole/);
  });
});
