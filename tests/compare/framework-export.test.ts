import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createTokenTask } from '../../src/agents/token-task-registry';
import {
  FRAMEWORK_TABLES,
  frameworkExport,
  type ExportTask,
  type FrameworkArtifact,
} from '../../src/compare/framework-export';
import { REWARD_TASKS } from '../../src/compare/framework-export-reward-code';
import { ImportError } from '../../src/util/json-checks';
import { FLAVOR_RELEASES } from '../../src/ops/flavor-releases';
import { catalog, defaultsOf } from './fixtures';
import {
  parseTrlScript,
  parseVerlCommand,
  shellDefault,
  snapshot,
  trlProblems,
  verlProblems,
} from './framework-snapshot';

const algo = (name: string) => catalog.algorithms.find((a) => a.name === name)!;
type Changes = Record<string, number | boolean | string>;

function exported(name: string, changes: Changes = {}, task: ExportTask = { name: 'reverse' }) {
  const out = frameworkExport(algo(name), { ...defaultsOf(name), ...changes }, task);
  if (!out.ok) throw new Error(out.reason);
  return out;
}

function file(artifact: FrameworkArtifact, suffix: string): string {
  if (!artifact.ok) throw new Error(artifact.reason);
  const found = artifact.files.find((f) => f.name.endsWith(suffix));
  if (!found) throw new Error(`no ${suffix} file`);
  return found.text;
}
const trlText = (name: string, changes: Changes = {}) => file(exported(name, changes).trl, '.py');
const verlText = (name: string, changes: Changes = {}) => file(exported(name, changes).verl, '.sh');
const trlArgs = (name: string, changes: Changes = {}) =>
  parseTrlScript(trlText(name, changes)).kwargs;
const verlArgs = (name: string, changes: Changes = {}) =>
  new Map(parseVerlCommand(verlText(name, changes)).map((o) => [o.key, o.value]));

/** The runs issue 31 checked, and the other variants each table branches on. */
const VARIANTS: [string, string, Changes][] = [
  ['default GRPO', 'grpo', {}],
  [
    'DAPO-style GRPO',
    'grpo',
    {
      clipHigh: 0.28,
      dynamicSampling: true,
      overlongEnable: true,
      overlongMaxLength: 8,
      overlongBuffer: 4,
      maskTruncated: true,
      entropyCoef: 0.01,
    },
  ],
  ['Dr. GRPO', 'grpo', { lossAggregation: 'dr-grpo', stdNormalization: 'none' }],
  ['RLOO', 'grpo', { advantageEstimator: 'rloo' }],
  [
    'RLOO, k1 KL in the reward',
    'grpo',
    { advantageEstimator: 'rloo', klCoef: 0.05, klPenalty: 'reward', klEstimator: 'k1' },
  ],
  ['REINFORCE++', 'grpo', { advantageEstimator: 'reinforce++' }],
  ['REINFORCE++ baseline', 'grpo', { advantageEstimator: 'reinforce++-baseline' }],
  ['GRPO, KL in the reward', 'grpo', { klCoef: 0.05, klPenalty: 'reward', klEstimator: 'k1' }],
  ['GRPO, dual clip, batch std', 'grpo', { dualClip: 3, stdNormalization: 'batch' }],
  ['GRPO, seq-mean-token-sum', 'grpo', { lossAggregation: 'seq-mean-token-sum' }],
  ['GRPO, seq-mean-token-sum-norm', 'grpo', { lossAggregation: 'seq-mean-token-sum-norm' }],
  ['GRPO, seq-mean-token-mean', 'grpo', { lossAggregation: 'seq-mean-token-mean' }],
  ['GRPO, reward model, dynamic sampling', 'grpo', { rewardModelWeight: 1, dynamicSampling: true }],
  [
    'GRPO, shaped reward',
    'grpo',
    { formatWeight: 0.5, lengthPenalty: 0.1, verifierMatch: 'prefix' },
  ],
  ['GRPO, retained task', 'grpo', { ptxCoef: 0.5, retainedEvalPrompts: 16 }],
  ['PPO', 'ppo', {}],
  [
    'PPO, asymmetric clip, k2, dr-grpo',
    'ppo',
    { clipHigh: 0.3, klEstimator: 'k2', lossAggregation: 'dr-grpo' },
  ],
  [
    'PPO, KL in the reward, overlong',
    'ppo',
    {
      klCoef: 0.1,
      klEstimator: 'k3',
      overlongEnable: true,
      overlongMaxLength: 8,
      overlongBuffer: 4,
    },
  ],
  ['DPO', 'dpo', {}],
  ['DPO, IPO', 'dpo', { lossType: 'ipo', labelSmoothing: 0 }],
];

describe('exports against the frameworks’ own definitions (tests/fixtures/framework-snapshot.json)', () => {
  it('the snapshot was extracted at the releases the flavors name', () => {
    expect(snapshot.trl.release).toBe(FLAVOR_RELEASES.trl.release);
    expect(snapshot.trl.commit).toBe(FLAVOR_RELEASES.trl.commit);
    expect(snapshot.verl.release).toBe(FLAVOR_RELEASES.verl.release);
    expect(snapshot.verl.commit).toBe(FLAVOR_RELEASES.verl.commit);
  });

  it.each(VARIANTS)(
    '%s: every TRL import and argument exists with a valid value',
    (_, name, changes) => {
      const out = exported(name, changes);
      if (!out.trl.ok) {
        // Only REINFORCE++ has no TRL trainer.
        expect(String(changes.advantageEstimator)).toMatch(/^reinforce\+\+/);
        return;
      }
      expect(trlProblems(file(out.trl, '.py'))).toEqual([]);
    },
  );

  it.each(VARIANTS)(
    '%s: every verl key exists, is read, and has a valid value; every required key is set',
    (_, name, changes) => {
      const out = exported(name, changes);
      if (!out.verl.ok) {
        expect(name).toBe('dpo'); // verl has no DPO trainer
        return;
      }
      expect(verlProblems(file(out.verl, '.sh'))).toEqual([]);
    },
  );

  it.each(REWARD_TASKS)('task %s: the exports of every algorithm check out', (task) => {
    for (const name of Object.keys(FRAMEWORK_TABLES)) {
      const out = exported(name, {}, { name: task });
      expect(trlProblems(file(out.trl, '.py'))).toEqual([]);
      if (out.verl.ok) expect(verlProblems(file(out.verl, '.sh'))).toEqual([]);
    }
  });

  it('the checks catch what they are for (a wrong name, type, choice, module; an unread or undeclared key)', () => {
    const good = trlText('grpo');
    expect(
      trlProblems(
        good.replace('from trl import GRPOConfig', 'from trl import PPOConfig, GRPOConfig'),
      ),
    ).toContain('trl does not export PPOConfig');
    expect(trlProblems(good.replace('loss_type="dapo"', 'loss_type="token-mean"'))).toHaveLength(1);
    expect(trlProblems(good.replace('beta=0.0', 'beta="x"'))).toHaveLength(1);
    expect(trlProblems(good.replace('beta=0.0', 'kl_beta=0.0'))).toEqual([
      'GRPOConfig has no field kl_beta',
    ]);
    const verl = verlText('grpo');
    expect(verlProblems(verl.replace('optim.clip_grad=', 'grad_clip='))).toEqual([
      'actor_rollout_ref.actor.grad_clip is declared but nothing in verl reads it',
    ]);
    expect(
      verlProblems(verl.replace('loss_agg_mode=token-mean', 'loss_agg_mode=dr-grpo')),
    ).toHaveLength(1);
    expect(
      verlProblems(verl.replace('    actor_rollout_ref.rollout.name="$ROLLOUT_ENGINE" \\\n', '')),
    ).toEqual(['actor_rollout_ref.rollout.name is required and not set']);
    expect(
      verlProblems(
        verl.replace('algorithm.adv_estimator=grpo', 'reward_model.overlong_buffer.enable=True'),
      ),
    ).toEqual(['verl has no key reward_model.overlong_buffer.enable']);
  });
});

describe('issue 31: each defect', () => {
  it('1. TRL PPO imports PPOConfig and PPOTrainer from trl.experimental.ppo (moved in v0.29)', () => {
    const script = parseTrlScript(trlText('ppo'));
    expect(script.cls).toBe('PPOConfig');
    expect(script.imports).toContainEqual({
      module: 'trl.experimental.ppo',
      names: ['PPOConfig', 'PPOTrainer'],
    });
    expect(snapshot.trl.modules.trl).not.toContain('PPOConfig');
  });

  it("2. TRL PPO: the rollout is per_device × grad accumulation, split into num_mini_batches (TRL's own arithmetic)", () => {
    const cases: Changes[] = [{}, { promptsPerUpdate: 48, minibatches: 4 }, { minibatches: 1 }];
    for (const changes of cases) {
      const args = trlArgs('ppo', changes);
      const config = { ...defaultsOf('ppo'), ...changes };
      // trl/experimental/ppo/ppo_trainer.py at v1.9.0: local_batch_size = per_device ×
      // gradient_accumulation_steps; local_mini_batch_size = local_batch_size / num_mini_batches.
      const batch =
        Number(args.get('per_device_train_batch_size')) *
        Number(args.get('gradient_accumulation_steps'));
      const mini = batch / Number(args.get('num_mini_batches'));
      expect(batch).toBe(config.promptsPerUpdate);
      expect(mini).toBe(Number(config.promptsPerUpdate) / Number(config.minibatches));
    }
  });

  it('3. TRL: GRPO has entropy_coef; RLOO gets RLOOConfig; DPO gets DPOConfig', () => {
    expect(trlArgs('grpo', { entropyCoef: 0.01 }).get('entropy_coef')).toBe('0.01');
    expect(trlText('grpo', { entropyCoef: 0.01 })).not.toMatch(/no equivalent: entropyCoef/);
    const rloo = parseTrlScript(trlText('grpo', { advantageEstimator: 'rloo' }));
    expect(rloo.cls).toBe('RLOOConfig');
    expect(trlText('grpo', { advantageEstimator: 'rloo' })).toContain('trainer = RLOOTrainer(');
    const dpo = parseTrlScript(trlText('dpo', { beta: 0.2, lossType: 'ipo' }));
    expect(dpo.cls).toBe('DPOConfig');
    expect(dpo.kwargs.get('beta')).toBe('0.2');
    expect(dpo.kwargs.get('loss_type')).toBe('"ipo"');
    expect(trlText('dpo')).toContain('trainer = DPOTrainer(');
  });

  it('4. verl: the max gradient norm goes to optim.clip_grad (actor and critic), never to the unread grad_clip', () => {
    expect(
      verlArgs('grpo', { maxGradNorm: 0.5 }).get('actor_rollout_ref.actor.optim.clip_grad'),
    ).toBe('0.5');
    const ppo = verlArgs('ppo', { maxGradNorm: 2 });
    expect(ppo.get('actor_rollout_ref.actor.optim.clip_grad')).toBe('2.0');
    expect(ppo.get('critic.optim.clip_grad')).toBe('2.0');
    for (const text of [verlText('grpo'), verlText('ppo')])
      expect(text).not.toMatch(/\.grad_clip=/);
  });

  it('5. verl overlong penalty: the dapo reward manager with reward.reward_kwargs (added with +)', () => {
    const text = verlText('grpo', {
      overlongEnable: true,
      overlongMaxLength: 8,
      overlongBuffer: 4,
      overlongPenaltyFactor: 0.5,
    });
    const overrides = parseVerlCommand(text);
    expect(overrides).toEqual(
      expect.arrayContaining([
        { added: false, key: 'reward.reward_manager.name', value: 'dapo' },
        { added: true, key: 'reward.reward_kwargs.overlong_buffer_cfg.enable', value: 'True' },
        { added: true, key: 'reward.reward_kwargs.overlong_buffer_cfg.len', value: '4' },
        {
          added: true,
          key: 'reward.reward_kwargs.overlong_buffer_cfg.penalty_factor',
          value: '0.5',
        },
        { added: true, key: 'reward.reward_kwargs.max_resp_len', value: '8' },
      ]),
    );
    expect(text).not.toMatch(/^\s+reward_model\.overlong_buffer/m);
    // L_max = the response limit: verl's uncapped term and the lab's agree; below it they do not.
    expect(text).not.toContain("verl's overlong term keeps falling");
    const shorter = { overlongEnable: true, overlongMaxLength: 6, overlongBuffer: 2 };
    expect(verlText('grpo', shorter)).toContain(
      "# note: overlongMaxLength: verl's overlong term keeps falling below −1 past max_resp_len (6); this lab's stays at −1 up to maxNewTokens (8)",
    );
  });

  it('6. verl dynamic sampling names its metric and no longer sets the ignored max_num_gen_batches', () => {
    const args = verlArgs('grpo', { dynamicSampling: true, maxGenerationRounds: 6 });
    expect(args.get('algorithm.filter_groups.enable')).toBe('True');
    expect(args.get('algorithm.filter_groups.metric')).toBe('acc');
    expect(args.has('algorithm.filter_groups.max_num_gen_batches')).toBe(false);
    // The metric is what the exported reward function reports.
    expect(file(exported('grpo', { dynamicSampling: true }).verl, 'lab_reward.py')).toContain(
      'return {"score": score, "acc": acc}',
    );
    expect(verlText('grpo', { dynamicSampling: true })).not.toMatch(
      /stops with an error when the rounds run out/,
    );
  });

  it('7. Dr. GRPO in verl: seq-mean-token-sum-norm (÷ B·factor since v0.7.1) with loss_scale_factor = max response length', () => {
    const args = verlArgs('grpo', { lossAggregation: 'dr-grpo', maxNewTokens: 12 });
    expect(args.get('actor_rollout_ref.actor.loss_agg_mode')).toBe('seq-mean-token-sum-norm');
    expect(args.get('actor_rollout_ref.actor.loss_scale_factor')).toBe('12');
    expect(verlText('grpo', { lossAggregation: 'dr-grpo' })).not.toMatch(
      /no equivalent: lossAggregation/,
    );
    expect(
      verlArgs('ppo', { lossAggregation: 'dr-grpo' }).get(
        'actor_rollout_ref.actor.loss_scale_factor',
      ),
    ).toBe('8');
    // seq-mean-token-sum: the row count of verl's trainer (every row) is said, not hidden.
    expect(verlText('grpo', { lossAggregation: 'seq-mean-token-sum' })).toMatch(
      /# note: lossAggregation: verl's trainer divides by the mini-batch's row count/,
    );
    expect(verlText('grpo', { lossAggregation: 'dr-grpo' })).not.toMatch(/mini-batch's row count/);
  });

  it('8. verl: a command that starts — model path and engine as placeholders, micro-batches, reward function', () => {
    for (const [name, critic] of [
      ['grpo', false],
      ['ppo', true],
    ] as const) {
      const text = verlText(name);
      const args = verlArgs(name);
      expect(args.get('actor_rollout_ref.model.path')).toBe('$MODEL_PATH');
      expect(args.get('actor_rollout_ref.rollout.name')).toBe('$ROLLOUT_ENGINE');
      expect(text).toMatch(/^MODEL_PATH="\$\{MODEL_PATH:\?placeholder: /m);
      expect(shellDefault(text, 'ROLLOUT_ENGINE')).toBe('vllm');
      const micro = Number(args.get('actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu'));
      // verl requires the mini-batch (in completions) to be a multiple of the micro-batch.
      const mini =
        Number(args.get('actor_rollout_ref.actor.ppo_mini_batch_size')) *
        Number(args.get('actor_rollout_ref.rollout.n') ?? 1);
      expect(mini % micro).toBe(0);
      expect(args.get('reward.custom_reward_function.path')).toBe('lab_reward.py');
      expect(args.has('critic.model.path')).toBe(critic);
    }
  });
});

describe('the rest of the export', () => {
  it('REINFORCE++ has no TRL trainer and says so; DPO has no verl trainer and says so', () => {
    const rpp = exported('grpo', { advantageEstimator: 'reinforce++' });
    expect(rpp.trl).toEqual({
      ok: false,
      reason: expect.stringContaining('no REINFORCE++ trainer'),
    });
    expect(rpp.verl.ok).toBe(true);
    const dpo = exported('dpo');
    expect(dpo.verl).toEqual({ ok: false, reason: expect.stringContaining('no DPO trainer') });
  });

  it('the TRL script passes the reward function and, with overlong shaping, TRL’s own overlong reward with its weight', () => {
    const text = trlText('grpo', {
      overlongEnable: true,
      overlongMaxLength: 8,
      overlongBuffer: 4,
      overlongPenaltyFactor: 0.5,
    });
    expect(text).toContain('from trl.rewards import get_soft_overlong_punishment');
    expect(text).toContain(
      'reward_funcs=[lab_reward_fn, get_soft_overlong_punishment(max_completion_len=8, soft_punish_cache=4)],',
    );
    expect(parseTrlScript(text).kwargs.get('reward_weights')).toBe('[1.0, 0.5]');
  });

  it("TRL's PPO takes a reward model: overlong shaping there is a 'no equivalent' line, not silence", () => {
    const text = trlText('ppo', { overlongEnable: true, overlongMaxLength: 8, overlongBuffer: 4 });
    expect(text).toMatch(/^# no equivalent: overlongEnable = true — TRL's PPOTrainer/m);
    expect(text).not.toMatch(/^from trl.rewards|reward_funcs=/m);
  });

  it('the reward code carries the reward settings and the task verifier', () => {
    const reward = file(
      exported('grpo', { formatWeight: 0.5, verifierMatch: 'prefix' }, { name: 'countdown' }).verl,
      'lab_reward.py',
    );
    expect(reward).toContain('FORMAT_WEIGHT = 0.5');
    expect(reward).toContain('ANSWER_CHARS = "0123456789+-*/() "');
    expect(reward).toContain('completion[: len(answer)]');
    expect(reward).toContain('ast.parse(');
    expect(reward).not.toMatch(/\beval\(|\bexec\(/);
    expect(reward).toMatch(
      /^def compute_score\(data_source, solution_str, ground_truth, extra_info=None/m,
    );
    expect(() => exported('grpo', {}, { name: 'no-such-task' })).toThrow(/name/);
  });

  it('the word-problem reward reads the last number with re, never eval', () => {
    const reward = file(
      exported('grpo', { formatWeight: 0.5 }, { name: 'wordproblem' }).verl,
      'lab_reward.py',
    );
    expect(reward).toContain('FORMAT_WEIGHT = 0.5');
    expect(reward).toContain('ANSWER_CHARS = "0123456789"');
    expect(reward).toMatch(/^import re$/m);
    expect(reward).toContain('_NUMBER.finditer(text)');
    expect(reward).not.toMatch(/\beval\(|\bexec\(|\bast\./);
  });

  it("the word-problem reward scores as the lab's verifier does (run in Python)", () => {
    const reward = file(exported('grpo', {}, { name: 'wordproblem' }).verl, 'lab_reward.py');
    const dir = mkdtempSync(join(tmpdir(), 'wordproblem-reward-'));
    writeFileSync(join(dir, 'lab_reward.py'), reward);
    // The verifier's edge cases (tests/envs/token-tasks/word-problems.test.ts), then fuzzed text
    // from the characters that make up numbers.
    const cases: [string, string][] = [
      ['20', '20'],
      ['20', 'she has 20 apples.'],
      ['20', '3*5=15, 15+5=20. the answer is 20'],
      ['20', 'the answer is $20.'],
      ['20', '20.00.'],
      ['20', '25-5=20'],
      ['20', '20 or 21'],
      ['20', ''],
      ['20', 'twenty'],
      ['20', '-20'],
      ['20', '20.5'],
      ['20', '2,0'],
      ['20', '20-1'],
      ['20', '\u0662\u0660'],
      ['20', '２０'],
      ['1200', '1,200'],
      ['1200', 'she has $1,200.00.'],
      ['1200', '1,2000'],
      ['1200', '12,00'],
      ['1200', '1.200'],
      ['5000000', '5,000,000'],
      ['0', '-0'],
      ['0', 'none left: 0.'],
      ['7', `${'5,'.repeat(5000)} so 7`],
    ];
    const fuzz = fc.sample(
      fc.tuple(
        fc.constantFrom('0', '7', '20', '1200', '5000000'),
        fc.string({ unit: fc.constantFrom(...'0125,,..--$ a\n'), maxLength: 16 }),
      ),
      { numRuns: 400, seed: 11 },
    );
    cases.push(...fuzz);
    const program = [
      'import json, sys',
      `sys.path.insert(0, ${JSON.stringify(dir)})`,
      'from lab_reward import verify, lab_reward',
      'cases = json.loads(sys.stdin.read())',
      'print(json.dumps([[verify("", a, c), lab_reward("", a, c)["acc"]] for a, c in cases]))',
    ].join('\n');
    const printed = execFileSync('python3', ['-c', program], { input: JSON.stringify(cases) });
    const python = JSON.parse(printed.toString('utf8')) as [number, number][];
    const task = createTokenTask('wordproblem');
    const lab = cases.map(([answer, completion]) => {
      const score = task.verify({ prompt: '', answer }, completion);
      // lab_reward strips the completion first; the last number is the same either way.
      return [score, score];
    });
    expect(python).toEqual(lab);
    // Both sides saw right and wrong answers.
    expect(lab.filter(([s]) => s === 1).length).toBeGreaterThan(10);
    expect(lab.filter(([s]) => s === 0).length).toBeGreaterThan(10);
    // Python refuses a reference answer that is not a whole number, as the lab does.
    expect(() =>
      execFileSync(
        'python3',
        ['-c', `${program.split('\n').slice(0, 3).join('\n')}\nverify("", "2.5", "2.5")`],
        {
          stdio: 'pipe',
        },
      ),
    ).toThrow(/answer must be a whole number/);
  });

  it('a retained task: nothing while ptx and its check are off; "no equivalent" lines when on', () => {
    for (const name of ['grpo', 'ppo']) {
      expect(`${trlText(name)}\n${verlText(name)}`).not.toMatch(/ptx|retained/i);
      const on = { ptxCoef: 0.5, ptxBatch: 4, retainedEvalPrompts: 16 };
      expect(trlText(name, on)).toContain(
        "# no equivalent: ptxCoef = 0.5 — TRL has no supervised (ptx) term in its RL trainers; OpenRLHF's ptx_coef with --pretrain_data is the equivalent",
      );
      expect(verlText(name, on)).toContain(
        '# no equivalent: retainedEvalPrompts = 16 — an evaluation, not a training setting: score the retained task as a validation set (data.val_files with trainer.test_freq)',
      );
      expect(`${trlText(name, on)}\n${verlText(name, on)}`).not.toMatch(/ptxBatch/);
    }
  });

  it('a learned reward model: verl turns its reward model on with a placeholder path and its engine', () => {
    const args = verlArgs('grpo', { rewardModelWeight: 1, correctWeight: 0 });
    expect(args.get('reward.reward_model.enable')).toBe('True');
    expect(args.get('reward.reward_model.model_path')).toBe('$REWARD_MODEL_PATH');
    expect(trlText('grpo', { rewardModelWeight: 1 })).toMatch(
      /note: rewardModelWeight:.*RewardTrainer/,
    );
    expect(verlText('grpo')).not.toContain('reward.reward_model');
  });

  it('the files name the pinned releases', () => {
    expect(trlText('grpo')).toContain(`TRL ${FLAVOR_RELEASES.trl.release}`);
    expect(verlText('grpo')).toContain(`verl ${FLAVOR_RELEASES.verl.release}`);
  });

  it('algorithms without a table say why; a bad config names the field', () => {
    for (const name of ['q-learning', 'ppo-mlp']) {
      expect(frameworkExport(algo(name), defaultsOf(name)).ok).toBe(false);
    }
    expect(() => frameworkExport(algo('grpo'), { ...defaultsOf('grpo'), lr: -1 })).toThrow(
      ImportError,
    );
    expect(() => frameworkExport(algo('grpo'), { ...defaultsOf('grpo'), lr: -1 })).toThrow(
      'config.lr: must be a number in (0, 1], got -1',
    );
  });
});

describe('the mapping table', () => {
  it('has one row per setting of each exported algorithm, and no others', () => {
    for (const [name, table] of Object.entries(FRAMEWORK_TABLES)) {
      expect(Object.keys(table.rows)).toEqual(Object.keys(algo(name).spec));
    }
  });
});

describe("the specs' framework strings", () => {
  /** The names a spec's framework string gives one framework, e.g. "verl: a.b, c.d; TRL: x". */
  function specNames(framework: string | undefined, label: 'verl' | 'TRL'): string | undefined {
    return framework
      ?.split(';')
      .map((part) => part.trim())
      .find((part) => part.startsWith(`${label}:`));
  }

  it('name what the export emits, except where listed with the reason', () => {
    // Each row's names should appear in the spec's "verl: …" / "TRL: …" text (verl paths by their
    // last segment, since the specs shorten them). Where they do not, the reason is here.
    const differences: string[] = [];
    for (const [name, table] of Object.entries(FRAMEWORK_TABLES)) {
      for (const [field, row] of Object.entries(table.rows)) {
        const framework = algo(name).spec[field]!.framework;
        for (const [label, mapping] of [
          ['TRL', row.trl],
          ['verl', row.verl],
        ] as const) {
          const text = specNames(framework, label);
          if (!text) continue;
          const names = mapping.names.map((n) => (label === 'verl' ? n.split('.').pop()! : n));
          if (names.length === 0 || !names.some((n) => text.includes(n))) {
            differences.push(
              `${name}.${field} ${label}: [${mapping.names.join(', ')}] vs "${text}"`,
            );
          }
        }
      }
    }
    expect(differences).toEqual([
      // Not a name: TRL's GRPO has no estimator option (it always uses k3); both say so.
      'grpo.klEstimator TRL: [] vs "TRL: k3 always"',
      // verl v0.9 has no round limit; the spec says so in words.
      'grpo.maxGenerationRounds verl: [] vs "verl: none (v0.9 ignores algorithm.filter_groups.max_num_gen_batches)"',
      // The exported reward code carries the weights (TRL could weigh separate functions instead).
      'grpo.correctWeight TRL: [] vs "TRL: reward_weights (accuracy_reward)"',
      'grpo.formatWeight TRL: [] vs "TRL: reward_weights (a format reward function)"',
      // The spec names TRL's computed batch_size; the argument one sets is per_device_train_batch_size.
      'ppo.promptsPerUpdate TRL: [per_device_train_batch_size, gradient_accumulation_steps] vs "TRL: batch_size"',
      // TrainingArguments has max_grad_norm, but TRL's PPOTrainer does not clip with it.
      'ppo.maxGradNorm TRL: [] vs "TRL: max_grad_norm"',
      // TRL's PPOConfig has whiten_rewards, not whiten_advantages; it always whitens advantages.
      'ppo.whitenAdvantages TRL: [] vs "TRL: whiten_advantages"',
      // verl whitens GAE advantages unconditionally (masked_whiten); there is no switch.
      'ppo.whitenAdvantages verl: [] vs "verl: masked_whiten in GAE"',
      'ppo.correctWeight TRL: [] vs "TRL: reward_weights (accuracy_reward)"',
      'ppo.formatWeight TRL: [] vs "TRL: reward_weights (a format reward function)"',
      // verl has no DPO trainer; the spec names the sampling settings verl's rollout would take.
      'dpo.samplesPerPrompt verl: [] vs "verl: rollout.n"',
      // DPOConfig trains on fixed pairs: the sampling settings go to the script's sampling note.
      'dpo.temperature TRL: [] vs "TRL: temperature"',
      'dpo.temperature verl: [] vs "verl: rollout.temperature"',
      'dpo.maxNewTokens TRL: [] vs "TRL: max_completion_length"',
      'dpo.maxNewTokens verl: [] vs "verl: data.max_response_length"',
    ]);
  });
});
