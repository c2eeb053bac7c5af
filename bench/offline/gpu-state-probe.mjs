// Does a Dawn device's speed depend on when it was created? Times kernels/copy.wgsl on a
// 512 MiB buffer (GPU time by timestamps, median of 20 dispatches) on devices created at different
// moments: the first of the process on an idle GPU, a second created while the first is busy, the
// first again once the second exists and once it is gone, and a third created after an idle pause.
// Run on a GPU machine after bench/offline/setup.sh: node bench/offline/gpu-state-probe.mjs
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';

const require = createRequire(import.meta.url);
const dawn = require('../../node_modules/webgpu/index.js');
Object.assign(globalThis, dawn.globals);
// Dawn settles promises (mapAsync) from its event loop; a timer keeps Node polling it.
setInterval(() => {}, 1);

const COPY = readFileSync(new URL('../../kernels/copy.wgsl', import.meta.url), 'utf8');
const BYTES = Number(process.env.PROBE_MIB ?? 512) * 1024 * 1024;
const instances = []; // an instance must outlive its devices

async function makeDevice() {
  const gpu = dawn.create(['disable-dawn-features=timestamp_quantization']);
  instances.push(gpu);
  const adapter = await gpu.requestAdapter({ powerPreference: 'high-performance' });
  const device = await adapter.requestDevice({
    requiredFeatures: ['timestamp-query'],
    requiredLimits: { maxStorageBufferBindingSize: BYTES, maxBufferSize: BYTES },
  });
  const usage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;
  const input = device.createBuffer({ size: BYTES, usage });
  const output = device.createBuffer({ size: BYTES, usage });
  const uniform = device.createBuffer({ size: 16, usage: GPUBufferUsage.UNIFORM | 8 });
  const count = BYTES / 16;
  device.queue.writeBuffer(uniform, 0, new Uint32Array([count, 0, 0, 0]));
  const module = device.createShaderModule({ code: COPY });
  const pipeline = await device.createComputePipelineAsync({
    layout: 'auto',
    compute: { module, entryPoint: 'main' },
  });
  const group = device.createBindGroup({
    layout: pipeline.getBindGroupLayout(0),
    entries: [uniform, input, output].map((buffer, binding) => ({ binding, resource: { buffer } })),
  });
  const query = device.createQuerySet({ type: 'timestamp', count: 2 });
  const resolved = device.createBuffer({ size: 16, usage: GPUBufferUsage.QUERY_RESOLVE | 4 });
  const read = device.createBuffer({ size: 16, usage: GPUBufferUsage.MAP_READ | 8 });
  const groups = Math.ceil(count / 256);
  async function once() {
    const enc = device.createCommandEncoder();
    const pass = enc.beginComputePass({
      timestampWrites: { querySet: query, beginningOfPassWriteIndex: 0, endOfPassWriteIndex: 1 },
    });
    pass.setPipeline(pipeline);
    pass.setBindGroup(0, group);
    pass.dispatchWorkgroups(Math.min(groups, 65535), Math.ceil(groups / 65535));
    pass.end();
    enc.resolveQuerySet(query, 0, 2, resolved, 0);
    enc.copyBufferToBuffer(resolved, 0, read, 0, 16);
    device.queue.submit([enc.finish()]);
    await read.mapAsync(GPUMapMode.READ);
    const t = new BigUint64Array(read.getMappedRange().slice(0));
    read.unmap();
    return Number(t[1] - t[0]) / 1e6;
  }
  return {
    device,
    async time() {
      const ms = [];
      for (let i = 0; i < 20; i++) ms.push(await once());
      return ms.sort((a, b) => a - b)[10].toFixed(3);
    },
    async busy(seconds) {
      const end = performance.now() + seconds * 1000;
      while (performance.now() < end) await once();
    },
  };
}

const sleep = (s) => new Promise((resolve) => setTimeout(resolve, s * 1000));
const log = (what, ms) => console.log(`${what.padEnd(46)} copy ${ms} ms`);

const a = await makeDevice();
log('A: first device, idle GPU', await a.time());
await a.busy(3);
log('A: after 3 s of copies', await a.time());
const b = await makeDevice();
log('B: created while A was busy', await b.time());
log('A: while B exists', await a.time());
b.device.destroy();
log('A: after B is destroyed', await a.time());
await sleep(5);
log('A: after 5 s idle', await a.time());
const c = await makeDevice();
log('C: created after that idle pause', await c.time());
log('A: while C exists', await a.time());
process.exit(0);
