// Times configurations of kernels/token_logprobs.wgsl against copy and read-only ceilings, on
// Dawn in Node: the experiment that chose the shipped configuration (reads, quads per trip,
// threads per row). Run on a GPU machine from the repository root (bench/offline/run.sh has the
// set-up): node bench/offline/token-logprobs-variants.mjs [--rows=4096] [--cols=32768,4096]
//   [--scale=8] (logits uniform in ±scale) [--devices=default,lab,no-robustness]
//   [--variants=vec4:4:256,scalar:2:128] (reads:quads:threads; all combinations when absent)
// Devices: 'default' asks for the big-buffer limits only; 'lab' as the lab's benches ask
// (src/gpu/context.ts: every optional feature the adapter has, every tracked limit at its
// maximum); 'no-robustness' is 'default' with Dawn's robustness transform off.
// Prints one line per configuration: median wall ms (submit → 16-byte readback), median GPU ms of
// one dispatch (timestamps), GPU ms per dispatch over 10 back-to-back dispatches in one pass, and
// the max error of 16 rows against a float64 reference. Writes JSON to $OUT when set.
import { createRequire } from 'node:module';
import { readFileSync, writeFileSync } from 'node:fs';

const require = createRequire(import.meta.url);
const dawn = require('../../node_modules/webgpu/index.js');
Object.assign(globalThis, dawn.globals);

const arg = (name, fallback) =>
  process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback;
const ROWS = Number(arg('rows', '4096'));
const COLS = arg('cols', '32768,4096').split(',').map(Number);
const REPS = Number(arg('reps', '25'));
const SCALE = Number(arg('scale', '8'));
const DEVICES = arg('devices', 'default,no-robustness').split(',');
const VARIANTS = arg('variants', '')
  .split(',')
  .filter(Boolean)
  .map((v) => v.split(':'));
// The lab device's request, as src/gpu/context.ts makes it from src/gpu/adapter-summary.ts (this
// script runs in plain Node on the GPU machine and cannot import TypeScript).
const OPTIONAL_FEATURES = ['timestamp-query', 'subgroups', 'shader-f16'];
const TRACKED_LIMITS = [
  'maxStorageBufferBindingSize',
  'maxBufferSize',
  'maxComputeWorkgroupStorageSize',
  'maxComputeInvocationsPerWorkgroup',
  'maxComputeWorkgroupSizeX',
  'maxComputeWorkgroupsPerDimension',
  'maxStorageBuffersPerShaderStage',
];
const lib = (f) => readFileSync(new URL(`../../kernels/${f}`, import.meta.url), 'utf8');
const KERNEL = lib('token_logprobs.wgsl');
const PRELUDE = lib('lib/input_status.wgsl') + lib('lib/workgroup_reduce.wgsl');

function tokenSource(reads, quads) {
  const body = KERNEL.replace(/const QUADS_PER_TRIP = \d+u;/, `const QUADS_PER_TRIP = ${quads}u;`);
  return PRELUDE + lib(`lib/row_reads_${reads}.wgsl`) + body;
}

const COPY = lib('copy.wgsl');
// Read-only ceiling: each thread sums `PER` vec4s (grid-stride, all loaded before use) and writes
// one float, so time ≈ bytes / read bandwidth.
const READ_SUM = (per) => `
override WORKGROUP_SIZE: u32 = 256u;
struct Params { count: u32 }
@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> input: array<vec4f>;
@group(0) @binding(2) var<storage, read_write> output: array<f32>;
@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) g: vec3u,
        @builtin(local_invocation_index) lid: u32) {
  let threads = g.x * g.y * WORKGROUP_SIZE;
  let first = (wid.x + wid.y * g.x) * WORKGROUP_SIZE + lid;
  var acc = vec4f(0.0);
  for (var i = first; i < params.count; i += ${per}u * threads) {
    var x: array<vec4f, ${per}>;
    for (var k = 0u; k < ${per}u; k++) {
      let j = min(i + k * threads, params.count - 1u);
      x[k] = input[j];
    }
    for (var k = 0u; k < ${per}u; k++) { acc += x[k]; }
  }
  output[first] = acc.x + acc.y + acc.z + acc.w;
}`;

async function makeDevice(toggles, asLab) {
  const gpu = dawn.create(toggles);
  const adapter = await gpu.requestAdapter({ powerPreference: 'high-performance' });
  const limits = asLab ? TRACKED_LIMITS : ['maxStorageBufferBindingSize', 'maxBufferSize'];
  const features = asLab ? OPTIONAL_FEATURES : ['timestamp-query'];
  const device = await adapter.requestDevice({
    requiredFeatures: features.filter((f) => adapter.features.has(f)),
    requiredLimits: Object.fromEntries(limits.map((l) => [l, adapter.limits[l]])),
  });
  device.addEventListener?.('uncapturederror', (e) => console.error('GPU error', e.error.message));
  // The instance must outlive the device: a collected instance takes Dawn down with it.
  return { gpu, device, info: adapter.info, timestamps: device.features.has('timestamp-query') };
}

function lcg(seed) {
  let s = seed >>> 0;
  return () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32) * 2 - 1;
}

function reference(logits, cols, row, target) {
  let m = -Infinity;
  for (let j = 0; j < cols; j++) m = Math.max(m, logits[row * cols + j]);
  let s = 0;
  let a = 0;
  for (let j = 0; j < cols; j++) {
    const d = logits[row * cols + j] - m;
    s += Math.exp(d);
    a += Math.exp(d) * d;
  }
  return { logp: logits[row * cols + target] - m - Math.log(s), entropy: Math.log(s) - a / s };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function run(ctx, label, source, constants, bindings, uniforms, groups, check) {
  const { device } = ctx;
  const module = device.createShaderModule({ code: source });
  const info = await module.getCompilationInfo();
  const errors = info.messages.filter((m) => m.type === 'error');
  if (errors.length) {
    console.log(`${label}: compile error ${errors[0].message}`);
    return undefined;
  }
  const pipeline = await device.createComputePipelineAsync({
    layout: 'auto',
    compute: { module, entryPoint: 'main', constants },
  });
  const uniform = device.createBuffer({ size: 16, usage: GPUBufferUsage.UNIFORM | 8 });
  device.queue.writeBuffer(uniform, 0, uniforms);
  const group = device.createBindGroup({
    layout: pipeline.getBindGroupLayout(0),
    entries: [uniform, ...bindings].map((buffer, binding) => ({ binding, resource: { buffer } })),
  });
  const out = bindings[bindings.length === 5 ? 2 : 1];
  const staging = device.createBuffer({ size: 16, usage: GPUBufferUsage.MAP_READ | 8 });
  const query = ctx.timestamps ? device.createQuerySet({ type: 'timestamp', count: 2 }) : null;
  const resolved = device.createBuffer({ size: 16, usage: GPUBufferUsage.QUERY_RESOLVE | 4 });
  const tsRead = device.createBuffer({ size: 16, usage: GPUBufferUsage.MAP_READ | 8 });

  async function once(dispatches, timed) {
    const enc = device.createCommandEncoder();
    const pass = enc.beginComputePass(
      timed && query
        ? {
            timestampWrites: {
              querySet: query,
              beginningOfPassWriteIndex: 0,
              endOfPassWriteIndex: 1,
            },
          }
        : {},
    );
    pass.setPipeline(pipeline);
    pass.setBindGroup(0, group);
    for (let i = 0; i < dispatches; i++) pass.dispatchWorkgroups(...groups);
    pass.end();
    enc.copyBufferToBuffer(out, 0, staging, 0, 16);
    if (timed && query) {
      enc.resolveQuerySet(query, 0, 2, resolved, 0);
      enc.copyBufferToBuffer(resolved, 0, tsRead, 0, 16);
    }
    const t0 = performance.now();
    device.queue.submit([enc.finish()]);
    await staging.mapAsync(GPUMapMode.READ);
    const wall = performance.now() - t0;
    staging.unmap();
    let gpuMs = NaN;
    if (timed && query) {
      await tsRead.mapAsync(GPUMapMode.READ);
      const t = new BigUint64Array(tsRead.getMappedRange().slice(0));
      tsRead.unmap();
      gpuMs = Number(t[1] - t[0]) / 1e6;
    }
    return { wall, gpuMs };
  }
  for (let i = 0; i < 5; i++) await once(1, false);
  const walls = [];
  const gpus = [];
  const bursts = [];
  for (let i = 0; i < REPS; i++) walls.push((await once(1, false)).wall);
  for (let i = 0; i < REPS; i++) gpus.push((await once(1, true)).gpuMs);
  for (let i = 0; i < 5; i++) bursts.push((await once(10, true)).gpuMs / 10);
  const error = check ? await check() : 0;
  const row = {
    label,
    wallMs: median(walls),
    gpuMs: median(gpus),
    burstGpuMs: median(bursts),
    error,
  };
  console.log(
    `${label.padEnd(44)} wall ${row.wallMs.toFixed(3)}  gpu ${row.gpuMs.toFixed(3)}  burst ${row.burstGpuMs.toFixed(3)}  err ${error.toExponential(1)}`,
  );
  return row;
}

async function readBack(device, buffer, bytes) {
  const staging = device.createBuffer({ size: bytes, usage: GPUBufferUsage.MAP_READ | 8 });
  const enc = device.createCommandEncoder();
  enc.copyBufferToBuffer(buffer, 0, staging, 0, bytes);
  device.queue.submit([enc.finish()]);
  await staging.mapAsync(GPUMapMode.READ);
  const data = new Float32Array(staging.getMappedRange().slice(0));
  staging.unmap();
  return data;
}

async function suite(ctx, cols, tag) {
  const { device } = ctx;
  const rows = ROWS;
  const n = rows * cols;
  const rand = lcg(cols);
  const logits = new Float32Array(n);
  for (let i = 0; i < n; i++) logits[i] = rand() * SCALE;
  const targets = new Int32Array(rows);
  for (let r = 0; r < rows; r++) targets[r] = (r * 7919) % cols;
  const S = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;
  const input = device.createBuffer({ size: n * 4, usage: S });
  device.queue.writeBuffer(input, 0, logits);
  const out = device.createBuffer({ size: n * 4, usage: S });
  const tBuf = device.createBuffer({ size: rows * 4, usage: S });
  device.queue.writeBuffer(tBuf, 0, targets);
  const logp = device.createBuffer({ size: rows * 4, usage: S });
  const ent = device.createBuffer({ size: rows * 4, usage: S });
  const status = device.createBuffer({ size: 256, usage: S });
  const gb = n * 4 * 1e-9;
  const results = [];
  const grid = (count) => (count > 65535 ? [65535, Math.ceil(count / 65535)] : [count, 1]);
  const checkRows = [0, 1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144, 233, 377, 610, rows - 1].filter(
    (r) => r < rows,
  );
  const refs = checkRows.map((r) => reference(logits, cols, r, targets[r]));
  const check = async () => {
    const lp = await readBack(device, logp, rows * 4);
    const en = await readBack(device, ent, rows * 4);
    let e = 0;
    checkRows.forEach((r, i) => {
      e = Math.max(e, Math.abs(lp[r] - refs[i].logp), Math.abs(en[r] - refs[i].entropy));
    });
    return e;
  };
  const uni = new ArrayBuffer(16);
  new Uint32Array(uni, 0, 2).set([rows, cols]);
  new Float32Array(uni, 8, 1)[0] = 1;
  for (const wg of [128, 256]) {
    const count = n / 4;
    results.push(
      await run(
        ctx,
        `${tag} copy wg${wg}`,
        COPY,
        { WORKGROUP_SIZE: wg },
        [input, out],
        new Uint32Array([count, 0, 0, 0]),
        grid(Math.ceil(count / wg)),
      ),
    );
  }
  for (const per of [4, 8]) {
    const count = n / 4;
    const threads = 132 * 2048 * 2;
    results.push(
      await run(
        ctx,
        `${tag} read-sum x${per}`,
        READ_SUM(per),
        {},
        [input, out],
        new Uint32Array([count, 0, 0, 0]),
        grid(threads / 256),
      ),
    );
  }
  const old = process.env.OLD_KERNEL;
  if (old) {
    const src = PRELUDE + readFileSync(old, 'utf8');
    results.push(
      await run(
        ctx,
        `${tag} shipped-before wg256`,
        src,
        { WORKGROUP_SIZE: 256 },
        [input, tBuf, logp, ent, status],
        uni,
        grid(rows),
        check,
      ),
    );
  }
  for (const reads of cols % 4 === 0 ? ['scalar', 'vec4'] : ['scalar']) {
    for (const quads of [1, 2, 4, 8]) {
      for (const wg of [128, 256]) {
        if (4 * quads * wg > cols * 2) continue;
        const wanted = VARIANTS.some(([r, q, w]) => r === reads && +q === quads && +w === wg);
        if (VARIANTS.length > 0 && !wanted) continue;
        results.push(
          await run(
            ctx,
            `${tag} ${reads} q${quads} wg${wg}`,
            tokenSource(reads, quads),
            { WORKGROUP_SIZE: wg },
            [input, tBuf, logp, ent, status],
            uni,
            grid(rows),
            check,
          ),
        );
      }
    }
  }
  for (const r of results)
    if (r) r.gbPerS = ((r.label.includes('copy') ? 2 : 1) * gb) / (r.gpuMs / 1000);
  for (const b of [input, out, tBuf, logp, ent, status]) b.destroy();
  return results.filter(Boolean);
}

// Dawn settles promises (mapAsync) from its event loop; a timer keeps Node polling it.
setInterval(() => {}, 1);
const all = {};
const UNQUANTIZED = 'disable-dawn-features=timestamp_quantization';
const configs = {
  default: [[UNQUANTIZED], false],
  lab: [[UNQUANTIZED], true],
  'no-robustness': [[UNQUANTIZED, 'enable-dawn-features=disable_robustness'], false],
};
for (const name of DEVICES) {
  const [toggles, asLab] = configs[name] ?? [];
  if (!toggles) throw new Error(`--devices: "${name}" is not one of ${Object.keys(configs)}`);
  let ctx;
  try {
    ctx = await makeDevice(toggles, asLab);
  } catch (error) {
    console.log(`${name}: no device (${error})`);
    continue;
  }
  console.log(`== ${name}: ${ctx.info.vendor} ${ctx.info.architecture} ${ctx.info.description}`);
  all[name] = [];
  for (const cols of name === 'default' ? COLS : COLS.slice(0, 1)) {
    all[name].push(...(await suite(ctx, cols, `${ROWS}x${cols}`)));
  }
  ctx.device.destroy();
}
if (process.env.OUT)
  writeFileSync(`${process.env.OUT}/variants.json`, JSON.stringify(all, null, 1));
process.exit(0);
