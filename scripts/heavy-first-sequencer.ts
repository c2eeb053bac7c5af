/**
 * Vitest's file order, with the known-long files first. Without a results cache (a fresh clone in
 * CI) Vitest runs larger files first, and the lesson-preset files are small but each trains runs
 * for about a minute: last in line, one of them kept a worker busy alone at the end of the CPU
 * layer. Started first, they overlap with the many short files instead. The learning tests are
 * split one seed a file (tests/lessons/learning-<preset>-seed-<n>.test.ts) for the same reason.
 */
import { BaseSequencer, type TestSpecification } from 'vitest/node';

// The trainers' trace replay (tests/rl/lm-trainer-trace) runs every LM preset for two updates;
// tests/rl/lora-grpo-learning trains the tiny chat model twice.
const LONG_FILES =
  /\/tests\/(lessons\/(preset-[a-z-]+|learning-[a-z-]+-seed-\d)|rl\/(lm-trainer-trace|lora-grpo-learning))\.test\.ts$/;

export class HeavyFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    // Stable within each project (Vitest runs projects one after another, in this order).
    const projectRank = new Map<string, number>();
    for (const spec of sorted) {
      if (!projectRank.has(spec.project.name)) projectRank.set(spec.project.name, projectRank.size);
    }
    const rank = (spec: TestSpecification) =>
      projectRank.get(spec.project.name)! * 2 + (LONG_FILES.test(spec.moduleId) ? 0 : 1);
    return sorted
      .map((spec, index) => ({ spec, index }))
      .sort((a, b) => rank(a.spec) - rank(b.spec) || a.index - b.index)
      .map(({ spec }) => spec);
  }
}
