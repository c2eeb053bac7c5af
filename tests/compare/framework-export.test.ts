import { describe, expect, it } from 'vitest';
import { FRAMEWORK_TABLES, frameworkExport } from '../../src/compare/framework-export';
import { ImportError } from '../../src/compare/json-checks';
import { catalog, defaultsOf } from './fixtures';

const algo = (name: string) => catalog.algorithms.find((a) => a.name === name)!;

function exported(name: string, changes: Record<string, number | boolean | string> = {}) {
  const out = frameworkExport(algo(name), { ...defaultsOf(name), ...changes });
  if (!out.ok) throw new Error(out.reason);
  return out;
}

describe('frameworkExport: golden, written by hand from what TRL and verl call these options', () => {
  it('default GRPO → GRPOConfig', () => {
    // DEFAULT_GRPO_CONFIG: G = 8, 8 prompts → 64 completions per step; TRL's top_k 0 = all;
    // token-mean is TRL's 'dapo' (normalised by the batch's tokens); KL off (beta 0).
    expect(exported('grpo').trl).toBe(
      [
        'from trl import GRPOConfig',
        '',
        'config = GRPOConfig(',
        '    num_generations=8,',
        '    per_device_train_batch_size=64,',
        '    gradient_accumulation_steps=1,',
        '    max_completion_length=8,',
        '    temperature=1.0,',
        '    top_k=0,',
        '    top_p=1.0,',
        '    learning_rate=0.001,',
        '    weight_decay=0.0,',
        '    max_grad_norm=1.0,',
        '    epsilon=0.2,',
        '    epsilon_high=0.2,',
        '    delta=None,',
        '    loss_type="dapo",',
        '    scale_rewards="group",',
        '    beta=0.0,',
        '    num_iterations=1,',
        '    mask_truncated_completions=False,',
        ')',
        "# no equivalent: klEstimator = k3 — TRL's GRPO always uses k3, as this run does",
        "# no equivalent: klPenalty = loss — TRL's GRPO always puts the KL in the loss, as this run does",
        "# no equivalent: entropyCoef = 0 — TRL's GRPO has no entropy bonus",
        "# no equivalent: dynamicSampling = false — TRL's GRPO has no dynamic sampling: it trains on every group",
        "# no equivalent: maxGenerationRounds = 4 — TRL's GRPO has no dynamic sampling",
        '# note: promptsPerUpdate: per_device_train_batch_size counts completions (promptsPerUpdate × groupSize) on one process; one optimizer step per generated batch',
        "# note: stdNormalization: scale_rewards takes 'group' / 'batch' / 'none' in recent TRL; older releases take True (group) or False (none)",
        '',
      ].join('\n'),
    );
  });

  it('default GRPO → verl overrides', () => {
    // verl's top_k −1 = all; norm_adv_by_std_in_grpo True = divide by the group std; k3 is
    // verl's low_var_kl; dual clip cannot be turned off in verl.
    expect(exported('grpo').verl).toBe(
      [
        'algorithm.adv_estimator=grpo',
        'actor_rollout_ref.rollout.n=8',
        'data.train_batch_size=8',
        'actor_rollout_ref.actor.ppo_mini_batch_size=8',
        'data.max_response_length=8',
        'actor_rollout_ref.rollout.temperature=1.0',
        'actor_rollout_ref.rollout.top_k=-1',
        'actor_rollout_ref.rollout.top_p=1.0',
        'actor_rollout_ref.actor.optim.lr=0.001',
        'actor_rollout_ref.actor.optim.weight_decay=0.0',
        'actor_rollout_ref.actor.grad_clip=1.0',
        'actor_rollout_ref.actor.clip_ratio_low=0.2',
        'actor_rollout_ref.actor.clip_ratio_high=0.2',
        'actor_rollout_ref.actor.loss_agg_mode=token-mean',
        'algorithm.norm_adv_by_std_in_grpo=True',
        'actor_rollout_ref.actor.kl_loss_coef=0.0',
        'actor_rollout_ref.actor.kl_loss_type=low_var_kl',
        'actor_rollout_ref.actor.use_kl_loss=False',
        'algorithm.use_kl_in_reward=False',
        'actor_rollout_ref.actor.entropy_coeff=0.0',
        'actor_rollout_ref.actor.ppo_epochs=1',
        '# no equivalent: dualClip = 0 — verl always applies dual clip to negative advantages (clip_ratio_c, default 3.0, must be > 1); a very large clip_ratio_c makes it inactive',
        "# no equivalent: maskTruncated = false — verl has no switch to leave truncated completions out of the loss (DAPO's overlong reward shaping is the nearest)",
        '# note: promptsPerUpdate: both count prompts; a mini-batch of the whole batch gives one optimizer step per iteration, as here',
        "# note: klEstimator: verl's low_var_kl clamps each token's estimate to [-10, 10]",
        '',
      ].join('\n'),
    );
  });

  it('default PPO → PPOConfig', () => {
    // 32 prompts in 2 minibatches: per_device_train_batch_size 16 × 1 × num_mini_batches 2 = 32.
    expect(exported('ppo').trl).toBe(
      [
        'from trl import PPOConfig',
        '',
        'config = PPOConfig(',
        '    per_device_train_batch_size=16,',
        '    gradient_accumulation_steps=1,',
        '    response_length=8,',
        '    temperature=1.0,',
        '    learning_rate=0.001,',
        '    weight_decay=0.0,',
        '    gamma=1.0,',
        '    lam=0.95,',
        '    cliprange=0.2,',
        '    cliprange_value=0.2,',
        '    vf_coef=0.1,',
        '    num_ppo_epochs=2,',
        '    num_mini_batches=2,',
        '    kl_coef=0.0,',
        '    kl_estimator="k1",',
        ')',
        "# no equivalent: maxGradNorm = 1 — TRL's PPOTrainer steps the optimizer without clipping the gradient norm",
        "# no equivalent: entropyCoef = 0 — TRL's PPO has no entropy bonus",
        "# no equivalent: whitenAdvantages = true — TRL's PPO always whitens advantages, as this run does",
        "# no equivalent: gaeMaskMode = skip — TRL's PPOTrainer always runs GAE through untrained tokens as zero-reward steps ('zero-step')",
        "# no equivalent: targetKl = 0 — TRL's PPOTrainer has no early stop of the epochs on the KL",
        "# no equivalent: lossAggregation = token-mean — TRL's PPO averages over tokens (token-mean), as this run does",
        "# note: TRL's PPOTrainer takes a separate value model; this lab's critic is a value head on the policy's trunk",
        "# note: promptsPerUpdate: TRL's rollout batch is per_device_train_batch_size × gradient_accumulation_steps × num_mini_batches (one process) = promptsPerUpdate",
        '',
      ].join('\n'),
    );
  });

  it('default PPO → verl overrides', () => {
    // verl's critic is its own model: lr, weight decay, grad clip and epochs are set for both;
    // ppo_mini_batch_size is in prompts: 32 / 2 = 16; k1 is verl's 'kl'.
    expect(exported('ppo').verl).toBe(
      [
        'algorithm.adv_estimator=gae',
        'data.train_batch_size=32',
        'data.max_response_length=8',
        'actor_rollout_ref.rollout.temperature=1.0',
        'actor_rollout_ref.actor.optim.lr=0.001',
        'critic.optim.lr=0.001',
        'actor_rollout_ref.actor.optim.weight_decay=0.0',
        'critic.optim.weight_decay=0.0',
        'actor_rollout_ref.actor.grad_clip=1.0',
        'critic.grad_clip=1.0',
        'algorithm.gamma=1.0',
        'algorithm.lam=0.95',
        'actor_rollout_ref.actor.clip_ratio_low=0.2',
        'actor_rollout_ref.actor.clip_ratio_high=0.2',
        'critic.cliprange_value=0.2',
        'actor_rollout_ref.actor.entropy_coeff=0.0',
        'actor_rollout_ref.actor.ppo_epochs=2',
        'critic.ppo_epochs=2',
        'actor_rollout_ref.actor.ppo_mini_batch_size=16',
        'critic.ppo_mini_batch_size=16',
        'algorithm.use_kl_in_reward=False',
        'algorithm.kl_ctrl.kl_coef=0.0',
        'algorithm.kl_penalty=kl',
        'actor_rollout_ref.actor.loss_agg_mode=token-mean',
        '# no equivalent: vfCoef = 0.1 — verl trains the critic with its own optimizer, so no weight joins the two losses',
        "# no equivalent: whitenAdvantages = true — verl's GAE always whitens advantages, as this run does",
        "# no equivalent: gaeMaskMode = skip — verl's GAE always skips untrained tokens, as this run does",
        '# no equivalent: targetKl = 0 — verl has no early stop of the epochs on the KL',
        "# note: verl trains the critic as a separate model; this lab's critic is a value head on the policy's trunk",
        '# note: verl also applies dual clip (actor_rollout_ref.actor.clip_ratio_c, default 3.0) to negative advantages; this run does not',
        '# note: minibatches: ppo_mini_batch_size is a size in prompts: promptsPerUpdate / minibatches',
        '',
      ].join('\n'),
    );
  });
});

describe('frameworkExport: other values', () => {
  it('a retained task: nothing while ptx and its check are off; "no equivalent" lines when on', () => {
    for (const name of ['grpo', 'ppo']) {
      const off = exported(name);
      expect(`${off.trl}\n${off.verl}`).not.toMatch(/ptx|retained/);
      const on = exported(name, { ptxCoef: 0.5, ptxBatch: 4, retainedEvalPrompts: 16 });
      const trl = on.trl.split('\n');
      const verl = on.verl.split('\n');
      expect(trl).toContain(
        "# no equivalent: ptxCoef = 0.5 — TRL has no supervised (ptx) term in its RL trainers; OpenRLHF's ptx_coef with --pretrain_data is the equivalent",
      );
      expect(verl).toContain(
        "# no equivalent: ptxCoef = 0.5 — verl has no supervised (ptx) term in its RL trainers; OpenRLHF's ptx_coef with --pretrain_data is the equivalent",
      );
      expect(trl).toContain(
        '# no equivalent: retainedEvalPrompts = 16 — an evaluation, not a training setting: score the retained task as a validation set (eval_dataset with eval_strategy)',
      );
      expect(verl).toContain(
        '# no equivalent: retainedEvalPrompts = 16 — an evaluation, not a training setting: score the retained task as a validation set (data.val_files with trainer.test_freq)',
      );
      // ptxBatch is read only with ptxCoef > 0, whose line already says there is no equivalent.
      expect(`${on.trl}\n${on.verl}`).not.toMatch(/ptxBatch/);
    }
  });

  it('GRPO variants (RLOO, dual clip, KL in the reward, DAPO)', () => {
    const out = exported('grpo', {
      advantageEstimator: 'rloo',
      dualClip: 3,
      klCoef: 0.05,
      klPenalty: 'reward',
      klEstimator: 'k1',
      lossAggregation: 'seq-mean-token-sum',
      stdNormalization: 'batch',
      maxGradNorm: 0,
      dynamicSampling: true,
      maxGenerationRounds: 6,
      clipHigh: 0.28,
    });
    const trl = out.trl.split('\n');
    const verl = out.verl.split('\n');
    expect(trl).toContain(
      '# no equivalent: advantageEstimator = rloo — TRL has RLOO as its own trainer (RLOOConfig), not as a GRPOConfig option',
    );
    expect(trl).toContain('    delta=3.0,');
    expect(trl).toContain('    max_grad_norm=0.0,');
    expect(trl).toContain('    scale_rewards="batch",');
    expect(trl).toContain(
      "# no equivalent: klCoef = 0.05 — TRL's GRPO puts the KL in the loss only (beta); this run subtracts it from the rewards",
    );
    expect(trl).toContain(
      "# no equivalent: lossAggregation = seq-mean-token-sum — TRL's loss_type has no sequence-sum mode",
    );
    // 1 + epsilon_high = 1.28: the dual clip reading of delta holds above it.
    expect(trl.some((l) => l.startsWith('# note: dualClip:') && l.endsWith('(1.28)'))).toBe(true);
    expect(verl).toEqual(
      expect.arrayContaining([
        'algorithm.adv_estimator=rloo',
        'actor_rollout_ref.actor.clip_ratio_c=3.0',
        'actor_rollout_ref.actor.loss_agg_mode=seq-mean-token-sum',
        'algorithm.kl_ctrl.kl_coef=0.05',
        'algorithm.kl_penalty=kl',
        'actor_rollout_ref.actor.use_kl_loss=False',
        'algorithm.use_kl_in_reward=True',
        'algorithm.filter_groups.enable=True',
        'algorithm.filter_groups.max_num_gen_batches=6',
        "# no equivalent: stdNormalization = batch — verl divides by the group's std or not at all; it has no batch std",
      ]),
    );
    expect(verl.some((l) => l.startsWith('actor_rollout_ref.actor.grad_clip'))).toBe(false);
    expect(
      verl.some((l) => l.startsWith('# no equivalent: maxGradNorm = 0 — verl always clips')),
    ).toBe(true);
  });

  it('a learned reward model: TRL takes it among reward_funcs, verl turns its reward model on', () => {
    const out = exported('grpo', { rewardModelWeight: 1, correctWeight: 0 });
    const trl = out.trl.split('\n');
    const verl = out.verl.split('\n');
    expect(
      trl.some((l) => l.startsWith('# note: rewardModelWeight:') && l.includes('RewardTrainer')),
    ).toBe(true);
    expect(verl).toContain('reward_model.enable=True');
    expect(
      verl.some(
        (l) => l.startsWith('# note: rewardModelWeight:') && l.includes('reward_model.model.path'),
      ),
    ).toBe(true);
    // At its default (0) nothing is printed for it.
    const plain = exported('grpo', {});
    expect(plain.trl).not.toContain('rewardModelWeight');
    expect(plain.verl).not.toContain('reward_model.enable');
  });

  it('PPO with asymmetric clipping, k2 and dr-grpo', () => {
    const out = exported('ppo', { clipHigh: 0.3, klEstimator: 'k2', lossAggregation: 'dr-grpo' });
    expect(out.trl).toContain(
      "# no equivalent: clipHigh = 0.3 — TRL's PPO clips symmetrically (cliprange = clipLow = 0.2)",
    );
    expect(out.trl).toContain(
      "# no equivalent: klEstimator = k2 — TRL's PPO offers the k1 and k3 estimators only",
    );
    expect(out.verl).toContain('algorithm.kl_penalty=mse\n');
    expect(out.verl).toContain(
      "# no equivalent: lossAggregation = dr-grpo — verl's nearest mode, seq-mean-token-sum-norm, divides by a constant without the batch size",
    );
  });

  it('algorithms without a table say why; a bad config names the field', () => {
    for (const name of ['q-learning', 'ppo-mlp', 'dpo']) {
      const out = frameworkExport(algo(name), defaultsOf(name));
      expect(out.ok).toBe(false);
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

  /** The names a spec's framework string gives one framework, e.g. "verl: a.b, c.d; TRL: x". */
  function specNames(framework: string | undefined, label: 'verl' | 'TRL'): string | undefined {
    return framework
      ?.split(';')
      .map((part) => part.trim())
      .find((part) => part.startsWith(`${label}:`));
  }

  it("agrees with the specs' framework strings, except where listed with the reason", () => {
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
      // The spec names TRL's computed batch_size; the argument one sets is per_device_train_batch_size.
      'ppo.promptsPerUpdate TRL: [per_device_train_batch_size, gradient_accumulation_steps] vs "TRL: batch_size"',
      // TrainingArguments has max_grad_norm, but TRL's PPOTrainer does not clip with it.
      'ppo.maxGradNorm TRL: [] vs "TRL: max_grad_norm"',
      // TRL's PPOConfig has whiten_rewards, not whiten_advantages; it always whitens advantages.
      'ppo.whitenAdvantages TRL: [] vs "TRL: whiten_advantages"',
      // verl whitens GAE advantages unconditionally (masked_whiten); there is no switch.
      'ppo.whitenAdvantages verl: [] vs "verl: masked_whiten in GAE"',
    ]);
  });
});
