/**
 * "Take it further": a run's config as a TRL snippet (GRPOConfig for the GRPO family, PPOConfig
 * for PPO) and as verl command-line overrides (Hydra `path=value`, one per line), for learners
 * who move from the browser to the real frameworks.
 *
 * The mapping is one explicit table per algorithm below: our field → TRL argument / verl path /
 * note, in the spec's field order. It follows the `framework` strings of the ConfigSpecs
 * (src/rl/grpo.ts, src/rl/ppo-lm.ts); tests/compare/framework-export.test.ts checks each row
 * against them and lists where they differ and why. Every setting with no equivalent in a
 * framework is written as a comment line
 *   # no equivalent: <field> = <value> — <why>
 * and mappings that hold only approximately get a "# note:" line. Names as of TRL's GRPOConfig
 * (scale_rewards as 'group' | 'batch' | 'none', loss_type 'dapo' default) and its PPOConfig with
 * OnPolicyConfig fields (num_ppo_epochs, num_mini_batches, response_length), and verl's
 * ppo_trainer.yaml.
 */
import type { FieldSpec } from '../util/hyperparams';
import { REWARD_ROWS } from './framework-export-rewards';
import { expectSettings } from './json-checks';
import type { AlgorithmInfo, Settings } from './run-record';

export type SettingValue = Settings[string];
/** A Python / Hydra value. */
type Value = number | boolean | string | null;

interface Line {
  name: string;
  value: Value;
  /** Print as a float (1.0, not 1): the field is a real number. */
  float?: boolean;
}

/** What one field becomes in one framework: lines to set, or why there is no equivalent. */
export type Emitted = { set: Line[]; note?: string } | { none: string };

export interface Mapping {
  /** The framework names this field maps to, as documentation (and for the spec cross-check). */
  names: readonly string[];
  emit(value: SettingValue, config: Settings, field: FieldSpec): Emitted;
}

export interface FieldRow {
  trl: Mapping;
  verl: Mapping;
}

export interface FrameworkTable {
  /** The TRL config class. */
  trlClass: 'GRPOConfig' | 'PPOConfig';
  /** Lines every export of this algorithm starts with (verl), e.g. algorithm.adv_estimator=gae. */
  verlFixed: readonly Line[];
  /** Notes that hold for every config of the algorithm. */
  trlNotes: readonly string[];
  verlNotes: readonly string[];
  rows: Readonly<Record<string, FieldRow>>;
}

// ——— Table builders ———

/** The same value under `name`. */
const to = (name: string, note?: string): Mapping => ({
  names: [name],
  emit: (value, _config, field) => ({
    set: [{ name, value, float: field.kind === 'number' }],
    ...(note ? { note } : {}),
  }),
});

/** The same value under several names (verl's actor and critic). */
const toAll = (...names: string[]): Mapping => ({
  names,
  emit: (value, _config, field) => ({
    set: names.map((name) => ({ name, value, float: field.kind === 'number' })),
  }),
});

/** A translated value; `translate` returns { none } for values without an equivalent. */
const mapped = (
  name: string,
  translate: (value: SettingValue, config: Settings) => Value | { none: string },
  note?: (value: SettingValue, config: Settings) => string | undefined,
): Mapping => ({
  names: [name],
  emit: (value, config, field) => {
    const out = translate(value, config);
    if (out !== null && typeof out === 'object') return out;
    const text = note?.(value, config);
    return {
      set: [{ name, value: out, float: field.kind === 'number' && typeof out === 'number' }],
      ...(text ? { note: text } : {}),
    };
  },
});

/** A fixed lookup of choice values. */
const choice = (
  name: string,
  table: Record<string, Value>,
  why: string,
  note?: (value: SettingValue) => string | undefined,
): Mapping =>
  mapped(
    name,
    (value) => (Object.hasOwn(table, String(value)) ? table[String(value)]! : { none: why }),
    note,
  );

/** No equivalent in this framework, with the reason (which may depend on the value). */
const none = (why: string | ((value: SettingValue, config: Settings) => string)): Mapping => ({
  names: [],
  emit: (value, config) => ({ none: typeof why === 'string' ? why : why(value, config) }),
});

/** Full control: any lines from the value and the whole config. */
const custom = (
  names: readonly string[],
  emit: (value: SettingValue, config: Settings) => Emitted,
): Mapping => ({ names, emit: (value, config) => emit(value, config) });

const num = (v: SettingValue | undefined) => Number(v);

/** No equivalent, said only while the setting is on (above 0): off is what the frameworks do. */
const noneWhenOn = (why: string): Mapping => ({
  names: [],
  emit: (value) => (num(value) > 0 ? { none: why } : { set: [] }),
});

const NO_PTX =
  "no supervised (ptx) term in its RL trainers; OpenRLHF's ptx_coef with --pretrain_data is the equivalent";
const RETAINED_EVAL =
  'an evaluation, not a training setting: score the retained task as a validation set';

/** The retained-task settings (src/rl/retained-task.ts), shared by GRPO and PPO. */
const RETAINED_ROWS: Readonly<Record<string, FieldRow>> = {
  ptxCoef: { trl: noneWhenOn(`TRL has ${NO_PTX}`), verl: noneWhenOn(`verl has ${NO_PTX}`) },
  // Read only with ptxCoef > 0; the ptxCoef line already says there is no equivalent.
  ptxBatch: { trl: custom([], () => ({ set: [] })), verl: custom([], () => ({ set: [] })) },
  retainedEvalPrompts: {
    trl: noneWhenOn(`${RETAINED_EVAL} (eval_dataset with eval_strategy)`),
    verl: noneWhenOn(`${RETAINED_EVAL} (data.val_files with trainer.test_freq)`),
  },
};

const NO_CLIP_VERL =
  'verl always clips the gradient norm (grad_clip); 0 there would scale every gradient to 0 — use a large value to turn clipping off';

/** Our KL estimators → verl's kl_loss_type / kl_penalty names. */
const VERL_KL = { k1: 'kl', k2: 'mse', k3: 'low_var_kl' } as const;
const VERL_KL_NOTE = (v: SettingValue) =>
  v === 'k3' ? "verl's low_var_kl clamps each token's estimate to [-10, 10]" : undefined;

/** Our loss aggregation → verl loss_agg_mode (dr-grpo has no verl mode). */
const VERL_AGG: Record<string, Value> = {
  'token-mean': 'token-mean',
  'seq-mean-token-mean': 'seq-mean-token-mean',
  'seq-mean-token-sum': 'seq-mean-token-sum',
  'seq-mean-token-sum-norm': 'seq-mean-token-sum-norm',
};
const VERL_AGG_WHY =
  "verl's nearest mode, seq-mean-token-sum-norm, divides by a constant without the batch size";
const SUM_NORM_NOTE = (v: SettingValue) =>
  v === 'seq-mean-token-sum-norm'
    ? "verl divides by the response length dimension; this lab's trainers divide by the whole padded sequence (prompt + completion)"
    : undefined;

// ——— GRPO ———

export const GRPO_TABLE: FrameworkTable = {
  trlClass: 'GRPOConfig',
  verlFixed: [],
  trlNotes: [],
  verlNotes: [],
  rows: {
    advantageEstimator: {
      trl: custom([], (v) =>
        v === 'grpo'
          ? { set: [] } // GRPOConfig is GRPO
          : {
              none:
                v === 'rloo'
                  ? 'TRL has RLOO as its own trainer (RLOOConfig), not as a GRPOConfig option'
                  : 'TRL has no REINFORCE++ advantage estimator',
            },
      ),
      verl: choice(
        'algorithm.adv_estimator',
        {
          grpo: 'grpo',
          rloo: 'rloo',
          'reinforce++': 'reinforce_plus_plus',
          'reinforce++-baseline': 'reinforce_plus_plus_baseline',
        },
        'unknown estimator',
      ),
    },
    groupSize: { trl: to('num_generations'), verl: to('actor_rollout_ref.rollout.n') },
    promptsPerUpdate: {
      trl: custom(['per_device_train_batch_size', 'gradient_accumulation_steps'], (v, c) => ({
        set: [
          { name: 'per_device_train_batch_size', value: num(v) * num(c.groupSize) },
          { name: 'gradient_accumulation_steps', value: 1 },
        ],
        note: 'per_device_train_batch_size counts completions (promptsPerUpdate × groupSize) on one process; one optimizer step per generated batch',
      })),
      verl: custom(
        ['data.train_batch_size', 'actor_rollout_ref.actor.ppo_mini_batch_size'],
        (v) => ({
          set: [
            { name: 'data.train_batch_size', value: num(v) },
            { name: 'actor_rollout_ref.actor.ppo_mini_batch_size', value: num(v) },
          ],
          note: 'both count prompts; a mini-batch of the whole batch gives one optimizer step per iteration, as here',
        }),
      ),
    },
    maxNewTokens: { trl: to('max_completion_length'), verl: to('data.max_response_length') },
    temperature: { trl: to('temperature'), verl: to('actor_rollout_ref.rollout.temperature') },
    topK: {
      trl: to('top_k'),
      verl: mapped('actor_rollout_ref.rollout.top_k', (v) => (num(v) === 0 ? -1 : num(v))),
    },
    topP: { trl: to('top_p'), verl: to('actor_rollout_ref.rollout.top_p') },
    lr: { trl: to('learning_rate'), verl: to('actor_rollout_ref.actor.optim.lr') },
    weightDecay: {
      trl: to('weight_decay'),
      verl: to('actor_rollout_ref.actor.optim.weight_decay'),
    },
    maxGradNorm: {
      trl: to('max_grad_norm'),
      verl: mapped('actor_rollout_ref.actor.grad_clip', (v) =>
        num(v) === 0 ? { none: NO_CLIP_VERL } : num(v),
      ),
    },
    clipLow: { trl: to('epsilon'), verl: to('actor_rollout_ref.actor.clip_ratio_low') },
    clipHigh: { trl: to('epsilon_high'), verl: to('actor_rollout_ref.actor.clip_ratio_high') },
    dualClip: {
      trl: mapped(
        'delta',
        (v) => (num(v) === 0 ? null : num(v)),
        (v, c) =>
          num(v) > 0
            ? `TRL's delta caps the ratio of every token; for negative advantages that is dual clip, and it changes nothing else while delta > 1 + epsilon_high (${1 + num(c.clipHigh)})`
            : undefined,
      ),
      verl: mapped('actor_rollout_ref.actor.clip_ratio_c', (v) =>
        num(v) === 0
          ? {
              none: 'verl always applies dual clip to negative advantages (clip_ratio_c, default 3.0, must be > 1); a very large clip_ratio_c makes it inactive',
            }
          : num(v),
      ),
    },
    lossAggregation: {
      trl: choice(
        'loss_type',
        { 'token-mean': 'dapo', 'seq-mean-token-mean': 'grpo', 'dr-grpo': 'dr_grpo' },
        "TRL's loss_type has no sequence-sum mode",
        (v) =>
          v === 'dr-grpo'
            ? "TRL's dr_grpo divides by max_completion_length; this lab's GRPO divides by the whole padded sequence (prompt + completion)"
            : undefined,
      ),
      verl: choice('actor_rollout_ref.actor.loss_agg_mode', VERL_AGG, VERL_AGG_WHY, SUM_NORM_NOTE),
    },
    stdNormalization: {
      trl: to(
        'scale_rewards',
        "scale_rewards takes 'group' / 'batch' / 'none' in recent TRL; older releases take True (group) or False (none)",
      ),
      verl: choice(
        'algorithm.norm_adv_by_std_in_grpo',
        { group: true, none: false },
        "verl divides by the group's std or not at all; it has no batch std",
      ),
    },
    klCoef: {
      trl: custom(['beta'], (v, c) =>
        c.klPenalty === 'loss'
          ? { set: [{ name: 'beta', value: num(v), float: true }] }
          : {
              none: "TRL's GRPO puts the KL in the loss only (beta); this run subtracts it from the rewards",
            },
      ),
      verl: custom(
        ['actor_rollout_ref.actor.kl_loss_coef', 'algorithm.kl_ctrl.kl_coef'],
        (v, c) => ({
          set: [
            {
              name:
                c.klPenalty === 'loss'
                  ? 'actor_rollout_ref.actor.kl_loss_coef'
                  : 'algorithm.kl_ctrl.kl_coef',
              value: num(v),
              float: true,
            },
          ],
        }),
      ),
    },
    klEstimator: {
      trl: none((v) =>
        v === 'k3'
          ? "TRL's GRPO always uses k3, as this run does"
          : "TRL's GRPO always uses the k3 estimator",
      ),
      verl: custom(['actor_rollout_ref.actor.kl_loss_type', 'algorithm.kl_penalty'], (v, c) => {
        const note = VERL_KL_NOTE(v);
        return {
          set: [
            {
              name:
                c.klPenalty === 'loss'
                  ? 'actor_rollout_ref.actor.kl_loss_type'
                  : 'algorithm.kl_penalty',
              value: VERL_KL[v as keyof typeof VERL_KL],
            },
          ],
          ...(note ? { note } : {}),
        };
      }),
    },
    klPenalty: {
      trl: none((v) =>
        v === 'loss'
          ? "TRL's GRPO always puts the KL in the loss, as this run does"
          : "TRL's GRPO has no KL penalty in the reward",
      ),
      verl: custom(
        ['actor_rollout_ref.actor.use_kl_loss', 'algorithm.use_kl_in_reward'],
        (v, c) => ({
          set: [
            {
              name: 'actor_rollout_ref.actor.use_kl_loss',
              value: v === 'loss' && num(c.klCoef) > 0,
            },
            { name: 'algorithm.use_kl_in_reward', value: v === 'reward' && num(c.klCoef) > 0 },
          ],
        }),
      ),
    },
    entropyCoef: {
      trl: none("TRL's GRPO has no entropy bonus"),
      verl: to('actor_rollout_ref.actor.entropy_coeff'),
    },
    iterations: { trl: to('num_iterations'), verl: to('actor_rollout_ref.actor.ppo_epochs') },
    dynamicSampling: {
      trl: none("TRL's GRPO has no dynamic sampling: it trains on every group"),
      // Off: nothing to set (verl's own default), and the key only exists where the DAPO recipe's
      // config is loaded.
      verl: custom(['algorithm.filter_groups.enable'], (v) =>
        v
          ? {
              set: [{ name: 'algorithm.filter_groups.enable', value: true }],
              note: "dynamic sampling is verl's DAPO recipe (recipe/dapo); it also needs algorithm.filter_groups.metric, the reward to filter on",
            }
          : { set: [] },
      ),
    },
    maxGenerationRounds: {
      trl: none("TRL's GRPO has no dynamic sampling"),
      verl: custom(
        ['algorithm.filter_groups.max_num_gen_batches'],
        (v, c) =>
          c.dynamicSampling
            ? {
                set: [{ name: 'algorithm.filter_groups.max_num_gen_batches', value: num(v) }],
                note: "verl's DAPO recipe stops with an error when the rounds run out; this lab tops the batch up with uninformative groups",
              }
            : { set: [] }, // only read with dynamic sampling on
      ),
    },
    maskTruncated: {
      trl: to('mask_truncated_completions'),
      verl: none(
        "verl has no switch to leave truncated completions out of the loss (DAPO's overlong reward shaping is the nearest)",
      ),
    },
    ...REWARD_ROWS,
    ...RETAINED_ROWS,
  },
};

// ——— PPO (language model, value head) ———

export const PPO_TABLE: FrameworkTable = {
  trlClass: 'PPOConfig',
  verlFixed: [{ name: 'algorithm.adv_estimator', value: 'gae' }],
  trlNotes: [
    "TRL's PPOTrainer takes a separate value model; this lab's critic is a value head on the policy's trunk",
  ],
  verlNotes: [
    "verl trains the critic as a separate model; this lab's critic is a value head on the policy's trunk",
    'verl also applies dual clip (actor_rollout_ref.actor.clip_ratio_c, default 3.0) to negative advantages; this run does not',
  ],
  rows: {
    promptsPerUpdate: {
      trl: custom(['per_device_train_batch_size', 'gradient_accumulation_steps'], (v, c) => ({
        set: [
          { name: 'per_device_train_batch_size', value: num(v) / num(c.minibatches) },
          { name: 'gradient_accumulation_steps', value: 1 },
        ],
        note: "TRL's rollout batch is per_device_train_batch_size × gradient_accumulation_steps × num_mini_batches (one process) = promptsPerUpdate",
      })),
      verl: to('data.train_batch_size'),
    },
    maxNewTokens: { trl: to('response_length'), verl: to('data.max_response_length') },
    temperature: { trl: to('temperature'), verl: to('actor_rollout_ref.rollout.temperature') },
    lr: {
      trl: to('learning_rate'),
      verl: toAll('actor_rollout_ref.actor.optim.lr', 'critic.optim.lr'),
    },
    weightDecay: {
      trl: to('weight_decay'),
      verl: toAll('actor_rollout_ref.actor.optim.weight_decay', 'critic.optim.weight_decay'),
    },
    maxGradNorm: {
      trl: none("TRL's PPOTrainer steps the optimizer without clipping the gradient norm"),
      verl: custom(['actor_rollout_ref.actor.grad_clip', 'critic.grad_clip'], (v) =>
        num(v) === 0
          ? { none: NO_CLIP_VERL }
          : {
              set: ['actor_rollout_ref.actor.grad_clip', 'critic.grad_clip'].map((name) => ({
                name,
                value: num(v),
                float: true,
              })),
            },
      ),
    },
    gamma: { trl: to('gamma'), verl: to('algorithm.gamma') },
    lambda: { trl: to('lam'), verl: to('algorithm.lam') },
    clipLow: { trl: to('cliprange'), verl: to('actor_rollout_ref.actor.clip_ratio_low') },
    clipHigh: {
      trl: custom(['cliprange'], (v, c) =>
        v === c.clipLow
          ? { set: [] } // cliprange (from clipLow) covers both sides
          : { none: `TRL's PPO clips symmetrically (cliprange = clipLow = ${String(c.clipLow)})` },
      ),
      verl: to('actor_rollout_ref.actor.clip_ratio_high'),
    },
    cliprangeValue: { trl: to('cliprange_value'), verl: to('critic.cliprange_value') },
    vfCoef: {
      trl: to('vf_coef'),
      verl: none(
        'verl trains the critic with its own optimizer, so no weight joins the two losses',
      ),
    },
    entropyCoef: {
      trl: none("TRL's PPO has no entropy bonus"),
      verl: to('actor_rollout_ref.actor.entropy_coeff'),
    },
    epochs: {
      trl: to('num_ppo_epochs'),
      verl: toAll('actor_rollout_ref.actor.ppo_epochs', 'critic.ppo_epochs'),
    },
    minibatches: {
      trl: to('num_mini_batches'),
      verl: custom(
        ['actor_rollout_ref.actor.ppo_mini_batch_size', 'critic.ppo_mini_batch_size'],
        (v, c) => ({
          set: ['actor_rollout_ref.actor.ppo_mini_batch_size', 'critic.ppo_mini_batch_size'].map(
            (name) => ({
              name,
              value: num(c.promptsPerUpdate) / num(v),
            }),
          ),
          note: 'ppo_mini_batch_size is a size in prompts: promptsPerUpdate / minibatches',
        }),
      ),
    },
    whitenAdvantages: {
      trl: none((v) =>
        v
          ? "TRL's PPO always whitens advantages, as this run does"
          : "TRL's PPO always whitens advantages",
      ),
      verl: none((v) =>
        v
          ? "verl's GAE always whitens advantages, as this run does"
          : "verl's GAE always whitens advantages",
      ),
    },
    gaeMaskMode: {
      trl: none((v) =>
        v === 'zero-step'
          ? "TRL's PPOTrainer always runs GAE through untrained tokens as zero-reward steps, as this run does"
          : "TRL's PPOTrainer always runs GAE through untrained tokens as zero-reward steps ('zero-step')",
      ),
      verl: none((v) =>
        v === 'skip'
          ? "verl's GAE always skips untrained tokens, as this run does"
          : "verl's GAE always skips untrained tokens ('skip')",
      ),
    },
    targetKl: {
      trl: none("TRL's PPOTrainer has no early stop of the epochs on the KL"),
      verl: none('verl has no early stop of the epochs on the KL'),
    },
    klCoef: {
      trl: to('kl_coef'),
      verl: custom(['algorithm.use_kl_in_reward', 'algorithm.kl_ctrl.kl_coef'], (v) => ({
        set: [
          { name: 'algorithm.use_kl_in_reward', value: num(v) > 0 },
          { name: 'algorithm.kl_ctrl.kl_coef', value: num(v), float: true },
        ],
      })),
    },
    klEstimator: {
      trl: choice(
        'kl_estimator',
        { k1: 'k1', k3: 'k3' },
        "TRL's PPO offers the k1 and k3 estimators only",
      ),
      verl: choice('algorithm.kl_penalty', VERL_KL, 'unknown estimator', VERL_KL_NOTE),
    },
    lossAggregation: {
      trl: none((v) =>
        v === 'token-mean'
          ? "TRL's PPO averages over tokens (token-mean), as this run does"
          : "TRL's PPO always averages over tokens (token-mean)",
      ),
      verl: choice('actor_rollout_ref.actor.loss_agg_mode', VERL_AGG, VERL_AGG_WHY, SUM_NORM_NOTE),
    },
    ...REWARD_ROWS,
    ...RETAINED_ROWS,
  },
};

/** The tables by algorithm name (the registry's keys). */
export const FRAMEWORK_TABLES: Readonly<Record<string, FrameworkTable>> = {
  grpo: GRPO_TABLE,
  ppo: PPO_TABLE,
};

export type FrameworkExport =
  { ok: true; trl: string; verl: string } | { ok: false; reason: string };

/**
 * The TRL snippet and verl overrides for `config` (every setting of `algo`, validated by its spec;
 * a bad config throws an ImportError naming the field). Algorithms without a table give
 * { ok: false, reason }.
 */
export function frameworkExport(algo: AlgorithmInfo, config: Settings): FrameworkExport {
  const table = FRAMEWORK_TABLES[algo.name];
  if (!table) return { ok: false, reason: unsupportedReason(algo) };
  const valid = expectSettings(config, 'config', algo, true);
  const trl = collect(table, algo, valid, 'trl');
  const verl = collect(table, algo, valid, 'verl');

  const trlText = [
    `from trl import ${table.trlClass}`,
    '',
    `config = ${table.trlClass}(`,
    ...trl.lines.map((l) => `    ${l.name}=${python(l)},`),
    ')',
    ...trl.none,
    ...[...table.trlNotes, ...trl.notes].map((n) => `# note: ${n}`),
  ];
  const verlText = [
    ...[...table.verlFixed, ...verl.lines].map((l) => `${l.name}=${hydra(l)}`),
    ...verl.none,
    ...[...table.verlNotes, ...verl.notes].map((n) => `# note: ${n}`),
  ];
  return { ok: true, trl: trlText.join('\n') + '\n', verl: verlText.join('\n') + '\n' };
}

function collect(
  table: FrameworkTable,
  algo: AlgorithmInfo,
  config: Settings,
  framework: 'trl' | 'verl',
) {
  const lines: Line[] = [];
  const missing: string[] = [];
  const notes: string[] = [];
  for (const [field, spec] of Object.entries(algo.spec)) {
    const row = table.rows[field];
    if (!row)
      throw new Error(`framework-export: no ${framework} mapping for ${algo.name}.${field}`);
    const value = config[field]!;
    const out = row[framework].emit(value, config, spec);
    if ('none' in out) {
      missing.push(`# no equivalent: ${field} = ${String(value)} — ${out.none}`);
      continue;
    }
    lines.push(...out.set);
    if (out.note) notes.push(`${field}: ${out.note}`);
  }
  return { lines, none: missing, notes };
}

function unsupportedReason(algo: AlgorithmInfo): string {
  if (algo.family === 'env') {
    return `${algo.name} trains on a small environment; TRL and verl train language models (each setting's framework note names its CleanRL or gymnasium counterpart)`;
  }
  return `there is no TRL / verl export for ${algo.name} yet`;
}

function numberText(value: number, float: boolean | undefined): string {
  const text = String(value);
  return float && /^-?\d+$/.test(text) ? `${text}.0` : text;
}

/** A value as Python source. */
function python(line: Line): string {
  const { value } = line;
  if (value === null) return 'None';
  if (typeof value === 'boolean') return value ? 'True' : 'False';
  if (typeof value === 'number') return numberText(value, line.float);
  return JSON.stringify(value);
}

/** A value as a Hydra override value. */
function hydra(line: Line): string {
  const { value } = line;
  if (value === null) return 'null';
  if (typeof value === 'boolean') return value ? 'True' : 'False';
  if (typeof value === 'number') return numberText(value, line.float);
  return /^[\w.-]+$/.test(value) ? value : `'${value.replaceAll("'", "\\'")}'`;
}
