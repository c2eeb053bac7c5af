// `npm run bench`: loads the TypeScript benchmarks through Vite (so `?raw` WGSL imports work) and
// runs them in Node on Dawn. Results print as a table and are saved under bench/results/.
import { existsSync } from 'node:fs';
import { createServer } from 'vite';
import { SWIFTSHADER_ICD } from './chromium.mjs';

if (existsSync(SWIFTSHADER_ICD)) process.env.VK_ICD_FILENAMES ??= SWIFTSHADER_ICD;

const server = await createServer({
  server: { middlewareMode: true, hmr: false },
  appType: 'custom',
  logLevel: 'warn',
});
try {
  const bench = await server.ssrLoadModule('/bench/run.ts');
  await bench.main(process.argv.slice(2));
} finally {
  await server.close();
}
