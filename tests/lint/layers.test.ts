/**
 * The layer rule (scripts/eslint-layers.mjs), run as `eslint .` runs it: the repository's own
 * config on small in-memory files placed inside src/.
 */
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';
import { layerViolation } from '../../scripts/eslint-layers.mjs';

const eslint = new ESLint();

/** The layer rule's messages for `code` as if it were the file `file`. */
async function layerErrors(file: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: file });
  return result!.messages.filter((m) => m.ruleId === 'local/layers').map((m) => m.message);
}

// The first lint loads the whole ESLint config (TypeScript and Svelte parsers): about 5 s on a
// busy 2-core machine, at Vitest's default limit.
describe('the layer rule', { timeout: 30_000 }, () => {
  it('refuses an import that points up the layer order', async () => {
    const errors = await layerErrors('src/models/x.ts', "export { y } from '../rl/y';\n");
    expect(errors).toEqual([
      "'../rl/y': src/models may not import src/rl: it is a layer above (the layers: docs/architecture.md).",
    ]);
  });

  it('passes an import that points down, and one within the layer', async () => {
    const code = "import { y } from '../ops/y';\nimport { z } from './z';\nexport { y, z };\n";
    expect(await layerErrors('src/models/x.ts', code)).toEqual([]);
  });

  it('resolves relative paths of any depth, ?raw, .svelte and import()', async () => {
    const code = [
      "import a from '../../../rl/a.ts?raw';",
      "import B from '../../../ui/B.svelte';",
      "export const c = () => import('../../../agents/c');",
      'export { a, B };',
      '',
    ].join('\n');
    expect(await layerErrors('src/envs/token-tasks/deep/x.ts', code)).toHaveLength(3);
  });

  it('keeps the UI off src/rl, although rl lies below it', () => {
    expect(layerViolation('src/ui/lab/Form.svelte', 'src/rl/grpo')).toMatch(/go through/);
    expect(layerViolation('src/ui/lab/Form.svelte', 'src/worker/run-protocol')).toBeUndefined();
  });

  it('counts the kernels/ folder as the gpu layer', () => {
    expect(layerViolation('src/gpu/kernels/gae.ts', 'kernels/gae.wgsl')).toBeUndefined();
    expect(layerViolation('src/ops/gae.ts', 'kernels/gae.wgsl')).toMatch(/layer above/);
  });
});
