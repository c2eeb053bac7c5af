/**
 * The GRPO family a LoRA run on a brought model can train with, each as the settings it changes
 * on the lab's GRPO trainer (the lab's own runs and presets name the same settings; the TRL and
 * verl exports map them to each framework's names):
 *
 * - GRPO: the trainer's defaults (group-normalised advantages, token-mean loss, clip 0.2).
 * - Dr. GRPO: no division by the group's std and a constant loss normaliser (verl
 *   norm_adv_by_std_in_grpo=False with loss_agg_mode seq-mean-token-sum-norm; TRL scale_rewards
 *   'none', loss_type 'dr_grpo').
 * - DAPO: clip-higher (ε_high 0.28), token-level loss, dynamic sampling of groups whose rewards
 *   differ.
 * - RLOO: each answer's baseline is the mean of the other answers to its prompt.
 * - REINFORCE++ (baseline): the group mean subtracted, then normalised over the whole batch.
 * - DPO: not of the family — pairs of the model's own right and wrong answers to a prompt, pushed
 *   apart relative to the reference, which is the model with its adapters off (no second copy).
 *   Its batch line is the success rate of its samples (reward/success_rate: right text, stopped
 *   or not); the held-out measure is strict, as for every recipe.
 */
export const LORA_RECIPES = [
  { id: 'grpo', algorithm: 'grpo', short: 'GRPO', label: 'GRPO', config: {} },
  {
    id: 'dr-grpo',
    algorithm: 'grpo',
    short: 'Dr. GRPO',
    label: 'Dr. GRPO (no std divisor, constant loss normaliser)',
    config: { stdNormalization: 'none', lossAggregation: 'dr-grpo' },
  },
  {
    id: 'dapo',
    algorithm: 'grpo',
    short: 'DAPO',
    label: 'DAPO (clip-higher 0.28, token-mean loss, dynamic sampling)',
    config: { clipHigh: 0.28, lossAggregation: 'token-mean', dynamicSampling: true },
  },
  {
    id: 'rloo',
    algorithm: 'grpo',
    short: 'RLOO',
    label: 'RLOO (leave-one-out baseline)',
    config: { advantageEstimator: 'rloo' },
  },
  {
    id: 'reinforce++-baseline',
    algorithm: 'grpo',
    short: 'REINFORCE++',
    label: 'REINFORCE++ with a group baseline',
    config: { advantageEstimator: 'reinforce++-baseline' },
  },
  {
    id: 'dpo',
    algorithm: 'dpo',
    short: 'DPO',
    label: 'DPO (its own right vs wrong answers; reference: adapters off)',
    config: {},
  },
] as const satisfies readonly {
  id: string;
  algorithm: 'grpo' | 'dpo';
  short: string;
  label: string;
  config: Readonly<Record<string, number | string | boolean>>;
}[];

export type LoraRecipeId = (typeof LORA_RECIPES)[number]['id'];

/** The recipe named `id`; throws naming the valid ones for any other. */
export function loraRecipe(id: string): (typeof LORA_RECIPES)[number] {
  const recipe = LORA_RECIPES.find((r) => r.id === id);
  if (!recipe) {
    throw new Error(
      `recipe must be one of ${LORA_RECIPES.map((r) => r.id).join(', ')}, got ${JSON.stringify(id)}`,
    );
  }
  return recipe;
}
