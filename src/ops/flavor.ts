/**
 * Framework flavors. Where verl, TRL and OpenRLHF define a quantity differently, each op offers
 * every framework's behaviour; `flavor` sets all of an op's defaults at once, and each option can
 * still be set on its own (an explicit option always wins over the flavor's default). Each flavor
 * follows the framework release named in src/ops/flavor-releases.ts, which also lists the
 * definitions that changed there.
 */
export const FLAVORS = ['verl', 'trl', 'openrlhf'] as const;
export type Flavor = (typeof FLAVORS)[number];

export const DEFAULT_FLAVOR: Flavor = 'verl';

/** Options of every flavored op carry this field. */
export interface FlavorOption {
  /** Which framework's defaults to start from. Default 'verl'. */
  flavor?: Flavor;
}

/**
 * Merges an op's per-flavor defaults with explicit options. Options set to `undefined` do not
 * override a default.
 */
export function resolveFlavor<T extends object>(
  op: string,
  defaults: Record<Flavor, T>,
  options: Partial<T> & FlavorOption,
): T & { flavor: Flavor } {
  const flavor = options.flavor ?? DEFAULT_FLAVOR;
  if (!(FLAVORS as readonly string[]).includes(flavor)) {
    throw new RangeError(
      `${op}: flavor must be one of ${FLAVORS.join(', ')}, got "${String(flavor)}"`,
    );
  }
  const explicit = Object.fromEntries(
    Object.entries(options).filter(([key, value]) => key !== 'flavor' && value !== undefined),
  );
  return { ...defaults[flavor], ...explicit, flavor } as T & { flavor: Flavor };
}
