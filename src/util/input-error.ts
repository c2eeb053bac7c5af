/**
 * Bad input to an op: names the op, the field and what was expected. Thrown before any work.
 * It lives in src/util, the bottom layer, because the checks of src/util/hyperparams.ts throw it
 * as the ops do; src/ops/errors.ts hands it on to the ops and everything above them.
 */
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
