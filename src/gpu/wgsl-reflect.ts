/**
 * Reads the resource bindings and uniform struct fields out of WGSL source, so a kernel's TypeScript
 * declaration can be checked against its shader instead of trusted. Handles the subset of WGSL the
 * project's kernels use: `@group(0) @binding(N) var<space[, access]> name : Type;` and plain structs
 * of scalars.
 */
import type { BindingKind, ScalarType } from './kernel';

export interface ReflectedBinding {
  group: number;
  binding: number;
  name: string;
  kind: BindingKind;
  /** The declared type, e.g. `array<f32>` or the uniform struct's name. */
  type: string;
}

const BINDING_RE =
  /@group\((\d+)\)\s*@binding\((\d+)\)\s*var\s*<\s*(\w+)\s*(?:,\s*(\w+)\s*)?>\s*(\w+)\s*:\s*([^;]+);/g;
const STRUCT_RE = /struct\s+(\w+)\s*\{([^}]*)\}/g;

function stripComments(source: string): string {
  return source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/[^\n]*/g, '');
}

function bindingKind(space: string, access: string | undefined, name: string): BindingKind {
  if (space === 'uniform') return 'uniform';
  if (space === 'storage') return access === 'read_write' ? 'storage' : 'read-only-storage';
  throw new Error(`binding "${name}": address space "${space}" is not supported by the runtime`);
}

export function reflectBindings(source: string): ReflectedBinding[] {
  const bindings: ReflectedBinding[] = [];
  for (const m of stripComments(source).matchAll(BINDING_RE)) {
    const [, group, binding, space, access, name, type] = m;
    if (!group || !binding || !space || !name || !type) continue;
    bindings.push({
      group: Number(group),
      binding: Number(binding),
      name,
      kind: bindingKind(space, access, name),
      type: type.trim(),
    });
  }
  return bindings.sort((a, b) => a.group - b.group || a.binding - b.binding);
}

/** Fields of a struct, in declaration order, as [name, type] pairs. */
export function reflectStruct(source: string, structName: string): [string, string][] {
  for (const m of stripComments(source).matchAll(STRUCT_RE)) {
    if (m[1] !== structName || m[2] === undefined) continue;
    return m[2]
      .split(',')
      .map((field) => field.trim())
      .filter((field) => field.length > 0)
      .map((field) => {
        const [name, type] = field.split(':').map((part) => part.trim());
        if (!name || !type) throw new Error(`struct ${structName}: cannot read field "${field}"`);
        return [name, type] as [string, string];
      });
  }
  throw new Error(`struct ${structName} not found`);
}

export function isScalarType(type: string): type is ScalarType {
  return type === 'u32' || type === 'i32' || type === 'f32';
}

// `const NAME: u32 = 9u;` or `const NAME = 9u;` at module scope (a whole number, decimal or hex).
const CONSTANT_RE = /\bconst\s+(\w+)\s*(?::\s*u32\s*)?=\s*(0x[0-9a-fA-F]+|\d+)u\s*;/g;

/** Every module-scope `const NAME: u32 = Nu;` of a shader, by name. */
export function reflectConstants(source: string): Map<string, number> {
  const constants = new Map<string, number>();
  for (const m of stripComments(source).matchAll(CONSTANT_RE)) {
    const [, name, value] = m;
    if (name && value) constants.set(name, Number(value));
  }
  return constants;
}

/**
 * The value of a shader's `const NAME: u32 = Nu;`, so that TypeScript reads a number the kernel
 * depends on (a tile size, a column count, a code) from the kernel instead of repeating it.
 */
export function reflectConstant(source: string, name: string): number {
  const value = reflectConstants(source).get(name);
  if (value === undefined) throw new Error(`WGSL constant ${name} (a u32 const) not found`);
  return value;
}

/**
 * Named slots of an output a kernel writes by position: its `const <prefix>NAME = k;` constants,
 * e.g. STAT_MEAN = 1u → { mean: 1 } (the rest of the name in camelCase). The slots must be
 * 0 … n − 1, each once, so that the record read back has no gaps and no two names for one slot.
 */
export function reflectSlots(source: string, prefix: string): Map<string, number> {
  const slots = new Map<string, number>();
  for (const [name, value] of reflectConstants(source)) {
    if (!name.startsWith(prefix)) continue;
    const camel = name
      .slice(prefix.length)
      .toLowerCase()
      .replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
    slots.set(camel, value);
  }
  const values = [...slots.values()].sort((a, b) => a - b);
  if (values.length === 0 || values.some((v, k) => v !== k)) {
    throw new Error(
      `WGSL slots ${prefix}*: expected 0 … n − 1 each once, got [${values.join(', ')}]`,
    );
  }
  return slots;
}
