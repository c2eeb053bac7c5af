/**
 * Every problem in a lesson file is a LessonError naming the file and the 1-based line, so a
 * broken lesson fails the build (and the tests) with a message an author can act on.
 */
export class LessonError extends Error {
  constructor(
    readonly file: string,
    readonly line: number,
    readonly reason: string,
  ) {
    super(`${file}:${line}: ${reason}`);
    this.name = 'LessonError';
  }
}
