/**
 * A warm-up over several agent tasks at once: each sample is drawn from one of `parts`, picked by
 * weight, and its demonstration and verdict come from the task that drew it. A model warmed up so
 * knows more than the one task a run then trains on by RL, which is what the forgetting lesson
 * needs: RL on one part, the retained task's success on another (src/rl/retained-task.ts).
 *
 * The tools offered are the union of the parts'; the row must hold the longest part's episode.
 */
import { OpInputError } from '../ops/errors';
import type { TokenTaskSample } from '../envs/token-tasks/types';
import type { AgentTask } from './agent-task';

export interface MixedPart {
  task: AgentTask;
  /** Relative share of the samples, > 0. */
  weight: number;
}

export function mixedAgentTask(name: string, parts: readonly MixedPart[]): AgentTask {
  if (parts.length === 0) throw new OpInputError('mixedAgentTask', 'parts', 'must not be empty');
  parts.forEach((part, i) => {
    if (!(part.weight > 0 && Number.isFinite(part.weight))) {
      throw new OpInputError(
        'mixedAgentTask',
        `parts[${i}].weight`,
        `must be a finite number > 0, got ${part.weight}`,
      );
    }
  });
  const total = parts.reduce((sum, p) => sum + p.weight, 0);
  // Which part drew a sample: the sample objects are ours, so identity is enough.
  const origin = new WeakMap<TokenTaskSample, AgentTask>();
  const of = (sample: TokenTaskSample): AgentTask => {
    const task = origin.get(sample);
    if (!task) throw new Error(`${name}: the sample '${sample.prompt}' was not drawn by this task`);
    return task;
  };
  const first = parts[0]!.task;
  return {
    kind: 'agent',
    name,
    tools: [...new Set(parts.flatMap((p) => p.task.tools))],
    env: first.env,
    maxChars: Math.max(...parts.map((p) => p.task.maxChars)),
    answerChars: [...new Set(parts.flatMap((p) => [...p.task.answerChars]))].join(''),
    sample(random: () => number): TokenTaskSample {
      let pick = random() * total;
      const part = parts.find((p) => (pick -= p.weight) < 0) ?? parts[parts.length - 1]!;
      const sample = part.task.sample(random);
      origin.set(sample, part.task);
      return sample;
    },
    demonstration: (sample) => of(sample).demonstration(sample),
    verify: (sample, answer) => of(sample).verify(sample, answer),
  };
}
