/**
 * The lessons' widgets whose claims the learning bench measures and the README tabulates
 * (lesson-effects.ts, claims-table.ts): language-model presets with a metric check.
 */
import type { MetricCheck } from '../../src/lessons/checks';
import { lessonBlocks, lessonWidgets, type WidgetBlock } from '../../src/lessons/lesson';
import type { LessonHead } from '../../src/lessons/lesson-head';
import { PRESETS } from '../../src/lessons/presets';
import { ALGORITHMS } from '../../src/rl/registry';

export type LmMetricWidget = WidgetBlock & { check: MetricCheck };

/** A lesson's widgets (a seeds block's presets included) whose claims the bench measures. */
export function lmMetricWidgets(lesson: LessonHead): LmMetricWidget[] {
  return lessonWidgets(lessonBlocks(lesson)).filter(
    (b): b is LmMetricWidget =>
      b.check.kind === 'metric' && ALGORITHMS[PRESETS[b.preset].algo]!.family === 'lm',
  );
}
