/** Bad input to an op: names the op, the field and what was expected. Thrown before any work. */
export class OpInputError extends Error {
  override readonly name = 'OpInputError';
  constructor(
    readonly op: string,
    readonly field: string,
    message: string,
  ) {
    super(`${op}: ${field} ${message}`);
  }
}
