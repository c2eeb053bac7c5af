/**
 * A kernel's interface, declared once: its WGSL source, the uniform fields of its `Params` struct
 * (bound at @binding(0)) and its storage buffers in binding order (from @binding(1) on). The
 * declaration is checked against the WGSL itself when the kernel is defined, so a renamed or
 * reordered binding fails loudly instead of binding the wrong buffer.
 */
import { KernelError } from './errors';
import { isScalarType, reflectBindings, reflectStruct } from './wgsl-reflect';

export type BindingKind = 'uniform' | 'storage' | 'read-only-storage';
export type ScalarType = 'u32' | 'i32' | 'f32';

export interface StorageDecl<S extends string> {
  name: S;
  /** `read` ⇔ `var<storage, read>`; `read_write` ⇔ `var<storage, read_write>`. */
  access: 'read' | 'read_write';
}

export interface UniformDecl<U extends string> {
  name: U;
  type: ScalarType;
}

export interface KernelDeclaration<S extends string, U extends string> {
  name: string;
  source: string;
  entryPoint?: string;
  uniforms: readonly UniformDecl<U>[];
  storage: readonly StorageDecl<S>[];
}

/** Name of the uniform binding and its struct type, by convention in every kernel. */
export const PARAMS_BINDING = 'params';
export const PARAMS_STRUCT = 'Params';

export class Kernel<S extends string, U extends string> {
  readonly name: string;
  readonly source: string;
  readonly entryPoint: string;
  readonly uniforms: readonly UniformDecl<U>[];
  readonly storage: readonly StorageDecl<S>[];
  /** `override` constants the WGSL declares; pipeline constants must be among them. */
  readonly overrides: ReadonlySet<string>;
  /** Bytes of the Params struct: 4 per scalar field, rounded up to 16. */
  readonly uniformByteSize: number;

  constructor(decl: KernelDeclaration<S, U>) {
    this.name = decl.name;
    this.source = decl.source;
    this.entryPoint = decl.entryPoint ?? 'main';
    this.uniforms = decl.uniforms;
    this.storage = decl.storage;
    this.overrides = new Set([...decl.source.matchAll(/\boverride\s+(\w+)/g)].map((m) => m[1]!));
    this.uniformByteSize = Math.max(16, Math.ceil((decl.uniforms.length * 4) / 16) * 16);
    this.checkAgainstWgsl();
  }

  /** Binding kinds in binding order: params first, then the storage buffers. */
  bindingKinds(): BindingKind[] {
    return [
      'uniform',
      ...this.storage.map((s): BindingKind =>
        s.access === 'read' ? 'read-only-storage' : 'storage',
      ),
    ];
  }

  packUniforms(values: Record<U, number>): ArrayBuffer {
    const bytes = new ArrayBuffer(this.uniformByteSize);
    const view = new DataView(bytes);
    this.uniforms.forEach(({ name, type }, i) => {
      const value = values[name];
      if (!Number.isFinite(value)) {
        throw new KernelError(this.name, `uniform "${name}" must be a finite number, got ${value}`);
      }
      if (type === 'f32') view.setFloat32(i * 4, value, true);
      else if (!Number.isInteger(value) || (type === 'u32' && (value < 0 || value > 0xffffffff))) {
        throw new KernelError(this.name, `uniform "${name}" must be a ${type}, got ${value}`);
      } else if (type === 'u32') view.setUint32(i * 4, value, true);
      else view.setInt32(i * 4, value, true);
    });
    return bytes;
  }

  checkOverrides(constants: Record<string, number>): void {
    for (const key of Object.keys(constants)) {
      if (!this.overrides.has(key)) {
        const known = [...this.overrides].join(', ') || 'none';
        throw new KernelError(this.name, `unknown override constant "${key}" (declared: ${known})`);
      }
    }
  }

  private checkAgainstWgsl(): void {
    const fail = (message: string): never => {
      throw new KernelError(this.name, `declaration does not match its WGSL: ${message}`);
    };
    const reflected = reflectBindings(this.source);
    const expected = [PARAMS_BINDING, ...this.storage.map((s) => s.name)];
    const kinds = this.bindingKinds();
    if (reflected.length !== expected.length) {
      fail(`WGSL has ${reflected.length} bindings, declaration has ${expected.length}`);
    }
    reflected.forEach((b, i) => {
      if (b.group !== 0 || b.binding !== i)
        fail(
          `"${b.name}" is at @group(${b.group}) @binding(${b.binding}), expected @group(0) @binding(${i})`,
        );
      if (b.name !== expected[i])
        fail(`@binding(${i}) is "${b.name}" in WGSL, "${expected[i]}" declared`);
      if (b.kind !== kinds[i]) fail(`"${b.name}" is ${b.kind} in WGSL, ${kinds[i]} declared`);
    });
    const fields = reflectStruct(this.source, PARAMS_STRUCT);
    const declared = this.uniforms.map((u) => `${u.name}: ${u.type}`).join(', ');
    const inWgsl = fields.map(([n, t]) => `${n}: ${t}`).join(', ');
    if (declared !== inWgsl || !fields.every(([, t]) => isScalarType(t))) {
      fail(`Params is {${inWgsl}} in WGSL, {${declared}} declared (scalars only)`);
    }
  }
}

export function defineKernel<S extends string, U extends string>(
  decl: KernelDeclaration<S, U>,
): Kernel<S, U> {
  return new Kernel(decl);
}
