/**
 * The CPU MLP (CleanRL's PPO actor/critic): float64 gradient checks of every parameter tensor for
 * each activation, the orthogonal init (orthogonality, sign correction, determinism), the layout, a
 * hand-worked 2-2-1 net forward and backward, and the config / input checks.
 */
import { describe, expect, it } from 'vitest';
import { mlpBackward, mlpForward } from '../../src/models/mlp-cpu';
import {
  type MlpConfig,
  initMlp,
  mlpLayout,
  ppoActorConfig,
  ppoCriticConfig,
} from '../../src/models/mlp-params';
import { orthogonal, orthogonalFrom } from '../../src/models/orthogonal-init';
import { OpInputError } from '../../src/ops/errors';
import { dot, gradCheck, probeWeights, randomF64 } from '../support/gradcheck';
import { seededRandom } from '../support/random';

/** max |G − gain²·I| where G = WᵀW (cols × cols) when W is tall or square, WWᵀ (rows × rows) when wide. */
function gramError(w: ArrayLike<number>, rows: number, cols: number, gain: number): number {
  const tall = rows >= cols;
  const n = tall ? cols : rows;
  const m = tall ? rows : cols;
  // Entry (i, k) of W viewed as the tall matrix M (m × n).
  const at = (i: number, k: number) => (tall ? w[i * cols + k]! : w[k * cols + i]!);
  let worst = 0;
  for (let a = 0; a < n; a++) {
    for (let b = 0; b < n; b++) {
      let s = 0;
      for (let i = 0; i < m; i++) s += at(i, a) * at(i, b);
      worst = Math.max(worst, Math.abs(s - (a === b ? gain * gain : 0)));
    }
  }
  return worst;
}

describe('orthogonal init', () => {
  it('sign-corrects as torch does: diag(R) > 0, so A = diag(−2, 3) gives Q = diag(−1, 1)', () => {
    // A = Q·R with R = diag(2, 3) > 0 forces Q = diag(−1, 1); gain 2 doubles it.
    const w = orthogonalFrom(Float64Array.from([-2, 0, 0, 3]), 2, 2, 2);
    expect(Array.from(w)).toEqual([-2, 0, 0, 2]);
  });

  // A (3 × 2) = [[3, 1], [4, 2], [0, 5]]. Gram–Schmidt on its columns:
  //   q0 = (3, 4, 0)/5 = (0.6, 0.8, 0)
  //   v = (1, 2, 5) − (q0·(1, 2, 5)) q0 = (1, 2, 5) − 2.2·(0.6, 0.8, 0) = (−0.32, 0.24, 5)
  //   ‖v‖ = √(0.1024 + 0.0576 + 25) = √25.16,  q1 = v / √25.16
  const s = Math.sqrt(25.16);
  const q = [0.6, -0.32 / s, 0.8, 0.24 / s, 0, 5 / s]; // (3 × 2) row-major

  it('a tall matrix: Q of the reduced QR, worked by hand', () => {
    const w = orthogonalFrom(Float64Array.from([3, 1, 4, 2, 0, 5]), 3, 2, 1);
    w.forEach((v, i) => expect(v).toBeCloseTo(q[i]!, 14));
  });

  it('a wide matrix: torch transposes, factors, transposes back (Qᵀ of the tall case)', () => {
    // A (2 × 3) = [[3, 4, 0], [1, 2, 5]] is the transpose of the tall case: W = Qᵀ.
    const w = orthogonalFrom(Float64Array.from([3, 4, 0, 1, 2, 5]), 2, 3, 1);
    const qt = [q[0]!, q[2]!, q[4]!, q[1]!, q[3]!, q[5]!];
    w.forEach((v, i) => expect(v).toBeCloseTo(qt[i]!, 14));
  });

  it.each([
    [1, 1, 1],
    [5, 1, 0.5],
    [1, 5, 3],
    [7, 3, Math.SQRT2],
    [3, 7, Math.SQRT2],
    [64, 4, Math.SQRT2],
    [64, 64, Math.SQRT2],
    [2, 64, 0.01],
    [33, 100, 1],
  ])('(%i × %i, gain %d): WᵀW or WWᵀ = gain²·I within 1e-12', (rows, cols, gain) => {
    const w = orthogonal(rows, cols, gain, seededRandom(rows * 1000 + cols));
    expect(gramError(w, rows, cols, gain)).toBeLessThan(1e-12);
  });

  it('rejects a rank-deficient hand-made matrix and bad sizes', () => {
    expect(() => orthogonalFrom(Float64Array.from([1, 2, 2, 4]), 2, 2, 1)).toThrow(/dependent/);
    expect(() => orthogonal(0, 3, 1, seededRandom(1))).toThrow(OpInputError);
    expect(() => orthogonal(3, 3, NaN, seededRandom(1))).toThrow(/gain/);
  });
});

describe('mlp layout and init (CleanRL ppo.py Agent)', () => {
  const actor = ppoActorConfig(4, 2);
  const critic = ppoCriticConfig(4);

  it('names l0.w (h0, inputs) …, weights first (decayed), biases after, 64-float aligned', () => {
    const layout = mlpLayout(actor);
    expect(layout.entries.map((e) => [e.name, e.shape, e.decay, e.offset])).toEqual([
      ['l0.w', [64, 4], true, 0],
      ['l1.w', [64, 64], true, 256],
      ['l2.w', [2, 64], true, 256 + 4096],
      ['l0.b', [64], false, 4480],
      ['l1.b', [64], false, 4544],
      ['l2.b', [2], false, 4608],
    ]);
    expect(layout.decayRange).toEqual({ offset: 0, count: 4480 });
    expect(layout.noDecayRange).toEqual({ offset: 4480, count: 192 });
    // PyTorch's sum(p.numel()) for CleanRL's CartPole agent: 4·64+64 + 64·64+64 + 64·2+2 = 4610
    // (actor) and 4·64+64 + 64·64+64 + 64+1 = 4545 (critic).
    expect(layout.parameterCount).toBe(4610);
    expect(mlpLayout(critic).parameterCount).toBe(4545);
  });

  it.each([
    ['actor', actor],
    ['critic', critic],
  ])(
    '%s: orthogonal weights with gain √2 hidden, outputGain last; biases and padding 0',
    (_, config) => {
      const layout = mlpLayout(config);
      const params = initMlp(config, 1);
      const tensor = (name: string) => layout.view(params, name);
      // f32 storage rounds each entry by ≤ 2^−24 relative: Gram entries move by ~1e-7.
      expect(gramError(tensor('l0.w'), 64, 4, Math.SQRT2)).toBeLessThan(1e-5); // tall: WᵀW = 2·I₄
      expect(gramError(tensor('l1.w'), 64, 64, Math.SQRT2)).toBeLessThan(1e-5);
      const out = config.outputs;
      expect(gramError(tensor('l2.w'), out, 64, config.outputGain)).toBeLessThan(1e-5); // wide: WWᵀ
      const used = new Uint8Array(layout.total);
      for (const e of layout.entries) {
        used.fill(1, e.offset, e.offset + e.size);
        if (!e.decay) expect(Array.from(tensor(e.name)).every((v) => v === 0)).toBe(true);
      }
      for (let i = 0; i < layout.total; i++) if (!used[i]) expect(params[i]).toBe(0);
    },
  );

  it('is deterministic per seed and differs between seeds; f32 and f64 draw the same values', () => {
    const a = initMlp(actor, 42);
    expect(initMlp(actor, 42)).toEqual(a);
    expect(initMlp(actor, 43)).not.toEqual(a);
    expect(Float32Array.from(initMlp(actor, 42, 'f64'))).toEqual(a);
  });
});

describe('mlp forward and backward, a 2-2-1 net worked by hand', () => {
  // W0 = [[1, −1], [2, 0.5]], b0 = [0.5, −1], W1 = [[3, −2]], b1 = [0.25]; obs rows (1, 2), (−1, 0.5).
  //   row 0: z = (1 − 2 + 0.5, 2 + 1 − 1) = (−0.5, 2)
  //   row 1: z = (−1 − 0.5 + 0.5, −2 + 0.25 − 1) = (−1, −2.75)
  const config = (activation: 'relu' | 'tanh'): MlpConfig => ({
    inputs: 2,
    hidden: [2],
    outputs: 1,
    activation,
    outputGain: 1,
  });
  const layout = mlpLayout(config('relu'));
  const params = new Float64Array(layout.total);
  layout.view(params, 'l0.w').set([1, -1, 2, 0.5]);
  layout.view(params, 'l0.b').set([0.5, -1]);
  layout.view(params, 'l1.w').set([3, -2]);
  layout.view(params, 'l1.b').set([0.25]);
  const obs = Float64Array.from([1, 2, -1, 0.5]);

  it('relu: out = 3·relu(z0) − 2·relu(z1) + 0.25', () => {
    // row 0: relu(z) = (0, 2) → 0 − 4 + 0.25 = −3.75; row 1: relu(z) = (0, 0) → 0.25.
    const { out } = mlpForward(config('relu'), layout, params, obs, 2);
    expect(Array.from(out)).toEqual([-3.75, 0.25]);
  });

  it('tanh: out = 3·tanh(z0) − 2·tanh(z1) + 0.25', () => {
    // tanh 0.5 = 0.46211715726, tanh 2 = 0.96402758008, tanh 1 = 0.76159415596,
    // tanh 2.75 = 0.99185972457.
    // row 0: −3·0.46211715726 − 2·0.96402758008 + 0.25 = −3.06440663194
    // row 1: −3·0.76159415596 + 2·0.99185972457 + 0.25 = −0.05106301874
    const { out } = mlpForward(config('tanh'), layout, params, obs, 2);
    expect(out[0]).toBeCloseTo(-3.06440663194, 10);
    expect(out[1]).toBeCloseTo(-0.05106301874, 10);
  });

  it('relu backward with dout = (1, 2)', () => {
    // Last layer: dW1 = Σ_r dout_r·relu(z_r) = 1·(0, 2) + 2·(0, 0) = (0, 2); db1 = 1 + 2 = 3.
    // d relu(z) = dout_r·W1: row 0 (3, −2), row 1 (6, −4); relu′: row 0 (0, 1), row 1 (0, 0)
    //   → dz row 0 = (0, −2), row 1 = (0, 0).
    // dW0 = Σ_r dz_rᵀ·obs_r = [[0, 0], [−2·1, −2·2]] = [[0, 0], [−2, −4]]; db0 = (0, −2).
    const relu = config('relu');
    const { acts } = mlpForward(relu, layout, params, obs, 2);
    const grads = mlpBackward(relu, layout, params, acts, Float64Array.from([1, 2]));
    const g = (name: string) => Array.from(layout.view(grads, name));
    expect(g('l1.w')).toEqual([0, 2]);
    expect(g('l1.b')).toEqual([3]);
    expect(g('l0.w')).toEqual([0, 0, -2, -4]);
    expect(g('l0.b')).toEqual([0, -2]);
  });
});

describe.each<[string, MlpConfig]>([
  [
    'tanh, 3 → [5, 4] → 2',
    { inputs: 3, hidden: [5, 4], outputs: 2, activation: 'tanh', outputGain: 1 },
  ],
  [
    'relu, 3 → [5, 4] → 2',
    { inputs: 3, hidden: [5, 4], outputs: 2, activation: 'relu', outputGain: 1 },
  ],
  [
    'gelu, 2 → [4, 3, 5] → 3',
    { inputs: 2, hidden: [4, 3, 5], outputs: 3, activation: 'gelu', outputGain: 0.5 },
  ],
  [
    'tanh, 6 → [7] → 1 (critic)',
    { inputs: 6, hidden: [7], outputs: 1, activation: 'tanh', outputGain: 1 },
  ],
])('mlp gradient check (%s)', (_, config) => {
  const layout = mlpLayout(config);
  const batch = 6;
  // Orthogonal init plus noise, so biases are not 0 and every path carries gradient.
  const params = initMlp(config, 5, 'f64');
  const noise = randomF64(layout.total, 0.3, 6);
  for (const e of layout.entries) {
    for (let i = e.offset; i < e.offset + e.size; i++) params[i]! += noise[i]!;
  }
  const obs = randomF64(batch * config.inputs, 2, 7);
  const w = probeWeights(batch * config.outputs, 8);
  const probe = () => dot(w, mlpForward(config, layout, params, obs, batch).out);
  const { acts } = mlpForward(config, layout, params, obs, batch);
  const grads = mlpBackward(config, layout, params, acts, w);

  if (config.activation === 'relu') {
    it('stays away from relu kinks (finite differences are exact there)', () => {
      // A ±1e-5 step moves each z by ≲ 1e-4; no pre-activation is that close to 0.
      const nearest = Math.min(...acts.pre.flatMap((z) => Array.from(z, Math.abs)));
      expect(nearest).toBeGreaterThan(1e-3);
      // Some units are off, so the zero-gradient path is exercised too.
      expect(acts.pre.some((z) => z.some((v) => v < 0))).toBe(true);
    });
  }

  it.each(layout.entries.map((e) => [e.name]))('∂L/∂%s matches finite differences', (name) => {
    const result = gradCheck(layout.view(params, name), layout.view(grads, name), probe, {
      maxEntries: 64,
    });
    expect(result.maxRelError, JSON.stringify(result.worst)).toBeLessThan(1e-7);
  });

  it('leaves the padding between tensors at zero gradient', () => {
    const used = new Uint8Array(layout.total);
    for (const e of layout.entries) used.fill(1, e.offset, e.offset + e.size);
    for (let i = 0; i < layout.total; i++) if (!used[i]) expect(grads[i]).toBe(0);
  });
});

describe('mlp input checks', () => {
  const good: MlpConfig = {
    inputs: 4,
    hidden: [64, 64],
    outputs: 2,
    activation: 'tanh',
    outputGain: 0.01,
  };

  it.each<[string, Partial<MlpConfig>, RegExp]>([
    ['inputs 0', { inputs: 0 }, /mlp: inputs must be an integer in \[1, 1024\], got 0/],
    ['inputs 1025', { inputs: 1025 }, /inputs .*\[1, 1024\].*1025/],
    ['inputs 1.5', { inputs: 1.5 }, /inputs .*got 1.5/],
    ['no hidden layer', { hidden: [] }, /hidden must list 1 to 4 layer widths, got 0/],
    ['5 hidden layers', { hidden: [8, 8, 8, 8, 8] }, /hidden must list 1 to 4 .*got 5/],
    [
      'a zero-width layer',
      { hidden: [64, 0] },
      /hidden\[1\] must be an integer in \[1, 1024\], got 0/,
    ],
    ['a too-wide layer', { hidden: [2048] }, /hidden\[0\] .*\[1, 1024\].*2048/],
    ['outputs 0', { outputs: 0 }, /outputs must be an integer in \[1, 1024\], got 0/],
    [
      'an unknown activation',
      { activation: 'sigmoid' as 'tanh' },
      /activation must be one of 'gelu', 'tanh', 'relu', got 'sigmoid'/,
    ],
    ['outputGain 0', { outputGain: 0 }, /outputGain must be in \(0, ∞\), got 0/],
    ['outputGain NaN', { outputGain: NaN }, /outputGain must be in \(0, ∞\), got NaN/],
  ])('rejects %s with the field and range', (_, change, message) => {
    const config = { ...good, ...change };
    expect(() => mlpLayout(config)).toThrow(OpInputError);
    expect(() => mlpLayout(config)).toThrow(message);
    expect(() => initMlp(config, 1)).toThrow(message);
  });

  it('rejects bad batch, obs, params and dout lengths', () => {
    const layout = mlpLayout(good);
    const params = initMlp(good, 1);
    const obs = new Float32Array(3 * 4);
    expect(() => mlpForward(good, layout, params, obs, 0)).toThrow(
      /batch must be an integer in \[1, /,
    );
    expect(() => mlpForward(good, layout, params, obs, 2)).toThrow(
      /obs must have batch × inputs = 8 elements, got 12/,
    );
    expect(() => mlpForward(good, layout, params.subarray(1), obs, 3)).toThrow(
      /params must have layout.total/,
    );
    const { acts } = mlpForward(good, layout, params, obs, 3);
    expect(() => mlpBackward(good, layout, params, acts, new Float32Array(5))).toThrow(
      /dout must have batch × outputs = 6 elements, got 5/,
    );
  });
});
