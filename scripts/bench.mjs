// `npm run bench`: our kernels against tfjs-backend-webgpu and onnxruntime-web, in two
// environments in one run: Node (Dawn, in a child process of its own) and headless Chromium
// (a page served by a Vite dev server on 127.0.0.1, driven through Playwright). The TypeScript
// benchmarks load through Vite so that `?raw` WGSL imports work. Then the lab page's frame times
// (suite ui-frames, bench/ui/frames.ts) on the app's production bundle, as `npm start` serves it
// (built into node_modules/.cache/bench-app and served by `vite preview`): the dev server's
// Svelte runs its development checks, which cost the page more than its own work. Tables print at the end and one
// JSON file per run is saved under bench/results/ (bench/README.md). The lesson times (suite
// lesson-times, bench/ui/lesson-times.ts) run only when named: the full set takes long.
//
//   npm run bench [-- --quick] [--node-only | --browser-only] [--no-ui]
//                 [--suites=token-logprobs,log-softmax]
//                 [--suites=ui-frames [--ui-backend=webgpu] [--ui-profile=four-runs.cpuprofile]
//                                     [--ui-scenarios=idle,four-runs,100k,switch]]
//                 [--suites=lesson-times [--lessons=03-ppo,04-grpo/01] [--backends=cpu,webgpu]
//                                        [--widget-timeout=180]]
import { spawn } from 'node:child_process';
import { createReadStream, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { build, createServer, preview } from 'vite';
import { useVulkanDriver } from './vulkan.mjs';

// SwiftShader only where the machine has no Vulkan driver of its own; the line says which.
console.log(useVulkanDriver());

const root = fileURLToPath(new URL('..', import.meta.url));
const args = process.argv.slice(2);
/** @param {string} name */
const flag = (name) => args.includes(`--${name}`);
/** @param {string} name */
const value = (name) => args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);

/** The UI frame bench's suite name (bench/ui/frame-stats.ts UI_SUITE). */
const UI_SUITE = 'ui-frames';
/** The lesson-times suite's name (bench/ui/lesson-report.ts LESSON_SUITE); never run by default. */
const LESSON_SUITE = 'lesson-times';
const requested = (value('suites') ?? '').split(',').filter(Boolean);
const kernelSuites = requested.filter((name) => name !== UI_SUITE && name !== LESSON_SUITE);
// No --suites: everything. Otherwise the kernel suites named, and the UI bench if it is named.
const runKernels = requested.length === 0 || kernelSuites.length > 0;
const runUi =
  !flag('node-only') && !flag('no-ui') && (requested.length === 0 || requested.includes(UI_SUITE));
const runLessons = !flag('node-only') && requested.includes(LESSON_SUITE);

const uiBackend = value('ui-backend') ?? 'cpu';
if (uiBackend !== 'cpu' && uiBackend !== 'webgpu') {
  throw new Error(`--ui-backend: "${uiBackend}" is not one of cpu, webgpu`);
}
const options = {
  quick: flag('quick'),
  suites: kernelSuites,
  uiBackend,
  uiProfile: value('ui-profile'),
  uiScenarios: value('ui-scenarios')?.split(',').filter(Boolean),
};

/** @param {string} prefix */
const logger = (prefix) => (/** @type {string} */ line) => console.log(`[${prefix}] ${line}`);

const childOut = value('child-node');
if (childOut) await childNode(childOut);
else await main();

/**
 * The Node environment, run in this (child) process; writes its result to `out`.
 * @param {string} out
 */
async function childNode(out) {
  const server = await createServer({
    root,
    server: { middlewareMode: true, hmr: false },
    appType: 'custom',
    logLevel: 'warn',
  });
  try {
    const bench = await server.ssrLoadModule('/bench/run.ts');
    writeFileSync(out, JSON.stringify(await bench.runNode(options, logger('node'))));
  } finally {
    await server.close();
  }
  // Dawn, tfjs and ORT hold native handles that keep the process alive; the result is written.
  process.exit(0);
}

async function main() {
  const results = [];
  /** @type {{ env: string, reason: string }[]} */
  const failures = [];
  if (!flag('browser-only') && runKernels) {
    const out = `${root}bench/results/${Date.now()}-node.tmp.json`;
    try {
      const code = await runChild([`--child-node=${out}`, ...args]);
      if (code !== 0) throw new Error(`the Node bench process ended with ${code}`);
      results.push(JSON.parse(readFileSync(out, 'utf8')));
    } catch (error) {
      failures.push({ env: 'node-dawn', reason: String(error) });
      console.error(`[node] ${error}`);
    } finally {
      rmSync(out, { force: true });
    }
  }

  const server = await createServer({
    root,
    logLevel: 'warn',
    appType: 'mpa',
    clearScreen: false,
    server: {
      host: '127.0.0.1',
      port: 5199,
      strictPort: false,
      hmr: false,
      // Cross-origin isolation lets ORT's wasm CPU EP use threads (SharedArrayBuffer).
      headers: {
        'Cross-Origin-Opener-Policy': 'same-origin',
        'Cross-Origin-Embedder-Policy': 'require-corp',
      },
    },
    optimizeDeps: {
      include: [
        '@tensorflow/tfjs-core',
        '@tensorflow/tfjs-backend-webgpu',
        'onnxruntime-web/webgpu',
      ],
    },
    plugins: [serveOrtDist()],
  });
  try {
    if (!flag('node-only')) {
      await server.listen();
      const address = server.httpServer?.address();
      const port = typeof address === 'object' && address ? address.port : 5199;
      if (runKernels) {
        try {
          const driver = await server.ssrLoadModule('/bench/env/drive-chromium.ts');
          const url = `http://127.0.0.1:${port}/bench/env/browser.html`;
          results.push(await driver.runChromium(url, options, logger('chromium')));
        } catch (error) {
          failures.push({ env: 'chromium', reason: String(error) });
          console.error(`[chromium] ${error}`);
        }
      }
      const app =
        runUi || runLessons ? await serveProductionApp() : { url: '', close: async () => {} };
      if (runUi) {
        try {
          const ui = await server.ssrLoadModule('/bench/ui/frames.ts');
          results.push(await ui.runUiFrames(app.url, options, logger('ui')));
        } catch (error) {
          failures.push({ env: 'chromium-ui', reason: String(error) });
          console.error(`[ui] ${error}`);
        }
      }
      if (runLessons) {
        try {
          const lessons = await server.ssrLoadModule('/bench/ui/lesson-times.ts');
          const flags = {
            quick: options.quick,
            lessons: value('lessons'),
            backends: value('backends'),
            widgetTimeout: value('widget-timeout'),
          };
          results.push(await lessons.runLessonTimes(app.url, flags, logger('lessons')));
        } catch (error) {
          failures.push({ env: 'chromium-lessons', reason: String(error) });
          console.error(`[lessons] ${error}`);
        }
      }
      await app.close();
    }
    const bench = await server.ssrLoadModule('/bench/run.ts');
    bench.finish(results, { args, options: { ...options, suites: requested }, failures });
  } finally {
    await server.close();
  }
  if (results.length === 0 || failures.length > 0) process.exitCode = 1;
}

/**
 * The app's production bundle, built and served as `npm start` serves it (same config, same
 * headers), on a free port of 127.0.0.1.
 * @returns {Promise<{ url: string, close: () => Promise<void> }>}
 */
async function serveProductionApp() {
  const outDir = `${root}node_modules/.cache/bench-app`;
  const started = performance.now();
  // With --ui-profile the bundle keeps its names (no minification), so the profile reads.
  const minify = value('ui-profile') ? false : undefined;
  // The dev server this script starts first sets NODE_ENV to 'development', and a build in the
  // same process then resolves Svelte's development code (esm-env's DEV: stack captures on every
  // state write, 7% of the page's time with four runs). `npm start` builds with 'production'.
  const nodeEnv = process.env.NODE_ENV;
  process.env.NODE_ENV = 'production';
  try {
    await build({ root, logLevel: 'warn', build: { outDir, emptyOutDir: true, minify } });
  } finally {
    if (nodeEnv === undefined) delete process.env.NODE_ENV;
    else process.env.NODE_ENV = nodeEnv;
  }
  const server = await preview({
    root,
    logLevel: 'warn',
    build: { outDir },
    preview: { host: '127.0.0.1', port: 5198, strictPort: false },
  });
  const url = server.resolvedUrls?.local[0]?.replace(/\/$/, '') ?? 'http://127.0.0.1:5198';
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  console.log(`[app] production bundle built and served at ${url} in ${seconds} s`);
  return { url, close: () => server.close() };
}

/**
 * Runs this script again as a child process (Dawn gets a process of its own).
 * @param {string[]} childArgs
 * @returns {Promise<number | string | null>} exit code, or the signal that ended it
 */
function runChild(childArgs) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [fileURLToPath(import.meta.url), ...childArgs], {
      stdio: 'inherit',
      env: process.env,
    });
    child.on('error', reject);
    child.on('exit', (code, signal) => resolve(signal ?? code));
  });
}

/**
 * Serves onnxruntime-web's dist/ files untouched at /ort-dist/: ORT imports its wasm glue (.mjs)
 * and fetches the .wasm from there at run time, and its thread workers load the same .mjs.
 * @returns {import('vite').Plugin}
 */
function serveOrtDist() {
  const dist = `${root}node_modules/onnxruntime-web/dist/`;
  /** @type {Record<string, string>} */
  const types = { '.mjs': 'text/javascript', '.wasm': 'application/wasm' };
  return {
    name: 'bench-ort-dist',
    configureServer(server) {
      server.middlewares.use('/ort-dist/', (req, res, next) => {
        const name = (req.url ?? '').split('?')[0]?.replace(/^\//, '') ?? '';
        const ext = Object.keys(types).find((e) => name.endsWith(e));
        if (!ext || name.includes('/') || !existsSync(dist + name)) {
          next();
          return;
        }
        res.setHeader('Content-Type', types[ext] ?? 'application/octet-stream');
        res.setHeader('Cross-Origin-Resource-Policy', 'same-origin');
        res.setHeader('Cross-Origin-Embedder-Policy', 'require-corp');
        createReadStream(dist + name).pipe(res);
      });
    },
  };
}
