/** Numbers that WGSL and TypeScript share are read from the WGSL; no GPU needed. */
import { describe, expect, it } from 'vitest';
import policyLossSource from '../../kernels/policy_loss.wgsl?raw';
import forwardSource from '../../kernels/token_logprobs.wgsl?raw';
import { statusSlotsOf } from '../../src/gpu/input-status';
import { partialColumns } from '../../src/gpu/kernels/policy-loss';
import { reducedStats } from '../../src/gpu/kernels/reduced-stats';
import valueLossSource from '../../kernels/value_loss.wgsl?raw';
import gradNormLayout from '../../kernels/lib/grad_norm_layout.wgsl?raw';
import { GRAD_NORM_LAYOUT_WGSL } from '../../src/gpu/kernels/nn/grad-norm';
import { GRAD_STATS } from '../../src/ops/nn/grad-norm';
import { WHITEN_STATS } from '../../src/gpu/kernels/whiten';
import { statLayout } from '../../src/gpu/stat-record';
import { reflectConstant, reflectConstants, reflectSlots } from '../../src/gpu/wgsl-reflect';

const WGSL = `
  // const GHOST: u32 = 7u; in a comment is ignored
  override WORKGROUP_SIZE: u32 = 64u;
  const TILE: u32 = 64u;
  const MASK = 0x7f800000u;
  const SCALE: f32 = 0.5;
  const STAT_COUNT: u32 = 0u;
  const STAT_MEAN_SQ = 1u;
`;

describe('WGSL constants', () => {
  it('reads u32 consts, decimal and hex, and nothing else', () => {
    expect(Object.fromEntries(reflectConstants(WGSL))).toEqual({
      TILE: 64,
      MASK: 0x7f800000,
      STAT_COUNT: 0,
      STAT_MEAN_SQ: 1,
    });
    expect(reflectConstant(WGSL, 'TILE')).toBe(64);
    expect(() => reflectConstant(WGSL, 'GHOST')).toThrow('WGSL constant GHOST');
    expect(() => reflectConstant(WGSL, 'WORKGROUP_SIZE')).toThrow('not found');
  });

  it('reads named slots in camelCase and refuses gaps and doubles', () => {
    expect(Object.fromEntries(reflectSlots(WGSL, 'STAT_'))).toEqual({ count: 0, meanSq: 1 });
    expect(() => reflectSlots('const S_A = 0u; const S_B = 2u;', 'S_')).toThrow(
      'expected 0 … n − 1 each once, got [0, 2]',
    );
    expect(() => reflectSlots('const S_A = 0u; const S_B = 0u;', 'S_')).toThrow('got [0, 0]');
    expect(() => reflectSlots(WGSL, 'NONE_')).toThrow('got []');
  });
});

describe('statistics by name', () => {
  it("reads a buffer's values at the shader's slots", () => {
    const layout = statLayout('const S_LOSS = 1u; const S_TOKENS = 0u;', 'S_', ['loss', 'tokens']);
    expect(layout.slots).toEqual({ loss: 1, tokens: 0 });
    expect(layout.read(new Float32Array([12, 0.5, 99]))).toEqual({ loss: 0.5, tokens: 12 });
    expect(() => layout.read([1])).toThrow('2 values expected, got 1');
  });

  it('refuses a shader whose slots are not the names TypeScript expects', () => {
    expect(() =>
      statLayout('const S_LOSS = 0u; const S_KL = 1u;', 'S_', ['loss', 'tokens']),
    ).toThrow('missing [tokens], unexpected [kl]');
  });

  it('whiten stats: count, mean, M2, min, max in the order whiten_stats.wgsl writes them', () => {
    expect(WHITEN_STATS.slots).toEqual({ count: 0, mean: 1, m2: 2, lo: 3, hi: 4 });
  });
});

describe('kernel constants the wrappers read', () => {
  it("policy loss: 9 partial columns, the statistics in POLICY_LOSS_STATS' order", () => {
    expect(partialColumns(policyLossSource)).toBe(9);
    const swapped = policyLossSource
      .replace('COL_PPO_KL: u32 = 4u', 'COL_PPO_KL: u32 = 5u')
      .replace('COL_CLIP_RATIO_LOW_MEAN: u32 = 5u', 'COL_CLIP_RATIO_LOW_MEAN: u32 = 4u');
    expect(swapped).not.toBe(policyLossSource);
    expect(() => partialColumns(swapped)).toThrow('do not match');
    const counted = policyLossSource.replace('PARTIALS: u32 = 9u', 'PARTIALS: u32 = 8u');
    expect(() => partialColumns(counted)).toThrow('PARTIALS = 8');
  });

  it('value loss: the loss and the clip fraction the reduce pass writes, by name', () => {
    const stats = reducedStats('value_loss.wgsl', valueLossSource, ['clipfrac']);
    expect([stats.columns, stats.length]).toEqual([3, 2]);
    expect(stats.read(new Float32Array([0.75, 0.125]))).toEqual({ loss: 0.75, clipfrac: 0.125 });
    expect(() => reducedStats('value_loss.wgsl', valueLossSource, ['clipFraction'])).toThrow(
      'value_loss.wgsl: columns [lossSum, tokens, clipfrac] and PARTIALS = 3 do not match',
    );
  });

  it("grad norm and AdamW: 3 floats per partial, the stats' words where GRAD_STATS has them", () => {
    expect(GRAD_NORM_LAYOUT_WGSL).toBe(gradNormLayout);
    expect(reflectConstant(gradNormLayout, 'PARTIAL_FLOATS')).toBe(3);
    const names = ['gradNorm', 'clipScale', 'applied', 'step'] as const;
    const { slots } = statLayout(gradNormLayout, 'STAT_', names);
    expect(slots).toEqual({ gradNorm: 0, clipScale: 1, applied: 2, step: 3 });
    expect(names.map((name) => GRAD_STATS[name])).toEqual([0, 1, 2, 3]);
  });

  it('token log-probs: status slots in the order of the shader SLOT_ constants', () => {
    expect(statusSlotsOf(forwardSource, { targets: 't', logits: 'l' })).toEqual(['l', 't']);
    expect(() => statusSlotsOf(forwardSource, { logits: 'l' })).toThrow(
      'the kernel declares [logits, targets], the wrapper describes [logits]',
    );
  });
});
