/**
 * The page's LoRA-GRPO run (src/worker/lora.worker.ts) as files for TRL and verl: its GRPO settings
 * (the trainer's defaults with the run's learning rate, batch and answer length), its task's
 * reward, and its adapters' settings — TRL's peft_config, verl's LoRA keys — with the model it
 * trained named where a Hub id or path is known.
 */
import { loraDpoConfig, loraGrpoConfig } from '../rl/lora-grpo-session';
import { loraRecipe, type LoraRecipeId } from '../worker/lora-recipes';
import { runCatalog } from '../worker/run-spec';
import { frameworkExport, type ExportLora, type FrameworkExport } from './framework-export';

export interface LoraRunSettings {
  lr: number;
  promptsPerUpdate: number;
  groupSize: number;
  maxNewTokens: number;
  task: { name: string; options: Record<string, unknown> };
  /** The GRPO variant it trained with (GRPO when left out). */
  recipe?: LoraRecipeId;
}

export function loraRunExport(run: LoraRunSettings, lora: ExportLora): FrameworkExport {
  const recipe = loraRecipe(run.recipe ?? 'grpo');
  const algo = runCatalog().algorithms.find((a) => a.name === recipe.algorithm)!;
  const config = (
    recipe.algorithm === 'dpo'
      ? { ...loraDpoConfig(run) }
      : { ...loraGrpoConfig({ ...run, recipe: recipe.config }) }
  ) as Record<string, number | boolean | string>;
  return frameworkExport(algo, config, run.task, lora);
}
