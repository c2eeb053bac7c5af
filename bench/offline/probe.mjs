// Exit 0 only when Dawn finds a hardware adapter; prints what it found.
import { createRequire } from 'node:module';
const require = createRequire(import.meta.url);
const dawn = require('../../node_modules/webgpu/index.js');
Object.assign(globalThis, dawn.globals);
const gpu = dawn.create([]);
const adapter = await gpu.requestAdapter({ powerPreference: 'high-performance' });
if (!adapter) {
  console.log('no adapter');
  process.exit(1);
}
const i = adapter.info;
console.log(
  JSON.stringify({
    vendor: i.vendor,
    architecture: i.architecture,
    device: i.device,
    description: i.description,
    fallback: i.isFallbackAdapter,
    features: [...adapter.features],
    maxBuffer: adapter.limits.maxStorageBufferBindingSize,
    maxWg: adapter.limits.maxComputeWorkgroupStorageSize,
  }),
);
process.exit(
  i.isFallbackAdapter || /swiftshader|llvmpipe/i.test(i.description + i.architecture) ? 1 : 0,
);
