/**
 * Online DPO on verifier-labelled pairs (src/rl/dpo.ts) → TRL's DPOConfig. verl has no DPO
 * trainer at the pinned release, so there is no verl export.
 *
 * This lab samples K completions per prompt each update and pairs verified ones with failed ones;
 * TRL's DPOTrainer trains on a fixed preference dataset. The exported script builds that dataset
 * the same way from completions sampled once (make_pairs), so one TRL run is one round of this
 * lab's loop.
 */
import { silent, to, type FrameworkTable, type Mapping } from './framework-export-table';

/** Not a DPOConfig argument: the script's sampling comment carries the value. */
const sampling = (what: string): Mapping => ({
  names: [],
  emit: () => ({
    set: [],
    note: `${what} of the sampling that SAMPLES_FILE comes from (DPOConfig trains on fixed pairs)`,
  }),
});

export const DPO_TABLE: FrameworkTable = {
  trl: () => ({ cls: 'DPOConfig' }),
  verl: {
    unavailable:
      'verl has no DPO trainer (its trainers are PPO-style RL, SFT and distillation); TRL and OpenRLHF have one',
  },
  verlFixed: [],
  trlNotes: [
    "this lab re-samples the pairs every update (online); TRL's DPOTrainer trains on the pairs make_pairs built once — repeat sampling and training for more rounds",
  ],
  verlNotes: [],
  rows: {
    beta: { trl: to('beta'), verl: silent() },
    lossType: { trl: to('loss_type'), verl: silent() },
    labelSmoothing: { trl: to('label_smoothing'), verl: silent() },
    promptsPerUpdate: {
      trl: {
        names: ['per_device_train_batch_size'],
        emit: (v) => ({
          set: [{ name: 'per_device_train_batch_size', value: Number(v) }],
          note: 'TRL counts pairs per step; this lab samples promptsPerUpdate prompts, each giving up to samplesPerPrompt / 2 pairs',
        }),
      },
      verl: silent(),
    },
    samplesPerPrompt: { trl: sampling('completions per prompt'), verl: silent() },
    temperature: { trl: sampling('the temperature'), verl: silent() },
    maxNewTokens: { trl: sampling('the new-token limit'), verl: silent() },
    lr: { trl: to('learning_rate'), verl: silent() },
    maxGradNorm: { trl: to('max_grad_norm'), verl: silent() },
    weightDecay: { trl: to('weight_decay'), verl: silent() },
  },
};
