/** Seeded randomness: the same seed gives the same numbers on every run and every machine. */

/** mulberry32's state increment: the state after n draws is seed + n·MULBERRY_STEP (mod 2³²). */
const MULBERRY_STEP = 0x6d2b79f5;

/**
 * mulberry32: a small, fast 32-bit PRNG; returns uniforms in [0, 1). With `skip`, the stream
 * starts as if `skip` numbers had been drawn already: its state is a counter, so this costs
 * nothing however large `skip` is (a checkpoint's draw count comes from a file).
 */
export function seededRandom(seed: number, skip = 0): () => number {
  // skip mod 2³² is exact for any safe integer; Math.imul multiplies mod 2³².
  let state = (seed + Math.imul(skip % 2 ** 32, MULBERRY_STEP)) >>> 0;
  return () => {
    state = (state + MULBERRY_STEP) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A seeded stream that counts its draws, so a checkpoint can bring it back where it was. */
export interface RandomStream {
  (): number;
  /** Numbers drawn so far. */
  readonly draws: number;
}

/** seededRandom(seed) with `skip` draws already taken (a resumed stream continues exactly). */
export function randomStream(seed: number, skip = 0): RandomStream {
  if (!Number.isSafeInteger(skip) || skip < 0) {
    throw new Error(`random stream: draws must be a whole number ≥ 0, got ${skip}`);
  }
  const next = seededRandom(seed, skip);
  let draws = skip;
  const stream = () => {
    draws += 1;
    return next();
  };
  return Object.defineProperty(stream, 'draws', { get: () => draws }) as RandomStream;
}

/** `length` float32 values uniform in [-scale, scale), from `seed`. */
export function uniformF32(length: number, scale: number, seed: number): Float32Array {
  const next = seededRandom(seed);
  const out = new Float32Array(length);
  for (let i = 0; i < length; i++) out[i] = (next() * 2 - 1) * scale;
  return out;
}

/** A standard normal draw from uniforms in [0, 1) (Box–Muller; 1 − u keeps the log finite). */
export function gaussian(next: () => number): number {
  const u = 1 - next();
  const v = next();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
}
