/**
 * The framework release each flavor follows (src/ops/flavor.ts), and the definitions that changed
 * in a framework since the lab first followed it. A flavor follows the release named here; where an
 * older definition differs, CHANGED_DEFINITIONS says what changed and when, so a learner reading
 * an older paper or config knows which meaning it had.
 *
 * The commits are the tagged release commits. tests/fixtures/framework-snapshot.json was extracted
 * from TRL and verl at these commits (scripts/framework-snapshot/extract.py) and the export tests
 * check that it names the same ones.
 */
import type { Flavor } from './flavor';

export interface FrameworkRelease {
  /** What users call the framework. */
  name: string;
  /** The release tag. */
  release: string;
  /** The tagged commit. */
  commit: string;
  /** The release date (YYYY-MM-DD). */
  date: string;
}

export const FLAVOR_RELEASES: Readonly<Record<Flavor, FrameworkRelease>> = {
  verl: {
    name: 'verl',
    release: 'v0.9.0',
    commit: '483b8a009ba3a97563edee3a19887e4862b8094a',
    date: '2026-08-14',
  },
  trl: {
    name: 'TRL',
    release: 'v1.9.0',
    commit: '35def3ee000a87f6839e66f4b7749b06274ed1b3',
    date: '2026-07-21',
  },
  openrlhf: {
    name: 'OpenRLHF',
    release: 'v0.11.0',
    commit: '3c3be6234e0cb353e76bb8019947db9dfe99fca7',
    date: '2026-08-13',
  },
};

/** "verl v0.9.0" and the like. */
export function releaseLabel(flavor: Flavor): string {
  const r = FLAVOR_RELEASES[flavor];
  return `${r.name} ${r.release}`;
}

export interface ChangedDefinition {
  flavor: Flavor;
  /** The framework's own name of what changed. */
  name: string;
  /** When (the release or month that changed it). */
  when: string;
  before: string;
  now: string;
}

export const CHANGED_DEFINITIONS: readonly ChangedDefinition[] = [
  {
    flavor: 'verl',
    name: 'loss_agg_mode=seq-mean-token-sum-norm',
    when: 'February 2026 (v0.7.1)',
    before: 'Σ m·ℓ / loss_scale_factor (no division by the batch)',
    now: 'Σ m·ℓ / (B · loss_scale_factor): with loss_scale_factor = max response length it is Dr. GRPO',
  },
  {
    flavor: 'verl',
    name: 'loss_agg_mode=seq-mean-token-sum',
    when: 'February 2026 (v0.7.1)',
    before: 'every row counts in B',
    now: "rows without a trained token are left out of B when agg_loss counts the rows itself (verl's trainer passes the mini-batch size, every row)",
  },
  {
    flavor: 'verl',
    name: 'actor.grad_clip / critic.grad_clip',
    when: 'v0.8.0',
    before: 'the max gradient norm',
    now: 'no longer read: the engines clip with optim.clip_grad',
  },
  {
    flavor: 'verl',
    name: 'reward_model.overlong_buffer.*',
    when: 'by v0.9.0',
    before: "the DAPO recipe's overlong buffer",
    now: 'reward.reward_kwargs.overlong_buffer_cfg.{enable,len,penalty_factor} with reward.reward_kwargs.max_resp_len and the dapo reward manager',
  },
  {
    flavor: 'verl',
    name: 'algorithm.filter_groups',
    when: 'by v0.9.0',
    before: 'max_num_gen_batches bounded the generation rounds',
    now: 'metric is required; max_num_gen_batches is ignored (max_inflight_gen_batches bounds concurrent generation)',
  },
  {
    flavor: 'trl',
    name: 'PPOConfig / PPOTrainer',
    when: 'v0.29',
    before: 'from trl import PPOConfig',
    now: 'from trl.experimental.ppo import PPOConfig',
  },
  {
    flavor: 'trl',
    name: 'GRPOConfig.entropy_coef',
    when: 'v1.8',
    before: 'no entropy bonus',
    now: 'entropy_coef adds the mean per-token entropy to the loss',
  },
];
