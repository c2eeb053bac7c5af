// Runs a TypeScript entry point of the project in Node, loaded through Vite so that `?raw` WGSL
// imports resolve exactly as in the app: `node scripts/run-ts.mjs src/cli/sft.ts --steps=300`.
// The entry exports `main(args: string[]): Promise<number>` (the exit code).
import { fileURLToPath } from 'node:url';
import { createServer } from 'vite';
import { useVulkanDriver } from './vulkan.mjs';

// On stderr, so a command's own output (a table, JSON) stays clean.
console.error(useVulkanDriver());

/** Refusals of bad input: their message says everything, a stack trace would only bury it. */
const INPUT_ERRORS = new Set(['FlagError', 'OpInputError', 'ImportError']);

const [entry, ...args] = process.argv.slice(2);
if (!entry) {
  console.error('usage: node scripts/run-ts.mjs <entry.ts> [args…]');
  process.exit(2);
}
const server = await createServer({
  root: fileURLToPath(new URL('..', import.meta.url)),
  server: { middlewareMode: true, hmr: false, ws: false },
  appType: 'custom',
  logLevel: 'warn',
});
let code = 1;
try {
  const module = await server.ssrLoadModule(`/${entry}`);
  code = await module.main(args);
} catch (error) {
  // One line, whatever the message holds (a path or a value with a line break in it).
  if (error instanceof Error && INPUT_ERRORS.has(error.name))
    console.error(`error: ${error.message.replace(/\s*\n\s*/g, ' ')}`);
  else console.error(error instanceof Error ? (error.stack ?? error.message) : error);
} finally {
  await server.close();
}
// Dawn holds native handles that keep the process alive; everything is written by now.
process.exit(code);
