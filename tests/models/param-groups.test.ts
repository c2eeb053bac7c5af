import { describe, expect, it } from 'vitest';
import { groupNamed, paramGroups } from '../../src/models/param-groups';
import { ParamLayout } from '../../src/models/param-layout';
import { transformerLayout, transformerParamGroups } from '../../src/models/transformer-params';

const CONFIG = {
  vocab: 20,
  context: 8,
  width: 16,
  layers: 1,
  heads: 2,
  tiedEmbeddings: true,
  valueHead: false,
};
const layout = new ParamLayout([
  { name: 'w', shape: [2, 2], decay: true, init: { kind: 'zeros' } },
]);

describe('parameter groups', () => {
  it('gives the tiny GPT one trainable f32 group over its whole layout', () => {
    const groups = transformerParamGroups(CONFIG);
    expect(groups.map((g) => [g.name, g.storage, g.trainable])).toEqual([['base', 'f32', true]]);
    expect(groups[0]!.layout.total).toBe(transformerLayout(CONFIG).total);
    expect(groupNamed(groups, 'base')).toBe(groups[0]);
    expect(() => groupNamed(groups, 'lora')).toThrow("no group 'lora' (groups: base)");
  });

  it('takes a frozen f16 base beside trainable f32 adapters', () => {
    const halves = new ParamLayout(layout.entries, 'f16');
    const groups = paramGroups([
      { name: 'base', layout: halves, storage: 'f16', trainable: false },
      { name: 'lora', layout, storage: 'f32', trainable: true },
    ]);
    expect(groups.filter((g) => g.trainable).map((g) => g.name)).toEqual(['lora']);
  });

  it('refuses repeated names, 16-bit trainable groups and nothing to train', () => {
    const base = { name: 'base', layout, storage: 'f32', trainable: true } as const;
    expect(() => paramGroups([base, base])).toThrow("groups[1].name repeats 'base'");
    expect(() => paramGroups([{ ...base, storage: 'bf16' }])).toThrow(
      "groups[0].storage must be 'f32' for a trainable group, got 'bf16'",
    );
    expect(() => paramGroups([{ ...base, trainable: false }])).toThrow('at least one trainable');
    // An f32 layout under f16 storage would put tensors at 128-byte offsets, unbindable.
    expect(() =>
      paramGroups([base, { name: 'lora', layout, storage: 'f16', trainable: false }]),
    ).toThrow(
      "groups[1].layout must be laid out for the group's 'f16' storage (new ParamLayout(specs, 'f16')), got a 'f32' layout",
    );
    expect(() => paramGroups([{ ...base, name: 'head' as never }])).toThrow(
      'must be one of base, lora',
    );
  });
});
