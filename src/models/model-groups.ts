/**
 * The parameter groups of a model with a given spec, by family: where a checkpoint learns which
 * tensors a declared spec must come with. A family plugs in here with its own layout.
 */
import { OpInputError } from '../ops/errors';
import { toTransformerConfig, type ModelSpec } from './model-spec';
import type { ParamGroup } from './param-groups';
import { transformerParamGroups } from './transformer-params';

/** The groups a model of `spec` has; throws OpInputError naming the family when it has no layout. */
export function modelParamGroups(spec: ModelSpec): readonly ParamGroup[] {
  switch (spec.family) {
    case 'gpt':
      return transformerParamGroups(toTransformerConfig(spec));
    default:
      throw new OpInputError(
        'modelParamGroups',
        'family',
        `'${spec.family}' has no parameter layout in this build (families with one: gpt)`,
      );
  }
}
