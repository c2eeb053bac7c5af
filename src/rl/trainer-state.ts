/**
 * Checkpoints of the language-model trainers, in one place: the control's state (step, config,
 * events, health), the draws taken from each seeded random stream, and a curriculum's level. The
 * models' weights and optimizer are not here: the run host reads them from the models.
 */
import { OpInputError } from '../ops/errors';
import { randomStream, type RandomStream } from '../util/random';
import type { CurriculumScheduler } from './curriculum';
import type { RunControl, Trainer, TrainerState } from './trainer';

/** A trainer's seeded random streams by name; a checkpoint brings each back to its draw count. */
export class RandomStreams<N extends string> {
  private streams: Record<N, RandomStream>;

  constructor(private readonly seeds: Readonly<Record<N, number>>) {
    // A NaN or fractional seed would give a stream that silently repeats or differs by platform.
    for (const [name, seed] of Object.entries<number>(seeds)) {
      if (!Number.isInteger(seed)) {
        throw new OpInputError('trainer', `seed (${name})`, `must be an integer, got ${seed}`);
      }
    }
    this.streams = this.build({});
  }

  get(name: N): RandomStream {
    return this.streams[name];
  }

  draws(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const name of this.names()) out[name] = this.streams[name].draws;
    return out;
  }

  /** Throws (changing nothing) unless `draws` names exactly these streams with counts ≥ 0. */
  check(draws: Record<string, number>): void {
    const want = this.names().sort().join(', ');
    const got = Object.keys(draws).sort().join(', ');
    if (want !== got) throw new Error(`checkpoint: random streams must be [${want}], got [${got}]`);
    for (const [name, count] of Object.entries(draws)) {
      if (!Number.isInteger(count) || count < 0) {
        throw new Error(`checkpoint: random.${name} must be a whole number ≥ 0, got ${count}`);
      }
    }
  }

  restore(draws: Record<string, number>): void {
    this.check(draws);
    this.streams = this.build(draws);
  }

  private names(): N[] {
    return Object.keys(this.seeds) as N[];
  }

  private build(draws: Record<string, number>): Record<N, RandomStream> {
    const out = {} as Record<N, RandomStream>;
    for (const name of this.names()) out[name] = randomStream(this.seeds[name], draws[name] ?? 0);
    return out;
  }
}

export interface StateParts<C extends object> {
  algorithm: string;
  control: RunControl<C>;
  streams: RandomStreams<string>;
  /** The algorithm's validation of a whole config (spec and cross-field rules). */
  checkConfig: (config: C) => void;
  curriculum?: CurriculumScheduler;
  /** Called after a restore, e.g. to pick the task of the restored curriculum level. */
  afterRestore?: () => void;
}

/** saveState / loadState for a trainer built from these parts. */
export function stateHooks<C extends object>(
  parts: StateParts<C>,
): Required<Pick<Trainer<C>, 'saveState' | 'loadState'>> {
  const { algorithm, control, streams, curriculum } = parts;
  return {
    saveState(): TrainerState {
      return {
        algorithm,
        ...control.state(),
        random: streams.draws(),
        ...(curriculum ? { curriculum: curriculum.state() } : {}),
      };
    },
    loadState(state: TrainerState): void {
      if (state.algorithm !== algorithm) {
        throw new Error(`checkpoint: taken from a ${state.algorithm} run, not ${algorithm}`);
      }
      if (!curriculum !== !state.curriculum) {
        throw new Error(
          `checkpoint: the run ${curriculum ? 'has' : 'has no'} curriculum, the checkpoint ${state.curriculum ? 'has' : 'has none'}`,
        );
      }
      // Every check before any change, so a bad checkpoint changes nothing (the control checks
      // the config before it applies it).
      streams.check(state.random);
      if (curriculum && state.curriculum) curriculum.checkState(state.curriculum);
      control.restore(state, parts.checkConfig);
      streams.restore(state.random);
      if (curriculum && state.curriculum) curriculum.restore(state.curriculum);
      parts.afterRestore?.();
    },
  };
}
