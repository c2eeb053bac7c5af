/**
 * Every trainer by name, with its config spec and defaults, and how to build it. The CLI builds
 * runs from this table, and the lab's forms come from the same specs. Two families:
 *   - environment algorithms run on a gymnasium-shaped env (`--env`);
 *   - language-model algorithms train the transformer on a token task (`--task`).
 */
import { KArmedBandit, ContextualBandit } from '../envs/bandits';
import { CartPole } from '../envs/cartpole';
import { createCliffWalking } from '../envs/cliff-walking';
import { createFrozenLake } from '../envs/frozen-lake';
import { GRID_ENV_NAMES } from '../envs/grid-env-names';
import { GridWorld } from '../envs/gridworld';
import type { CharsetTask } from '../envs/token-tasks/shared';
import type { Env } from '../envs/types';
import type { LanguageModel } from '../models/language-model';
import type { Tokenizer } from '../models/tokenizer-api';
import { OpInputError } from '../ops/errors';
import { createDpoTrainer, DEFAULT_DPO_CONFIG, DPO_CONFIG_SPEC } from './dpo';
import { createGrpoTrainer } from './grpo';
import { DEFAULT_GRPO_CONFIG, GRPO_CONFIG_SPEC } from './grpo-config';
import { assertConfig, type ConfigSpec } from '../util/hyperparams';
import type { CurriculumScheduler } from './curriculum';
import {
  createPolicyIteration,
  DEFAULT_POLICY_ITERATION_CONFIG,
  POLICY_ITERATION_CONFIG_SPEC,
} from './policy-iteration';
import { createPpo } from './ppo';
import { CARTPOLE_TUNED, DEFAULT_PPO_CONFIG, PPO_CONFIG_SPEC } from './ppo-config';
import { createPpoLmTrainer, DEFAULT_PPO_LM_CONFIG, PPO_LM_CONFIG_SPEC } from './ppo-lm';
import { createQLearning, DEFAULT_Q_LEARNING_CONFIG, Q_LEARNING_CONFIG_SPEC } from './q-learning';
import { createReinforce, DEFAULT_REINFORCE_CONFIG, REINFORCE_CONFIG_SPEC } from './reinforce';
import { createSarsa, DEFAULT_SARSA_CONFIG, SARSA_CONFIG_SPEC } from './sarsa';
import { withGridInspector } from './grid-inspection';
import type { Trainer } from './trainer';
import { own } from '../util/own';
import type { CompletionScorer } from './reward-model';
import {
  createValueIteration,
  DEFAULT_VALUE_ITERATION_CONFIG,
  VALUE_ITERATION_CONFIG_SPEC,
} from './value-iteration';

type AnyConfig = Record<string, number | boolean | string>;
type AnyTrainer = Trainer<AnyConfig>;

type GridEnvName = (typeof GRID_ENV_NAMES)[number];

/** The grid worlds: tabular models (value and policy iteration read their transitions). */
const GRID_ENVIRONMENTS: Record<GridEnvName, () => GridWorld> = {
  gridworld: () => new GridWorld(['S..#...', '.#...#.', '...#..G'], { slip: 0.1, id: 'GridWorld' }),
  // Russell & Norvig's 4×3 world (AIMA Figure 17.1): +1 and −1 exits, one wall, and a move that
  // goes as meant with probability 0.8 and to either side with 0.1 each.
  'gridworld-4x3': () =>
    new GridWorld(['...G', '.#.H', 'S...'], { slip: 0.2, id: 'GridWorld-4x3' }),
  'frozenlake-4x4': () => createFrozenLake({ map: '4x4' }),
  'frozenlake-8x8': () => createFrozenLake({ map: '8x8' }),
  cliffwalking: () => createCliffWalking(),
};

/** The bandits: discrete actions, no model. */
const BANDITS = {
  'bandit-10': () => new KArmedBandit({ arms: 10, seed: 1 }),
  // Sutton & Barto's Figure 2.5 setting: true values around +4, where a baseline matters.
  'bandit-10-plus4': () => new KArmedBandit({ arms: 10, seed: 1, qStarMean: 4 }),
  'contextual-bandit': () => new ContextualBandit({ seed: 1 }),
} satisfies Record<string, () => Env<number, number>>;

/** Environments by name; each call builds a fresh one. */
export const ENVIRONMENTS = {
  ...GRID_ENVIRONMENTS,
  ...BANDITS,
  cartpole: () => new CartPole(),
};
export type EnvName = keyof typeof ENVIRONMENTS;

export interface EnvAlgorithm {
  family: 'env';
  doc: string;
  spec: ConfigSpec<AnyConfig>;
  defaults: AnyConfig;
  /** Environments it accepts. */
  envs: readonly EnvName[];
  /** Its trainers implement onnxExport() (a network to export: PPO's MLP actor-critic). */
  exportsOnnx?: true;
  /** Its trainers implement saveState() / loadState() and own a `network` (PPO's MLP). */
  checkpoints?: true;
  create(env: EnvName, config: AnyConfig, seed: number): AnyTrainer;
}

export interface LmSetup {
  policy: LanguageModel;
  reference?: LanguageModel;
  tokenizer: Tokenizer;
  task: CharsetTask;
  seed: number;
  /** The task's rungs, easiest first, and when to move up (algorithms with `curriculum`). */
  curriculum?: {
    scheduler: CurriculumScheduler;
    taskAt(level: number): CharsetTask;
  };
  /** A learned reward model (algorithms with `rewardModel`). */
  rewardModel?: CompletionScorer;
  /** A second task to keep: ptx demonstrations and its success rate (algorithms with `retained`). */
  retained?: CharsetTask;
}

export interface LmAlgorithm {
  family: 'lm';
  doc: string;
  spec: ConfigSpec<AnyConfig>;
  defaults: AnyConfig;
  /** The policy needs a value head (PPO's critic). */
  valueHead: boolean;
  /** A frozen reference model is always needed (DPO), or only when klCoef > 0. */
  reference: 'always' | 'kl';
  /** It can train through a task's curriculum (LmSetup.curriculum). */
  curriculum?: true;
  /** It can add a learned reward model's score to its rewards (LmSetup.rewardModel). */
  rewardModel?: true;
  /** It can keep a second task (LmSetup.retained): the ptx loss and retained/success_rate. */
  retained?: true;
  create(setup: LmSetup, config: AnyConfig): AnyTrainer;
}

const TABULAR: readonly EnvName[] = GRID_ENV_NAMES;
const DISCRETE: readonly EnvName[] = [
  ...TABULAR,
  'bandit-10',
  'bandit-10-plus4',
  'contextual-bandit',
];

/** A fresh grid world (a tabular model); `env` must be one (the entry's `envs` say so). */
function gridWorld(env: EnvName): GridWorld {
  const make = own(GRID_ENVIRONMENTS, env);
  if (!make)
    throw new OpInputError('train', 'env', `must be one of ${TABULAR.join(', ')}, got '${env}'`);
  return make();
}

/** A fresh environment of discrete observations and actions: a grid world or a bandit. */
function discrete(env: EnvName): Env<number, number> {
  const make = own(GRID_ENVIRONMENTS, env) ?? own(BANDITS, env);
  if (!make)
    throw new OpInputError('train', 'env', `must be one of ${DISCRETE.join(', ')}, got '${env}'`);
  return make();
}

/** A settings record as every config is: what the registry's callers hold and pass. */
type Values<C> = { readonly [K in keyof C]: number | boolean | string };

/**
 * An environment algorithm with its own config type C. The entry it makes takes any settings
 * record, checks it against C's spec (every field, in range), and only then builds the trainer.
 */
function defineEnvAlgorithm<C extends Values<C>>(
  name: string,
  entry: Omit<EnvAlgorithm, 'spec' | 'defaults' | 'create'> & {
    spec: ConfigSpec<C>;
    defaults: C;
    create(env: EnvName, config: C, seed: number): Trainer<C>;
  },
): EnvAlgorithm {
  return {
    ...entry,
    create: (env, config, seed) => {
      assertConfig(name, entry.spec, config);
      return entry.create(env, config, seed);
    },
  };
}

/** A language-model algorithm with its own config type C (as defineEnvAlgorithm). */
function defineLmAlgorithm<C extends Values<C>>(
  name: string,
  entry: Omit<LmAlgorithm, 'spec' | 'defaults' | 'create'> & {
    spec: ConfigSpec<C>;
    defaults: C;
    create(setup: LmSetup, config: C): Trainer<C>;
  },
): LmAlgorithm {
  return {
    ...entry,
    create: (setup, config) => {
      assertConfig(name, entry.spec, config);
      return entry.create(setup, config);
    },
  };
}

export const ALGORITHMS: Record<string, EnvAlgorithm | LmAlgorithm> = {
  'value-iteration': defineEnvAlgorithm('value-iteration', {
    family: 'env',
    doc: 'Synchronous value iteration over the known MDP; one update = one sweep',
    spec: VALUE_ITERATION_CONFIG_SPEC,
    defaults: DEFAULT_VALUE_ITERATION_CONFIG,
    envs: TABULAR,
    create: (env, config, seed) => {
      const world = gridWorld(env);
      return withGridInspector(createValueIteration(world, config, seed), world, 'value-iteration');
    },
  }),
  'policy-iteration': defineEnvAlgorithm('policy-iteration', {
    family: 'env',
    doc: 'Policy evaluation then greedy improvement; one update = one evaluation + improvement',
    spec: POLICY_ITERATION_CONFIG_SPEC,
    defaults: DEFAULT_POLICY_ITERATION_CONFIG,
    envs: TABULAR,
    create: (env, config, seed) => {
      const world = gridWorld(env);
      return withGridInspector(
        createPolicyIteration(world, config, seed),
        world,
        'policy-iteration',
      );
    },
  }),
  'q-learning': defineEnvAlgorithm('q-learning', {
    family: 'env',
    doc: 'Off-policy TD control with ε-greedy exploration; one update = one episode',
    spec: Q_LEARNING_CONFIG_SPEC,
    defaults: DEFAULT_Q_LEARNING_CONFIG,
    envs: TABULAR,
    create: (env, config, seed) => {
      const world = discrete(env);
      return withGridInspector(createQLearning(world, config, seed), world, 'q-learning');
    },
  }),
  sarsa: defineEnvAlgorithm('sarsa', {
    family: 'env',
    doc: 'On-policy TD control with ε-greedy exploration; one update = one episode',
    spec: SARSA_CONFIG_SPEC,
    defaults: DEFAULT_SARSA_CONFIG,
    envs: TABULAR,
    create: (env, config, seed) => {
      const world = discrete(env);
      return withGridInspector(createSarsa(world, config, seed), world, 'sarsa');
    },
  }),
  reinforce: defineEnvAlgorithm('reinforce', {
    family: 'env',
    doc: 'REINFORCE with a tabular softmax policy; one update = a batch of episodes',
    spec: REINFORCE_CONFIG_SPEC,
    defaults: DEFAULT_REINFORCE_CONFIG,
    envs: DISCRETE,
    create: (env, config, seed) => createReinforce(discrete(env), config, seed),
  }),
  'ppo-mlp': defineEnvAlgorithm('ppo-mlp', {
    family: 'env',
    doc: 'PPO with MLP actor and critic (CleanRL ppo.py); one update = one rollout + its epochs. Defaults: rl-baselines3-zoo tuned CartPole settings (CleanRL defaults solve 0 of 5 seeds in 200k steps)',
    spec: PPO_CONFIG_SPEC,
    defaults: { ...DEFAULT_PPO_CONFIG, ...CARTPOLE_TUNED },
    envs: ['cartpole'],
    exportsOnnx: true,
    checkpoints: true,
    create: (_env, config, seed) => createPpo(() => new CartPole(), config, seed),
  }),
  grpo: defineLmAlgorithm('grpo', {
    family: 'lm',
    doc: 'GRPO and its family (RLOO, REINFORCE++, Dr. GRPO, DAPO options): critic-free, group-relative',
    spec: GRPO_CONFIG_SPEC,
    defaults: DEFAULT_GRPO_CONFIG,
    valueHead: false,
    reference: 'kl',
    curriculum: true,
    rewardModel: true,
    retained: true,
    create: createGrpoTrainer,
  }),
  ppo: defineLmAlgorithm('ppo', {
    family: 'lm',
    doc: 'PPO with a value-head critic: GAE over generated tokens, clipped policy and value losses',
    spec: PPO_LM_CONFIG_SPEC,
    defaults: DEFAULT_PPO_LM_CONFIG,
    valueHead: true,
    reference: 'kl',
    curriculum: true,
    rewardModel: true,
    retained: true,
    create: createPpoLmTrainer,
  }),
  dpo: defineLmAlgorithm('dpo', {
    family: 'lm',
    doc: "DPO on pairs of the policy's own successful and failed samples (offline contrast)",
    spec: DPO_CONFIG_SPEC,
    defaults: DEFAULT_DPO_CONFIG,
    valueHead: false,
    reference: 'always',
    create: (setup, config) => {
      if (!setup.reference)
        throw new OpInputError('dpo', 'reference', 'DPO needs a reference model');
      return createDpoTrainer({ ...setup, reference: setup.reference }, config);
    },
  }),
};

/** The algorithms that can train through a task's curriculum, as messages name them. */
export function curriculumAlgorithms(): string {
  return Object.entries(ALGORITHMS)
    .filter(([, a]) => a.family === 'lm' && a.curriculum)
    .map(([name]) => name)
    .join(' and ');
}

/** The algorithms that can train against a learned reward model, as messages name them. */
export function rewardModelAlgorithms(): string {
  return Object.entries(ALGORITHMS)
    .filter(([, a]) => a.family === 'lm' && a.rewardModel)
    .map(([name]) => name)
    .join(' and ');
}

/** The algorithms that can keep a retained task, as messages name them. */
export function retainedAlgorithms(): string {
  return Object.entries(ALGORITHMS)
    .filter(([, a]) => a.family === 'lm' && a.retained)
    .map(([name]) => name)
    .join(' and ');
}

export function algorithm(name: string): EnvAlgorithm | LmAlgorithm {
  const found = own(ALGORITHMS, name);
  if (!found) {
    throw new OpInputError(
      'train',
      'algo',
      `must be one of ${Object.keys(ALGORITHMS).join(', ')}, got '${name}'`,
    );
  }
  return found;
}
