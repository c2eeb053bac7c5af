/**
 * The outside of a language-model trainer, the same for every algorithm: its config checked
 * against its spec and its own rules (at the start, on every live change, on a checkpoint's
 * restore), its run control, its seeded random streams, and checkpoints of both. An algorithm
 * builds one of these, writes its update() and hands it to expose().
 */
import { checkConfig, checkPartial, type ConfigSpec } from '../util/hyperparams';
import type { CurriculumScheduler } from './curriculum';
import { RunControl, type LiveFields, type Trainer } from './trainer';
import { RandomStreams, stateHooks } from './trainer-state';

export interface LmRunDescription<C extends object, S extends string> {
  /** The name errors and checkpoints carry ('grpo', 'ppo', 'dpo'). */
  algorithm: string;
  spec: ConfigSpec<C>;
  /** Checks that ranges alone cannot express (throw OpInputError naming the field). */
  rules?: (config: C) => void;
  initial: C;
  /** The seed of each random stream, by name. */
  seeds: Readonly<Record<S, number>>;
  /** A curriculum's scheduler, saved with the run; `afterRestore` picks its task again. */
  curriculum?: { scheduler: CurriculumScheduler; afterRestore: () => void };
}

/** What expose() adds to an algorithm's own members. */
type Added = LiveFields | 'algorithm' | 'saveState' | 'loadState' | 'setHyperparams';

export interface LmRun<C extends object, S extends string> {
  readonly algorithm: string;
  readonly control: RunControl<C>;
  readonly streams: RandomStreams<S>;
  /** The trainer: `members` (update, inspect, extras) with the parts every algorithm shares. */
  expose<T extends Trainer<C>>(members: Omit<T, Added>): T;
}

export function createLmRun<C extends object, S extends string>(
  description: LmRunDescription<C, S>,
): LmRun<C, S> {
  const { algorithm, spec, curriculum } = description;
  const check = (config: C) => {
    checkConfig(algorithm, spec, config);
    description.rules?.(config);
  };
  check(description.initial);
  const control = new RunControl(description.initial);
  const streams = new RandomStreams(description.seeds);
  const shared = {
    algorithm,
    ...stateHooks({
      algorithm,
      control,
      streams,
      checkConfig: check,
      ...(curriculum
        ? { curriculum: curriculum.scheduler, afterRestore: curriculum.afterRestore }
        : {}),
    }),
    setHyperparams(partial: Partial<C>) {
      checkPartial(algorithm, spec, partial, { liveOnly: true });
      description.rules?.({ ...control.config, ...partial });
      control.queue(partial);
    },
  };
  return {
    algorithm,
    control,
    streams,
    // Onto `members` itself, not a spread copy: its getters (lastSamples) must stay getters.
    // `shared` holds exactly the Added fields control.expose does not make; TypeScript cannot
    // see that Omit<T, Added> and them make Omit<T, LiveFields> for a generic T.
    expose: <T extends Trainer<C>>(members: Omit<T, Added>): T =>
      control.expose<T>(Object.assign(members, shared) as unknown as Omit<T, LiveFields>),
  };
}
