/**
 * The curriculum as the home page lists it. Lessons live in lessons/ as they are written; until a
 * unit has lessons it is shown as "in preparation", never as a working link.
 */
export interface CurriculumUnit {
  id: string;
  title: string;
  summary: string;
  topics: string[];
  /** Whether its lessons can be opened yet. */
  available: boolean;
  /** Its first lesson (lessons/NN-unit/NN-step), when available. */
  firstLesson?: string;
}

export const CURRICULUM: CurriculumUnit[] = [
  {
    id: 'mdp',
    title: 'Markov decision processes',
    summary: 'States, actions, rewards and returns — and how to plan when the world is known.',
    topics: [
      'Value and policy iteration on GridWorld, rewards edited live',
      'Q-learning vs SARSA on CliffWalking',
      'Exploration and the discount factor',
    ],
    available: true,
    firstLesson: '01-mdp/01-value-iteration',
  },
  {
    id: 'policy-gradient-ppo',
    title: 'Policy gradient & PPO',
    summary: 'Learn a policy directly, then keep each update in a trust region.',
    topics: [
      'Bandits, REINFORCE and baselines',
      'The ratio and the clipped objective, with dual-clip',
      'GAE, the critic and the entropy bonus on CartPole and a token task',
    ],
    available: true,
    firstLesson: '03-ppo/01-clipped-objective',
  },
  {
    id: 'grpo',
    title: 'GRPO for language models',
    summary: 'Drop the critic: sample a group, score it, and learn from relative advantages.',
    topics: [
      'Group-relative advantages, std normalization and Dr. GRPO',
      'Clip-higher, KL to a reference (k1, k2, k3) and loss aggregation',
      'PPO vs GRPO side by side on one task and one budget',
    ],
    available: false,
  },
  {
    id: 'tool-use',
    title: 'Tool-using agents',
    summary: 'Multi-turn episodes where the policy calls a calculator, a table or a search.',
    topics: [
      'Call tokens and observation masks: which tokens are trained',
      'Tool cost, tool flooding and reward design',
      'A curriculum from one tool to lookup-then-calculate',
    ],
    available: false,
  },
];
