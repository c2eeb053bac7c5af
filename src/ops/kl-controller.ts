/**
 * KL coefficient controllers (verl core_algos.AdaptiveKLController / FixedKLController, the same
 * classes OpenRLHF and early TRL use, after Ziegler et al. 2019, "Fine-Tuning Language Models from
 * Human Preferences"). The coefficient β weighs the KL penalty; the adaptive controller nudges β
 * so the measured KL drifts towards a target:
 *
 *   err = clip(currentKl / target − 1, −0.2, 0.2)
 *   β ← β · (1 + err · nSteps / horizon)
 *
 * so β changes by at most ±20 % per `horizon` steps. verl calls update(current_kl, n_steps =
 * batch size) once per training step, with current_kl the batch's mean sequence KL (klRewardPenalty
 * .klMean in src/ops/kl.ts).
 */
import { OpInputError } from './errors';
import { checkInt, checkRange } from './validate';

/** Largest proportional error the adaptive controller acts on (verl, OpenRLHF, TRL: 0.2). */
export const KL_ERROR_CLIP = 0.2;

export interface KlController {
  /** The current coefficient β (verl kl_ctrl.value). */
  readonly value: number;
  update(currentKl: number, nSteps: number): void;
}

export interface AdaptiveKlControllerOptions {
  /**
   * verl: algorithm.kl_ctrl.kl_coef (default 0.001); OpenRLHF: --init_kl_coef (0.01); TRL (old
   * PPOConfig): init_kl_coef (0.2). Initial β, finite, ≥ 0.
   */
  coef: number;
  /** verl: kl_ctrl.target_kl (default 0.1); OpenRLHF: --kl_target. The KL aimed at, > 0. */
  target: number;
  /** verl: kl_ctrl.horizon (default 10000); OpenRLHF: --kl_horizon (10000). Steps, > 0. */
  horizon: number;
}

const OP = 'AdaptiveKlController';

export class AdaptiveKlController implements KlController {
  private coef: number;
  readonly target: number;
  readonly horizon: number;

  constructor({ coef, target, horizon }: AdaptiveKlControllerOptions) {
    checkRange(OP, 'coef', coef, 0, Infinity, { highOpen: true });
    checkRange(OP, 'target', target, 0, Infinity, { lowOpen: true, highOpen: true });
    checkRange(OP, 'horizon', horizon, 0, Infinity, { lowOpen: true, highOpen: true });
    this.coef = coef;
    this.target = target;
    this.horizon = horizon;
  }

  get value(): number {
    return this.coef;
  }

  /**
   * `currentKl`: the measured KL, finite. `nSteps`: samples (verl: batch size) since the last
   * update, an integer ≥ 0 and ≤ 5·horizon: beyond that a −0.2 error would make the multiplier
   * negative (verl does not guard against it; here it is rejected so β stays ≥ 0).
   */
  update(currentKl: number, nSteps: number): void {
    if (typeof currentKl !== 'number' || !Number.isFinite(currentKl)) {
      throw new OpInputError(OP, 'currentKl', `must be finite, got ${currentKl}`);
    }
    checkInt(OP, 'nSteps', nSteps, 0, Number.MAX_SAFE_INTEGER);
    if (nSteps > this.horizon / KL_ERROR_CLIP) {
      throw new OpInputError(
        OP,
        'nSteps',
        `must be ≤ horizon / ${KL_ERROR_CLIP} = ${this.horizon / KL_ERROR_CLIP} so β stays ≥ 0, got ${nSteps}`,
      );
    }
    const err = Math.min(KL_ERROR_CLIP, Math.max(-KL_ERROR_CLIP, currentKl / this.target - 1));
    this.coef *= 1 + (err * nSteps) / this.horizon;
  }
}

/** A constant β (verl kl_ctrl.type 'fixed', the default; TRL PPO kl_coef; OpenRLHF without --kl_target). */
export class FixedKlController implements KlController {
  readonly value: number;

  constructor(coef: number) {
    checkRange('FixedKlController', 'coef', coef, 0, Infinity, { highOpen: true });
    this.value = coef;
  }

  /** Does nothing: the coefficient is fixed. Arguments are accepted for a common interface. */
  update(_currentKl: number, _nSteps: number): void {}
}
