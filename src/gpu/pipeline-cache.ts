/**
 * Compute pipelines keyed by kernel and `override` constants. Shader modules are compiled once per
 * kernel; compilation errors become a KernelError carrying the compiler's messages.
 */
import { KernelError } from './errors';
import type { Kernel } from './kernel';

type AnyKernel = Kernel<string, string>;

export interface PipelineCacheStats {
  pipelines: number;
  modules: number;
  hits: number;
  misses: number;
}

export class PipelineCache {
  private readonly pipelines = new Map<string, Promise<GPUComputePipeline>>();
  private readonly modules = new Map<AnyKernel, Promise<GPUShaderModule>>();
  private readonly layouts = new Map<AnyKernel, GPUBindGroupLayout>();
  private hits = 0;
  private misses = 0;

  constructor(private readonly device: GPUDevice) {}

  /** The pipeline for `kernel` with `constants`; created on first use, cached afterwards. */
  async get(
    kernel: AnyKernel,
    constants: Record<string, number> = {},
  ): Promise<GPUComputePipeline> {
    kernel.checkOverrides(constants);
    const key = pipelineKey(kernel, constants);
    const cached = this.pipelines.get(key);
    if (cached) {
      this.hits += 1;
      return cached;
    }
    this.misses += 1;
    const created = this.create(kernel, constants);
    this.pipelines.set(key, created);
    // A failed compile must not stay cached: the next call reports the error again.
    created.catch(() => this.pipelines.delete(key));
    return created;
  }

  bindGroupLayout(kernel: AnyKernel): GPUBindGroupLayout {
    let layout = this.layouts.get(kernel);
    if (!layout) {
      layout = this.device.createBindGroupLayout({
        label: `${kernel.name} bindings`,
        entries: kernel.bindingKinds().map((type, binding) => ({
          binding,
          visibility: GPUShaderStage.COMPUTE,
          buffer: { type },
        })),
      });
      this.layouts.set(kernel, layout);
    }
    return layout;
  }

  stats(): PipelineCacheStats {
    return {
      pipelines: this.pipelines.size,
      modules: this.modules.size,
      hits: this.hits,
      misses: this.misses,
    };
  }

  private async create(
    kernel: AnyKernel,
    constants: Record<string, number>,
  ): Promise<GPUComputePipeline> {
    const module = await this.module(kernel);
    this.device.pushErrorScope('validation');
    const pipeline = this.device.createComputePipeline({
      label: pipelineKey(kernel, constants),
      layout: this.device.createPipelineLayout({
        bindGroupLayouts: [this.bindGroupLayout(kernel)],
      }),
      compute: { module, entryPoint: kernel.entryPoint, constants },
    });
    const error = await this.device.popErrorScope();
    if (error) throw new KernelError(kernel.name, `pipeline creation failed: ${error.message}`);
    return pipeline;
  }

  private module(kernel: AnyKernel): Promise<GPUShaderModule> {
    let module = this.modules.get(kernel);
    if (!module) {
      module = this.compile(kernel);
      this.modules.set(kernel, module);
      module.catch(() => this.modules.delete(kernel));
    }
    return module;
  }

  private async compile(kernel: AnyKernel): Promise<GPUShaderModule> {
    const module = this.device.createShaderModule({ label: kernel.name, code: kernel.source });
    const info = await module.getCompilationInfo();
    const errors = info.messages.filter((m) => m.type === 'error');
    if (errors.length > 0) {
      const text = errors.map((m) => `${m.lineNum}:${m.linePos} ${m.message}`).join('; ');
      throw new KernelError(kernel.name, `WGSL compilation failed: ${text}`);
    }
    return module;
  }
}

function pipelineKey(kernel: AnyKernel, constants: Record<string, number>): string {
  const sorted = Object.keys(constants)
    .sort()
    .map((k) => `${k}=${constants[k]}`)
    .join(',');
  return `${kernel.name}:${kernel.entryPoint}{${sorted}}`;
}
