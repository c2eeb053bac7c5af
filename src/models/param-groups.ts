/**
 * A model's parameters as groups: each group is one flat layout (src/models/param-layout.ts) with
 * its own storage dtype, its own trainable flag, and — when trainable — its own gradient and
 * optimizer state (PyTorch's param groups, one step further: a frozen group has no gradient at
 * all). The tiny GPT is one trainable f32 group, 'base'. A brought Hugging Face model is a frozen
 * 'base' group (f16 on the GPU) plus a trainable f32 'lora' group of adapters.
 */
import { OpInputError } from '../ops/errors';
import type { StorageDtype } from './model-spec';
import type { ParamLayout } from './param-layout';

export const PARAM_GROUP_NAMES = ['base', 'lora'] as const;
export type ParamGroupName = (typeof PARAM_GROUP_NAMES)[number];

export interface ParamGroup {
  readonly name: ParamGroupName;
  /** Where each tensor of the group sits in the group's one flat array (or GPU buffer). */
  readonly layout: ParamLayout;
  /** How the group is stored on the device; the CPU path holds every group in f32. */
  readonly storage: StorageDtype;
  /** A trainable group has a gradient and optimizer state; a frozen one has neither. */
  readonly trainable: boolean;
}

/** Checks names are unique and known, and at least one group trains; returns the groups frozen. */
export function paramGroups(groups: readonly ParamGroup[]): readonly ParamGroup[] {
  const seen = new Set<string>();
  groups.forEach((group, i) => {
    if (!PARAM_GROUP_NAMES.includes(group.name)) {
      throw new OpInputError(
        'paramGroups',
        `groups[${i}].name`,
        `must be one of ${PARAM_GROUP_NAMES.join(', ')}, got ${String(group.name).slice(0, 40)}`,
      );
    }
    if (seen.has(group.name)) {
      throw new OpInputError('paramGroups', `groups[${i}].name`, `repeats '${group.name}'`);
    }
    seen.add(group.name);
    if (group.trainable && group.storage !== 'f32') {
      // AdamW's small steps vanish in a 16-bit weight; trainable groups keep f32 masters.
      throw new OpInputError(
        'paramGroups',
        `groups[${i}].storage`,
        `must be 'f32' for a trainable group, got '${group.storage}'`,
      );
    }
    if (group.layout.storage !== group.storage) {
      // A 16-bit group needs its tensors on 128-half boundaries to bind each at a 256-byte offset.
      throw new OpInputError(
        'paramGroups',
        `groups[${i}].layout`,
        `must be laid out for the group's '${group.storage}' storage (new ParamLayout(specs, '${group.storage}')), got a '${group.layout.storage}' layout`,
      );
    }
  });
  if (!groups.some((g) => g.trainable)) {
    throw new OpInputError('paramGroups', 'groups', 'must hold at least one trainable group');
  }
  return Object.freeze([...groups]);
}

/** The group named `name`; an error naming the groups there are when it is missing. */
export function groupNamed(groups: readonly ParamGroup[], name: ParamGroupName): ParamGroup {
  const group = groups.find((g) => g.name === name);
  if (!group) {
    throw new OpInputError(
      'paramGroups',
      'name',
      `no group '${name}' (groups: ${groups.map((g) => g.name).join(', ')})`,
    );
  }
  return group;
}

/** The trainable group named `name`: only those have a gradient and optimizer state. */
export function trainableGroupNamed(
  groups: readonly ParamGroup[],
  name: ParamGroupName,
): ParamGroup {
  const group = groupNamed(groups, name);
  if (!group.trainable) {
    throw new OpInputError(
      'paramGroups',
      'name',
      `group '${name}' is frozen: it has no gradient or optimizer state (trainable: ${groups
        .filter((g) => g.trainable)
        .map((g) => g.name)
        .join(', ')})`,
    );
  }
  return group;
}
