/**
 * `npm run bench:learn [-- --only=planning,cliff,cartpole,token,agent,forgetting,lessons,defaults,lora,lora-recipes] [--backend=cpu|webgpu] [--seeds=1,2,3] [--lessons=…] [--presets=…] [--tasks=…] [--algos=grpo,ppo,dpo] [--quick]`
 *
 * Learning benchmarks: does each algorithm learn what it should, how fast, on this machine?
 *   planning  value iteration on GridWorld and FrozenLake 4×4: sweeps to convergence
 *   cliff     Q-learning vs SARSA on CliffWalking: greedy path length and return
 *   cartpole  PPO on CartPole: mean return ≥ 475 over 100 episodes within 200k steps, 5 seeds
 *   token     GRPO vs PPO on reversing 3–6 letters from one SFT checkpoint, same sample budget
 *   agent     GRPO on multiplication with and without the calculator tool; calls per episode at
 *             two tool costs (CPU; not in the default set: it takes about an hour on 2 cores)
 *   lessons   the lessons' language-model widgets as claims: each preset on seeds 1–5 (--seeds)
 *             run headless to its check, beside its matched control run for the whole budget, on
 *             the chosen backend, timed; one table (not in the default set; `--lessons=04-grpo,06`
 *             prefixes, `--presets=grpo-copy-kl,grpo-copy-rm` names; about 25 minutes on 2 cores)
 *   defaults  the lab's new-run form as a newcomer leaves it: each language-model algorithm's
 *             default spec (its default task, or each of `--tasks=copy,reverse` as the form
 *             fills it when that task is picked; `--algos=grpo` for some algorithms only),
 *             20 updates on seeds 1–5 beside lr 1e-9 (not in the default set)
 *   forgetting the tool-use lesson's calculator runs at lr 3e-4 without and with the ptx term,
 *             one-digit products from memory retained, seeds 1–3 (CPU; not in the default set:
 *             about 3 minutes)
 *   lora      LoRA-GRPO on the shipped tiny chat model (a Llama in Hugging Face's layout) beside
 *             its controls lr 1e-9 and LoRA on no module, seeds 1–5 (--seeds): held-out strict
 *             success before and after (CPU; not in the default set: about 10 minutes)
 * Results (with the machine described) are saved as JSON under bench/results/.
 *
 * `npm run bench:learn -- --readme` runs nothing: it rewrites the README's tables of lesson claims
 * from the lessons results already saved there (claims-table.ts).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { createCliffWalking } from '../../src/envs/cliff-walking';
import { createFrozenLake } from '../../src/envs/frozen-lake';
import { GridWorld } from '../../src/envs/gridworld';
import { acquireGpu, describeAdapter } from '../../src/gpu';
import type { LanguageModel } from '../../src/models/language-model';
import { CpuLanguageModel } from '../../src/models/lm-cpu';
import { GpuLanguageModel } from '../../src/models/lm-gpu';
import type { TransformerConfig } from '../../src/models/transformer-config';
import { createQLearning } from '../../src/rl/q-learning';
import { createSarsa } from '../../src/rl/sarsa';
import { createValueIteration } from '../../src/rl/value-iteration';
import { ppoCartpoleBenchmark } from './ppo-cartpole';
import { tokenTaskBenchmark } from './token-tasks';
import { agentToolsBenchmark } from './agent-tools';
import { forgettingBenchmark } from './forgetting';
import { lessonEffects } from './lesson-effects';
import { labDefaults } from './lab-defaults';
import { writeReadmeClaims } from './claims-table';
import { loraGrpoBenchmark, loraRecipesBenchmark } from './lora-grpo';

export async function main(argv: string[]): Promise<number> {
  if (argv.includes('--readme')) {
    const changed = writeReadmeClaims();
    console.log(
      changed.length
        ? `README.md: rewrote the claims tables ${changed.join(', ')}; run npx prettier --check README.md`
        : 'README.md: the claims tables already match bench/results',
    );
    return 0;
  }
  const flag = (name: string) => argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
  const quick = argv.includes('--quick');
  const only = (flag('only') ?? 'planning,cliff,cartpole,token').split(',');
  const backend = flag('backend') ?? 'cpu';
  if (backend !== 'cpu' && backend !== 'webgpu') {
    throw new Error(`--backend must be cpu or webgpu, got ${backend}`);
  }
  const seeds = flag('seeds')?.split(',').map(Number);
  if (seeds?.some((s) => !Number.isInteger(s) || s < 1)) {
    throw new Error(`--seeds must be whole numbers ≥ 1 separated by commas, got ${flag('seeds')}`);
  }
  const results: Record<string, unknown> = {};

  if (only.includes('planning')) {
    const planning: Record<string, number> = {};
    for (const [name, model] of [
      ['gridworld', new GridWorld(['S..#...', '.#...#.', '...#..G'], { slip: 0.1 })],
      ['frozenlake-4x4', createFrozenLake({ map: '4x4' })],
    ] as const) {
      const vi = createValueIteration(model, { gamma: 0.99, theta: 1e-8 });
      let sweeps = 0;
      while (sweeps < 10_000 && (await vi.update())['values/converged'] !== 1) sweeps += 1;
      planning[name] = sweeps + 1;
      console.log(`planning: value iteration on ${name} converged after ${sweeps + 1} sweeps`);
    }
    results.planning = planning;
  }

  if (only.includes('cliff')) {
    const cliff: Record<string, unknown> = {};
    for (const [name, create] of [
      ['q-learning', createQLearning],
      ['sarsa', createSarsa],
    ] as const) {
      const trainer = create(createCliffWalking(), { alpha: 0.5, epsilon: 0.1, gamma: 1 }, 1);
      let sum = 0;
      for (let e = 1; e <= 500; e++) {
        const m = await trainer.update();
        if (e > 400) sum += m['charts/episodic_return']!;
      }
      cliff[name] = { meanReturnLast100: sum / 100, greedyPolicy: Array.from(trainer.policy()) };
      console.log(`cliff: ${name} mean return over episodes 401–500: ${(sum / 100).toFixed(1)}`);
    }
    results.cliff = cliff;
  }

  if (only.includes('cartpole')) {
    const bench = await ppoCartpoleBenchmark(
      quick ? [1] : [1, 2, 3, 4, 5],
      quick ? 50_000 : 200_000,
    );
    console.log(bench.table);
    results.cartpole = bench;
  }

  if (only.includes('token')) {
    let description = 'CPU';
    let make = async (config: TransformerConfig, params: Float32Array): Promise<LanguageModel> =>
      new CpuLanguageModel(config, params);
    if (backend === 'webgpu') {
      const found = await acquireGpu();
      if (!found.ok) throw new Error(`--backend=webgpu, but no adapter: ${found.reason.message}`);
      description = `WebGPU: ${describeAdapter(found.gpu.summary)}`;
      make = async (config, params) => new GpuLanguageModel(found.gpu, config, params);
    }
    results.token = await tokenTaskBenchmark(make, description, {
      updates: quick ? 50 : 300,
      seeds: seeds ?? (quick ? [2] : [1, 2, 3]),
    });
  }

  if (only.includes('agent')) {
    const make = async (config: TransformerConfig, params: Float32Array): Promise<LanguageModel> =>
      new CpuLanguageModel(config, params);
    results.agent = await agentToolsBenchmark(make, 'CPU', {
      updates: quick ? 10 : 60,
      sftSteps: quick ? 100 : 400,
      evalEvery: quick ? 5 : 10,
    });
  }

  if (only.includes('forgetting')) {
    const bench = await forgettingBenchmark(quick ? [1] : [1, 2, 3], quick ? 10 : 20);
    console.log(bench.table);
    results.forgetting = bench.rows;
  }

  if (only.includes('lessons')) {
    const bench = await lessonEffects({
      backend,
      seeds: seeds ?? (quick ? [1] : [1, 2, 3, 4, 5]),
      lessons: flag('lessons')?.split(','),
      presets: flag('presets')?.split(','),
      ...(quick ? { budget: 5 } : {}),
      log: console.log,
    });
    console.log(bench.table);
    results.lessons = { backend, rows: bench.rows, table: bench.table };
  }

  if (only.includes('lora')) {
    const bench = await loraGrpoBenchmark(seeds ?? (quick ? [1] : [1, 2, 3, 4, 5]));
    console.log(bench.table);
    results.lora = { rows: bench.rows, passes: bench.passes, table: bench.table };
  }

  if (only.includes('lora-recipes')) {
    const bench = await loraRecipesBenchmark(seeds ?? (quick ? [1] : [1, 2, 3]));
    console.log(bench.table);
    results.loraRecipes = { rows: bench.rows, table: bench.table };
  }

  if (only.includes('defaults')) {
    const bench = await labDefaults({
      seeds: seeds ?? (quick ? [1] : [1, 2, 3, 4, 5]),
      tasks: flag('tasks')?.split(','),
      algos: flag('algos')?.split(','),
      log: console.log,
    });
    console.log(bench.table);
    results.defaults = { rows: bench.rows, table: bench.table };
  }

  mkdirSync(new URL('../results/', import.meta.url), { recursive: true });
  const file = `bench/results/learn-${new Date().toISOString().replace(/[:.]/g, '-')}.json`;
  const machine = {
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model ?? 'unknown',
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
    platform: `${os.platform()} ${os.release()}`,
  };
  writeFileSync(
    new URL(`../../${file}`, import.meta.url),
    `${JSON.stringify({ machine, quick, results }, null, 1)}\n`,
  );
  console.log(`saved ${file}`);
  return 0;
}
