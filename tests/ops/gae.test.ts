import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { OpInputError } from '../../src/ops/errors';
import { type GaeInput, type GaeOptions, gae } from '../../src/ops/gae';
import { randomLogits, seededRandom } from '../support/random';

const close = (actual: Float32Array, expected: number[], digits = 5) => {
  expect(actual.length).toBe(expected.length);
  expected.forEach((v, i) => expect(actual[i]!, `index ${i}`).toBeCloseTo(v, digits));
};

/** A random 0/1 mask with at least one 1 per row when `nonEmpty`. */
function randomMask(rows: number, cols: number, seed: number, p = 0.7): Float32Array {
  const next = seededRandom(seed);
  return Float32Array.from({ length: rows * cols }, () => (next() < p ? 1 : 0));
}

describe('gae (CPU reference)', () => {
  // One row, T = 3, γ = 0.9, λ = 0.8 (γλ = 0.72), a mask gap at t = 1:
  //   r = [1, 0, 2], v = [0.5, 0.4, 1.0], m = [1, 0, 1]
  const gapInput: GaeInput = {
    rewards: new Float32Array([1, 0, 2]),
    values: new Float32Array([0.5, 0.4, 1.0]),
    mask: new Float32Array([1, 0, 1]),
  };

  it("matches hand-worked values in 'skip' mode (verl)", () => {
    // t=2 (m=1): δ = 2 + 0.9·0 − 1.0 = 1.0; g = 1.0 → nextValue 1.0, lastGae 1.0; ret = 1 + 1 = 2
    // t=1 (m=0): δ = 0 + 0.9·1.0 − 0.4 = 0.5, discarded; adv = lastGae = 1.0; ret = 1.0 + 0.4 = 1.4
    // t=0 (m=1): δ = 1 + 0.9·1.0 − 0.5 = 1.4; g = 1.4 + 0.72·1.0 = 2.12; ret = 2.12 + 0.5 = 2.62
    const out = gae(gapInput, 1, 3, { gamma: 0.9, lambda: 0.8 });
    close(out.advantages, [2.12, 1.0, 1.0]);
    close(out.returns, [2.62, 1.4, 2.0]);
  });

  it("matches hand-worked values in 'zero-step' mode (OpenRLHF)", () => {
    // v·m = [0.5, 0, 1.0], r·m = [1, 0, 2]
    // t=2: next 0;   δ = 2 − 1.0 = 1;            lastGae = 1;                  ret = 1 + 1.0 = 2
    // t=1: next 1.0; δ = 0 + 0.9·1.0 − 0 = 0.9;  lastGae = 0.9 + 0.72·1 = 1.62; ret = 1.62 + 0
    // t=0: next 0;   δ = 1 + 0 − 0.5 = 0.5;      lastGae = 0.5 + 0.72·1.62 = 1.6664;
    //                                            ret = 1.6664 + 0.5 = 2.1664
    const out = gae(gapInput, 1, 3, { flavor: 'openrlhf', gamma: 0.9, lambda: 0.8 });
    close(out.advantages, [1.6664, 1.62, 1]);
    close(out.returns, [2.1664, 1.62, 2]);
  });

  it('uses each flavor’s defaults (verl γ = λ = 1; TRL and OpenRLHF λ = 0.95, zero-step)', () => {
    // verl, skip, γ = λ = 1 on the gap input: t=2: δ = 2 − 1 = 1, adv 1; t=0: δ = 1 + 1.0 − 0.5 =
    // 1.5, adv = 1.5 + 1·1 = 2.5. The masked step carries 1.
    close(gae(gapInput, 1, 3).advantages, [2.5, 1, 1]);
    // OpenRLHF, zero-step, γ = 1, λ = 0.95: t=2: 1; t=1: δ = 0 + 1.0 − 0 = 1, adv = 1 + 0.95 =
    // 1.95; t=0: δ = 1 + 0 − 0.5 = 0.5, adv = 0.5 + 0.95·1.95 = 2.3525.
    close(gae(gapInput, 1, 3, { flavor: 'openrlhf' }).advantages, [2.3525, 1.95, 1]);
    close(gae(gapInput, 1, 3, { flavor: 'trl' }).advantages, [2.3525, 1.95, 1]);
  });

  it('cuts at dones and bootstraps truncated rows', () => {
    // γ = 0.5, λ = 1, r = [1, 2, 4], v = [1, 1, 1], dones = [0, 1, 0], bootstrap = 8.
    // t=2: next = 8: δ = 4 + 0.5·8 − 1 = 7; adv 7; ret 8        (= 4 + 0.5·8, truncated)
    // t=1: done → next 0, lastGae 0: δ = 2 − 1 = 1; adv 1; ret 2 (episode ends after t=1)
    // t=0: next = v1 = 1: δ = 1 + 0.5 − 1 = 0.5; adv = 0.5 + 0.5·1 = 1; ret 2 (= 1 + 0.5·2)
    const out = gae(
      {
        rewards: new Float32Array([1, 2, 4]),
        values: new Float32Array([1, 1, 1]),
        mask: new Float32Array([1, 1, 1]),
        dones: new Float32Array([0, 1, 0]),
        bootstrapValue: new Float32Array([8]),
      },
      1,
      3,
      { gamma: 0.5, lambda: 1 },
    );
    close(out.advantages, [1, 1, 7]);
    close(out.returns, [2, 2, 8]);
    // A done at the last step ignores the bootstrap: δ = 1 − 0.5 = 0.5.
    const terminal = gae(
      {
        rewards: new Float32Array([1]),
        values: new Float32Array([0.5]),
        mask: new Float32Array([1]),
        dones: new Float32Array([1]),
        bootstrapValue: new Float32Array([100]),
      },
      1,
      1,
      { gamma: 0.9 },
    );
    close(terminal.advantages, [0.5]);
  });

  it('property: skip mode equals GAE on the compressed trajectory of unmasked steps', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 1, max: 24 }),
        fc.integer({ min: 0, max: 2 ** 31 - 1 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.boolean(),
        (rows, cols, seed, gamma, lambda, withBootstrap) => {
          const rewards = randomLogits(rows * cols, 2, seed);
          const values = randomLogits(rows * cols, 2, seed + 1);
          const mask = randomMask(rows, cols, seed + 2);
          const bootstrapValue = withBootstrap ? randomLogits(rows, 3, seed + 3) : undefined;
          const options: GaeOptions = { gamma, lambda, maskMode: 'skip' };
          const full = gae({ rewards, values, mask, bootstrapValue }, rows, cols, options);
          for (let b = 0; b < rows; b++) {
            const kept = [...Array(cols).keys()].filter((t) => mask[b * cols + t] === 1);
            if (kept.length === 0) continue;
            const pick = (x: Float32Array) => Float32Array.from(kept, (t) => x[b * cols + t]!);
            const compressed = gae(
              {
                rewards: pick(rewards),
                values: pick(values),
                mask: new Float32Array(kept.length).fill(1),
                bootstrapValue: bootstrapValue?.subarray(b, b + 1),
              },
              1,
              kept.length,
              options,
            );
            kept.forEach((t, j) => {
              expect(full.advantages[b * cols + t]).toBeCloseTo(compressed.advantages[j]!, 5);
              expect(full.returns[b * cols + t]).toBeCloseTo(compressed.returns[j]!, 5);
            });
          }
        },
      ),
      { numRuns: 150 },
    );
  });

  it('property: in skip mode, rewards and values at masked steps never change unmasked outputs', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 1, max: 24 }),
        fc.integer({ min: 0, max: 2 ** 31 - 1 }),
        (rows, cols, seed) => {
          const rewards = randomLogits(rows * cols, 2, seed);
          const values = randomLogits(rows * cols, 2, seed + 1);
          const mask = randomMask(rows, cols, seed + 2, 0.5);
          const noiseR = randomLogits(rows * cols, 50, seed + 3);
          const noiseV = randomLogits(rows * cols, 50, seed + 4);
          const rewards2 = rewards.map((r, i) => (mask[i] ? r : noiseR[i]!));
          const values2 = values.map((v, i) => (mask[i] ? v : noiseV[i]!));
          const options: GaeOptions = { gamma: 0.95, lambda: 0.9 };
          const a = gae({ rewards, values, mask }, rows, cols, options);
          const b = gae({ rewards: rewards2, values: values2, mask }, rows, cols, options);
          for (let i = 0; i < mask.length; i++) {
            if (mask[i] === 1) {
              expect(b.advantages[i]).toBe(a.advantages[i]);
              expect(b.returns[i]).toBe(a.returns[i]);
            }
          }
        },
      ),
      { numRuns: 150 },
    );
  });

  it('property: with nothing masked both modes agree, and λ = 1 returns are discounted sums', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 20 }),
        fc.integer({ min: 0, max: 2 ** 31 - 1 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (cols, seed, gamma) => {
          const input = {
            rewards: randomLogits(cols, 2, seed),
            values: randomLogits(cols, 2, seed + 1),
            mask: new Float32Array(cols).fill(1),
          };
          const skip = gae(input, 1, cols, { gamma, lambda: 1, maskMode: 'skip' });
          const zero = gae(input, 1, cols, { gamma, lambda: 1, maskMode: 'zero-step' });
          let discounted = 0;
          for (let t = cols - 1; t >= 0; t--) {
            discounted = input.rewards[t]! + gamma * discounted;
            expect(skip.advantages[t]).toBeCloseTo(zero.advantages[t]!, 5);
            // λ = 1: returns telescope to the Monte Carlo return Σ_k γ^k r_{t+k}.
            expect(skip.returns[t]).toBeCloseTo(discounted, 4);
          }
        },
      ),
      { numRuns: 150 },
    );
  });

  it('property: a done splits a row into two independent episodes', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 2, max: 20 }),
        fc.integer({ min: 0, max: 2 ** 31 - 1 }),
        (cols, seed) => {
          const next = seededRandom(seed);
          const cut = Math.floor(next() * (cols - 1)); // the episode ends after step `cut`
          const rewards = randomLogits(cols, 2, seed);
          const values = randomLogits(cols, 2, seed + 1);
          const mask = new Float32Array(cols).fill(1);
          const dones = new Float32Array(cols);
          dones[cut] = 1;
          const boot = new Float32Array([1.5]);
          const options: GaeOptions = { gamma: 0.9, lambda: 0.8 };
          const whole = gae(
            { rewards, values, mask, dones, bootstrapValue: boot },
            1,
            cols,
            options,
          );
          const part = (from: number, to: number, bootstrapValue?: Float32Array) =>
            gae(
              {
                rewards: rewards.slice(from, to),
                values: values.slice(from, to),
                mask: mask.slice(from, to),
                bootstrapValue,
              },
              1,
              to - from,
              options,
            ).advantages;
          const first = part(0, cut + 1);
          const second = part(cut + 1, cols, boot);
          for (let t = 0; t < cols; t++) {
            const expected = t <= cut ? first[t]! : second[t - cut - 1]!;
            expect(whole.advantages[t]).toBeCloseTo(expected, 5);
          }
        },
      ),
      { numRuns: 100 },
    );
  });

  const ok = (): GaeInput => ({
    rewards: new Float32Array(4),
    values: new Float32Array(4),
    mask: new Float32Array([1, 1, 0, 1]),
  });

  it.each([
    ['gamma above 1', () => gae(ok(), 2, 2, { gamma: 1.5 }), /gamma must be in \[0, 1\]/],
    ['negative lambda', () => gae(ok(), 2, 2, { lambda: -0.1 }), /lambda must be in \[0, 1\]/],
    ['NaN gamma', () => gae(ok(), 2, 2, { gamma: NaN }), /gamma must be in \[0, 1\], got NaN/],
    [
      'maskMode',
      () => gae(ok(), 2, 2, { maskMode: 'drop' as 'skip' }),
      /maskMode must be one of 'skip', 'zero-step', got 'drop'/,
    ],
    [
      'NaN reward',
      () => gae({ ...ok(), rewards: new Float32Array([0, 0, NaN, 0]) }, 2, 2),
      /rewards must be finite, but index 2 \(row 1, col 0\) is NaN/,
    ],
    [
      'infinite value',
      () => gae({ ...ok(), values: new Float32Array([0, Infinity, 0, 0]) }, 2, 2),
      /values must be finite, but index 1 \(row 0, col 1\) is Infinity/,
    ],
    [
      'mask value 0.5',
      () => gae({ ...ok(), mask: new Float32Array([1, 0.5, 1, 1]) }, 2, 2),
      /mask must be 0 or 1, but index 1 \(row 0, col 1\) is 0.5/,
    ],
    [
      'dones value 2',
      () => gae({ ...ok(), dones: new Float32Array([0, 0, 0, 2]) }, 2, 2),
      /dones must be 0 or 1, but index 3 \(row 1, col 1\) is 2/,
    ],
    [
      'values shape',
      () => gae({ ...ok(), values: new Float32Array(3) }, 2, 2),
      /values must have rows × cols = 2 × 2 = 4 elements, got 3/,
    ],
    [
      'bootstrap length',
      () => gae({ ...ok(), bootstrapValue: new Float32Array(3) }, 2, 2),
      /bootstrapValue must have B = 2 elements, got 3/,
    ],
    [
      'non-finite bootstrap',
      () => gae({ ...ok(), bootstrapValue: new Float32Array([0, -Infinity]) }, 2, 2),
      /bootstrapValue must be finite, but index 1 is -Infinity/,
    ],
  ])('rejects bad %s with an OpInputError naming it', (_name, call, pattern) => {
    expect(call).toThrow(OpInputError);
    expect(call).toThrow(pattern);
  });
});
