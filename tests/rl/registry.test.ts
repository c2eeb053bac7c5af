/**
 * The algorithm registry: each entry checks the settings it is given against its algorithm's own
 * spec before it builds a trainer, and finds the kind of environment it needs by name.
 */
import { describe, expect, it } from 'vitest';
import { OpInputError } from '../../src/ops/errors';
import { ALGORITHMS, type EnvAlgorithm } from '../../src/rl/registry';

function env(name: string): EnvAlgorithm {
  const entry = ALGORITHMS[name];
  if (entry?.family !== 'env') throw new Error(`${name} is not an environment algorithm`);
  return entry;
}

describe('the algorithm registry', () => {
  it('builds a trainer from an entry and its defaults', () => {
    const trainer = env('q-learning').create('cliffwalking', env('q-learning').defaults, 1);
    expect(trainer.algorithm).toBe('q-learning');
    expect(trainer.config).toEqual(env('q-learning').defaults);
  });

  it('refuses settings missing a field, naming it', () => {
    const rest = Object.fromEntries(
      Object.entries(env('value-iteration').defaults).filter(([key]) => key !== 'gamma'),
    );
    expect(() => env('value-iteration').create('gridworld', rest, 1)).toThrow(
      new OpInputError('value-iteration', 'gamma', 'is missing'),
    );
  });

  it('refuses a setting of another algorithm, naming it', () => {
    const settings = { ...env('sarsa').defaults, groupSize: 4 };
    expect(() => env('sarsa').create('cliffwalking', settings, 1)).toThrow(
      /groupSize is not a setting of sarsa/,
    );
  });

  it('refuses an environment of the wrong kind, naming the ones it takes', () => {
    const vi = env('value-iteration');
    expect(() => vi.create('bandit-10', vi.defaults, 1)).toThrow(/env.*gridworld, gridworld-4x3/);
    const reinforce = env('reinforce');
    expect(() => reinforce.create('cartpole', reinforce.defaults, 1)).toThrow(/bandit-10/);
  });
});
