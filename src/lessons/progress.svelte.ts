/** The reader's lesson progress as rune state, saved to localStorage on every change. */
import {
  emptyProgress,
  parseProgress,
  PROGRESS_KEY,
  withCheck,
  withDone,
  type Progress,
  type ProgressStorage,
} from './progress';

function browserStorage(): ProgressStorage | undefined {
  try {
    return globalThis.localStorage;
  } catch {
    return undefined; // storage disabled: progress lives for this page only
  }
}

export class LessonProgressState {
  progress = $state.raw<Progress>(emptyProgress());

  constructor(private readonly storage: ProgressStorage | undefined = browserStorage()) {
    try {
      this.progress = parseProgress(storage?.getItem(PROGRESS_KEY) ?? null);
    } catch {
      this.progress = emptyProgress();
    }
  }

  isDone(lesson: string): boolean {
    return this.progress.lessons[lesson]?.done ?? false;
  }

  passed(lesson: string, check: string): boolean {
    return this.progress.lessons[lesson]?.checks.includes(check) ?? false;
  }

  pass(lesson: string, check: string, required: readonly string[]): void {
    this.save(withCheck(this.progress, lesson, check, required));
  }

  markDone(lesson: string): void {
    this.save(withDone(this.progress, lesson));
  }

  private save(next: Progress): void {
    this.progress = next;
    try {
      this.storage?.setItem(PROGRESS_KEY, JSON.stringify(next));
    } catch {
      // Quota or privacy mode: keep the progress for this page.
    }
  }
}

let shared: LessonProgressState | undefined;

/** The app's one progress state. */
export function lessonProgress(): LessonProgressState {
  return (shared ??= new LessonProgressState());
}
