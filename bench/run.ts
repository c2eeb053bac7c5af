/**
 * Entry point of `npm run bench` (loaded by scripts/bench.mjs). Runs every benchmark on one device
 * in one process, prints tables with ratios and saves JSON under bench/results/.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { describeAdapter } from '../src/gpu/adapter-summary';
import { acquireGpu } from '../src/gpu/context';
import { benchLogSoftmax, type LogSoftmaxResult } from './log-softmax.bench';
import { formatTable } from './stats';

/** [rows, cols, reps]. N=512, V=32768 is the main shape on software adapters; 4096×32768 runs once. */
const LOG_SOFTMAX_SHAPES: [number, number, number][] = [
  [4096, 64, 7],
  [4096, 4096, 5],
  [512, 32768, 5],
  [4096, 32768, 1],
];

export async function main(args: string[]): Promise<void> {
  const quick = args.includes('--quick');
  const acquired = await acquireGpu({ limits: 'adapter' });
  if (!acquired.ok) {
    throw new Error(`npm run bench needs a WebGPU adapter: ${acquired.reason.message}`);
  }
  const gpu = acquired.gpu;
  const adapter = describeAdapter(gpu.summary);
  console.log(`Device: ${adapter} (${gpu.summary.runtime})`);
  if (gpu.summary.isFallbackAdapter || gpu.summary.architecture === 'swiftshader') {
    console.log('Software adapter: these numbers rank kernels; they are not GPU numbers.');
  }

  const shapes = quick ? LOG_SOFTMAX_SHAPES.slice(0, 2) : LOG_SOFTMAX_SHAPES;
  const results: LogSoftmaxResult[] = [];
  for (const [rows, cols, reps] of shapes) {
    results.push(await benchLogSoftmax(gpu, rows, cols, reps));
  }

  console.log(
    '\nlog_softmax: WGSL kernel vs CPU reference (median ms; GB/s = 2·N·V·4 bytes / time)',
  );
  console.log(
    formatTable(
      [
        'N',
        'V',
        'kernel ms',
        'kernel GB/s',
        'CPU ms',
        'CPU GB/s',
        'kernel/CPU speed',
        'max |err|',
        'threads/row',
        'timing',
      ],
      results.map((r) => [
        String(r.rows),
        String(r.cols),
        r.gpuMs.toFixed(3),
        r.gpuGBs.toFixed(2),
        r.cpuMs.toFixed(1),
        r.cpuGBs.toFixed(2),
        `${r.speedup.toFixed(1)}×`,
        r.maxAbsError.toExponential(1),
        String(r.workgroupSize),
        `${r.timing}, ${r.reps} rep${r.reps > 1 ? 's' : ''}`,
      ]),
    ),
  );

  mkdirSync('bench/results', { recursive: true });
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const file = `bench/results/${stamp}-${gpu.summary.runtime}.json`;
  const record = { date: new Date().toISOString(), adapter: gpu.summary, logSoftmax: results };
  writeFileSync(file, `${JSON.stringify(record, null, 2)}\n`);
  console.log(`\nSaved ${file}`);
  gpu.destroy();
}
