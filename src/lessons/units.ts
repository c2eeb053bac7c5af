/**
 * The curriculum's units: a title and a one-line summary per unit folder (lessons/NN-unit). The
 * lessons themselves come from the catalog, so a unit's cards, links and minutes follow the files;
 * only the words here are written by hand, and a test fails when a folder has none.
 */
import { lessonsByUnit } from './catalog';
import type { LessonHead } from './lesson-head';

export interface UnitText {
  title: string;
  summary: string;
}

/** Unit folder → its title and summary. */
export const UNIT_TEXT: Readonly<Record<string, UnitText>> = {
  '01-mdp': {
    title: 'Markov decision processes',
    summary:
      'States, actions, rewards and returns — and how to plan and learn when the world is small.',
  },
  '02-policy-gradient': {
    title: 'Policy gradient',
    summary:
      'Learn the policy directly from sampled returns, and cut the variance with a baseline.',
  },
  '03-ppo': {
    title: 'PPO',
    summary: 'Keep each update in a trust region with a clipped ratio; add a critic and GAE.',
  },
  '04-grpo': {
    title: 'GRPO for language models',
    summary: 'Drop the critic: sample a group, score it, and learn from relative advantages.',
  },
  '05-reward-engineering': {
    title: 'Reward engineering',
    summary: 'Verifiers, rules and learned reward models — and how a policy games each of them.',
  },
  '06-tool-use': {
    title: 'Tool-using agents',
    summary:
      'Episodes where the policy calls tools: which tokens are trained, and what it forgets.',
  },
  '07-reading-a-run': {
    title: 'Reading a run',
    summary:
      'Reward, entropy, KL, clip fraction and length: what healthy and failing runs look like.',
  },
  '08-real-models': {
    title: 'From toy to real',
    summary:
      'A model in Hugging Face’s layout with its own tokenizer and chat template, trained with LoRA-GRPO.',
  },
};

export interface CurriculumUnit extends UnitText {
  /** The unit folder, e.g. `01-mdp`. */
  id: string;
  lessons: LessonHead[];
  /** Estimated minutes over all its lessons. */
  minutes: number;
}

/** Folder names without a written title still read well: `05-reward-engineering` → "Reward engineering". */
function titleFromFolder(unit: string): string {
  const words = unit.replace(/^\d+-/, '').replace(/-/g, ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** The units in reading order, each with its lessons from the catalog. */
export function curriculum(
  units: Map<string, LessonHead[]> = lessonsByUnit(),
  text: Readonly<Record<string, UnitText>> = UNIT_TEXT,
): CurriculumUnit[] {
  return [...units].map(([id, lessons]) => ({
    id,
    title: text[id]?.title ?? titleFromFolder(id),
    summary: text[id]?.summary ?? '',
    lessons,
    minutes: lessons.reduce((sum, lesson) => sum + lesson.minutes, 0),
  }));
}
