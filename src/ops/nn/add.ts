/**
 * Elementwise addition: the residual connections of a transformer block (x + attn(ln1(x)),
 * x + mlp(ln2(x))) and gradient accumulation into the residual stream. CPU twin of
 * kernels/nn/add.wgsl and kernels/nn/add_into.wgsl (src/gpu/kernels/nn/add.ts).
 *
 *   a, b, out, acc, x: (L), any shape flattened.
 */
import { OpInputError } from '../errors';
import { checkLength } from '../validate';
import { type Floats, zerosLike } from './floats';

/** The checks add() and addGpu() share. a, b: (L), L ≥ 1. */
export function checkAddInput(a: Floats, b: Floats): void {
  if (a.length < 1) throw new OpInputError('add', 'a', 'must have at least 1 element, got 0');
  checkLength('add', 'b', b, a.length, 'a.length');
}

/** The checks addInto() and addIntoGpu() share. acc, x: (L), L ≥ 1. */
export function checkAddIntoInput(acc: Floats, x: Floats): void {
  if (acc.length < 1) {
    throw new OpInputError('addInto', 'acc', 'must have at least 1 element, got 0');
  }
  checkLength('addInto', 'x', x, acc.length, 'acc.length');
}

/** out = a + b, a new array. */
export function add<T extends Floats>(a: T, b: T): T {
  checkAddInput(a, b);
  const out = zerosLike(a, a.length);
  for (let i = 0; i < a.length; i++) out[i] = a[i]! + b[i]!;
  return out;
}

/** acc += x, in place. */
export function addInto<T extends Floats>(acc: T, x: T): void {
  checkAddIntoInput(acc, x);
  for (let i = 0; i < acc.length; i++) acc[i] = acc[i]! + x[i]!;
}
