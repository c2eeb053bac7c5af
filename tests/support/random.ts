/** Seeded test data; the generators live in src/util so the app and the tests share them. */
export { seededRandom, uniformF32 as randomLogits } from '../../src/util/random';
export { maxAbsDiff } from '../../src/util/max-abs-diff';
