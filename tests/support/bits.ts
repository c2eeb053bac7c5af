/** True when every element has the same bits (Object.is: −0 ≠ +0, NaN = NaN). */
export function sameBits(x: ArrayLike<number>, y: ArrayLike<number>): boolean {
  if (x.length !== y.length) return false;
  for (let i = 0; i < x.length; i++) if (!Object.is(x[i], y[i])) return false;
  return true;
}
