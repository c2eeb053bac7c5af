/**
 * Many copies of an environment stepped together, and per-episode statistics — gymnasium's
 * SyncVectorEnv (autoreset mode SAME_STEP) and RecordEpisodeStatistics, the pair CleanRL's PPO
 * runs on.
 *
 * SyncVectorEnv.step(actions) steps every sub-env once, in order. When sub-env i's episode ends
 * (terminated or truncated), it is reset in the same call:
 *   obs[i]       the first observation of the NEXT episode (what the policy acts on next)
 *   finalObs[i]  the observation the ended episode stopped at (gymnasium infos["final_obs"];
 *                gymnasium 0.29 called it "final_observation") — bootstrap a truncated episode
 *                from V(finalObs[i]), never from V(obs[i])
 *   finalInfo[i] the ended step's info (gymnasium infos["final_info"]); infos[i] is the reset info
 *   rewards[i], terminated[i], truncated[i]  those of the step that ended the episode
 * For sub-envs that did not end, finalObs[i] and finalInfo[i] are undefined.
 *
 * (gymnasium 0.29, which CleanRL uses, resets this way too; gymnasium 1.x defaults to NEXT_STEP,
 * which returns the final obs and resets on the following step() call instead.)
 *
 * Seeding: reset(seed) resets sub-env i with seed + i; autoresets call reset() without a seed, so
 * each sub-env continues its own stream (as gymnasium does). Same seed → same trajectories.
 */
import { checkInt } from '../ops/validate';
import { SnapshotReader } from './snapshot';
import {
  EnvError,
  type Env,
  type EnvSnapshot,
  type Info,
  type Space,
  type StepResult,
} from './types';

export interface VectorStepResult<O> {
  /** Next observation per sub-env; after an episode ended, the next episode's first one. (numEnvs) */
  obs: O[];
  /** (numEnvs) */
  rewards: Float64Array;
  /** (numEnvs) */
  terminated: boolean[];
  /** (numEnvs) */
  truncated: boolean[];
  /** Step info per sub-env; the reset info where the sub-env was reset. (numEnvs) */
  infos: Info[];
  /** gymnasium infos["final_obs"]: the last observation of an episode that ended now. (numEnvs) */
  finalObs: (O | undefined)[];
  /** gymnasium infos["final_info"]: the info of the step that ended the episode. (numEnvs) */
  finalInfo: (Info | undefined)[];
}

export class SyncVectorEnv<O, A> {
  readonly id: string;
  readonly numEnvs: number;
  readonly envs: readonly Env<O, A>[];
  readonly singleObservationSpace: Space;
  readonly singleActionSpace: Space;
  /** Vector steps since the last reset(); null before the first reset. */
  private steps: number | null = null;

  /** One thunk per sub-env, as gymnasium's env_fns; all sub-envs must share their spaces. */
  constructor(envFns: readonly (() => Env<O, A>)[]) {
    checkInt('SyncVectorEnv', 'envFns.length', envFns.length, 1, 65536);
    this.envs = envFns.map((make) => make());
    const first = this.envs[0]!;
    this.envs.forEach((env, i) => {
      const same =
        JSON.stringify(env.observationSpace) === JSON.stringify(first.observationSpace) &&
        JSON.stringify(env.actionSpace) === JSON.stringify(first.actionSpace);
      if (!same) {
        throw new EnvError(
          `SyncVectorEnv(${first.id})`,
          0,
          `sub-env ${i} (${env.id}) has different spaces from sub-env 0; all must match`,
        );
      }
    });
    this.numEnvs = this.envs.length;
    this.singleObservationSpace = first.observationSpace;
    this.singleActionSpace = first.actionSpace;
    this.id = `SyncVectorEnv(${first.id} × ${this.numEnvs})`;
  }

  /** Resets every sub-env; with `seed`, sub-env i gets seed + i. */
  reset(seed?: number): { obs: O[]; infos: Info[] } {
    if (seed !== undefined) checkInt(this.id, 'seed', seed, 0, 2 ** 32 - this.numEnvs);
    const obs: O[] = [];
    const infos: Info[] = [];
    this.envs.forEach((env, i) => {
      const out = env.reset(seed === undefined ? undefined : seed + i);
      obs.push(out.obs);
      infos.push(out.info);
    });
    this.steps = 0;
    return { obs, infos };
  }

  /** Every sub-env's snapshot and the vector step count; throws if a sub-env has none. */
  snapshot(): EnvSnapshot {
    return { steps: this.steps, envs: this.envs.map((env, i) => this.snapshotOf(env, i)) };
  }

  /**
   * Puts back a snapshot() of a vector of the same size. Each sub-env checks its own part; if one
   * refuses, the sub-envs already restored are put back as they were, so a bad snapshot changes
   * nothing.
   */
  restore(snapshot: EnvSnapshot): void {
    const read = new SnapshotReader(snapshot, this.id, this.steps ?? 0);
    const steps = snapshot.steps === null ? null : read.int('steps', 0, Number.MAX_SAFE_INTEGER);
    const parts = read.records('envs', this.numEnvs);
    const before = this.envs.map((env, i) => this.snapshotOf(env, i));
    let done = 0;
    try {
      for (; done < this.numEnvs; done++) this.envs[done]!.restore!(parts[done]!);
    } catch (error) {
      for (let i = 0; i < done; i++) this.envs[i]!.restore!(before[i]!);
      throw new EnvError(this.id, this.steps ?? 0, `sub-env ${done}: ${(error as Error).message}`);
    }
    this.steps = steps;
  }

  private snapshotOf(env: Env<O, A>, i: number): EnvSnapshot {
    if (!env.snapshot || !env.restore) {
      throw new EnvError(this.id, this.steps ?? 0, `sub-env ${i} (${env.id}) has no snapshots`);
    }
    return env.snapshot();
  }

  /** Steps sub-env i with actions[i]; ended episodes restart at once (see the file comment). */
  step(actions: readonly A[]): VectorStepResult<O> {
    if (this.steps === null) {
      throw new EnvError(this.id, 0, 'step() before reset(); call reset() first');
    }
    if (actions.length !== this.numEnvs) {
      throw new EnvError(
        this.id,
        this.steps,
        `actions must hold one action per sub-env (${this.numEnvs}), got ${actions.length}`,
      );
    }
    // Check every action before stepping any sub-env, so a bad one leaves all of them untouched.
    const space = this.singleActionSpace;
    if (space.kind === 'discrete') {
      actions.forEach((a, i) => {
        if (typeof a !== 'number' || !Number.isInteger(a) || a < 0 || a >= space.n) {
          throw new EnvError(
            this.id,
            this.steps!,
            `actions[${i}] must be an integer in [0, ${space.n - 1}], got ${String(a)}`,
          );
        }
      });
    }
    const n = this.numEnvs;
    const result: VectorStepResult<O> = {
      obs: [],
      rewards: new Float64Array(n),
      terminated: [],
      truncated: [],
      infos: [],
      finalObs: [],
      finalInfo: [],
    };
    for (let i = 0; i < n; i++) {
      const env = this.envs[i]!;
      const out: StepResult<O> = env.step(actions[i]!);
      result.rewards[i] = out.reward;
      result.terminated.push(out.terminated);
      result.truncated.push(out.truncated);
      if (out.terminated || out.truncated) {
        result.finalObs.push(out.obs);
        result.finalInfo.push(out.info);
        const next = env.reset();
        result.obs.push(next.obs);
        result.infos.push(next.info);
      } else {
        result.finalObs.push(undefined);
        result.finalInfo.push(undefined);
        result.obs.push(out.obs);
        result.infos.push(out.info);
      }
    }
    this.steps += 1;
    return result;
  }
}

/** Info key of an ended episode's return (gymnasium info["episode"]["r"]). */
export const EPISODE_RETURN = 'episode.r';
/** Info key of an ended episode's length in steps (gymnasium info["episode"]["l"]). */
export const EPISODE_LENGTH = 'episode.l';

/**
 * gymnasium's RecordEpisodeStatistics: sums the rewards and counts the steps of each episode, and
 * on the step that ends it (terminated or truncated) adds info[EPISODE_RETURN] and
 * info[EPISODE_LENGTH]. The last `bufferLength` episodes are kept in returnQueue / lengthQueue.
 * (gymnasium also reports the wall time "t"; environments here keep no clocks.)
 */
export class RecordEpisodeStatistics<O, A> implements Env<O, A> {
  readonly id: string;
  readonly observationSpace: Space;
  readonly actionSpace: Space;
  /** Returns of the last bufferLength episodes, oldest first. */
  readonly returnQueue: number[] = [];
  /** Lengths of the last bufferLength episodes, oldest first. */
  readonly lengthQueue: number[] = [];
  private episodeReturn = 0;
  private episodeLength = 0;

  constructor(
    readonly env: Env<O, A>,
    /** Episodes kept in the queues (gymnasium buffer_length), an integer in [1, 10⁶]. Default 100. */
    readonly bufferLength = 100,
  ) {
    checkInt('RecordEpisodeStatistics', 'bufferLength', bufferLength, 1, 1e6);
    this.id = env.id;
    this.observationSpace = env.observationSpace;
    this.actionSpace = env.actionSpace;
  }

  reset(seed?: number): { obs: O; info: Info } {
    const out = this.env.reset(seed);
    this.episodeReturn = 0;
    this.episodeLength = 0;
    return out;
  }

  step(action: A): StepResult<O> {
    const out = this.env.step(action);
    this.episodeReturn += out.reward;
    this.episodeLength += 1;
    if (!out.terminated && !out.truncated) return out;
    this.push(this.returnQueue, this.episodeReturn);
    this.push(this.lengthQueue, this.episodeLength);
    return {
      ...out,
      info: {
        ...out.info,
        [EPISODE_RETURN]: this.episodeReturn,
        [EPISODE_LENGTH]: this.episodeLength,
      },
    };
  }

  /** The running episode's sums, the queues, and the wrapped env's snapshot under `env`. */
  snapshot(): EnvSnapshot {
    if (!this.env.snapshot) {
      throw new EnvError(this.id, this.episodeLength, `${this.env.id} has no snapshots`);
    }
    return {
      episodeReturn: this.episodeReturn,
      episodeLength: this.episodeLength,
      returnQueue: [...this.returnQueue],
      lengthQueue: [...this.lengthQueue],
      env: this.env.snapshot(),
    };
  }

  restore(snapshot: EnvSnapshot): void {
    const read = new SnapshotReader(snapshot, this.id, this.episodeLength);
    const episodeReturn = read.number('episodeReturn');
    const episodeLength = read.int('episodeLength', 0, Number.MAX_SAFE_INTEGER);
    const returns = read.numbers('returnQueue', { maxLength: this.bufferLength });
    const lengths = read.numbers('lengthQueue', { length: returns.length });
    const inner = read.record('env');
    if (!this.env.restore) {
      throw new EnvError(this.id, this.episodeLength, `${this.env.id} has no snapshots`);
    }
    this.env.restore(inner); // checks its own fields, and changes nothing if it refuses
    this.episodeReturn = episodeReturn;
    this.episodeLength = episodeLength;
    this.returnQueue.splice(0, this.returnQueue.length, ...returns);
    this.lengthQueue.splice(0, this.lengthQueue.length, ...lengths);
  }

  private push(queue: number[], value: number): void {
    queue.push(value);
    if (queue.length > this.bufferLength) queue.shift();
  }
}

/** The episodes that ended in one vector step, read from finalInfo (sub-envs wrapped as above). */
export function endedEpisodes(
  result: VectorStepResult<unknown>,
): { env: number; episodeReturn: number; episodeLength: number }[] {
  const out: { env: number; episodeReturn: number; episodeLength: number }[] = [];
  result.finalInfo.forEach((info, env) => {
    const r = info?.[EPISODE_RETURN];
    const l = info?.[EPISODE_LENGTH];
    if (typeof r === 'number' && typeof l === 'number') {
      out.push({ env, episodeReturn: r, episodeLength: l });
    }
  });
  return out;
}
