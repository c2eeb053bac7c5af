/**
 * The layer rule: a file under src/ imports only its own layer and the layers below it
 * (docs/architecture.md, "Layers"). Data flows down, never up:
 *
 *   ui, state → lessons → cli → compare → worker → onnx → rl → agents → envs → models
 *     → gpu (with the kernels/ folder of .wgsl files) → ops → util
 *
 * src/main.ts, the entry point, stands above them all. Besides the order, the UI (ui, state)
 * never imports src/rl directly: it talks to a worker through one typed protocol, and what it
 * needs of rl's configs reaches it through src/worker.
 *
 * Every import is resolved to the file it names before its layer is read, so relative paths of
 * any depth, `?raw` and `?url` imports, .svelte files, `export … from` and `import()` all count.
 * Bare specifiers (packages) and paths outside src/ and kernels/ are not layered.
 */
import path from 'node:path';

/** Top to bottom; the folders of one entry form one layer. */
export const LAYERS = [
  ['ui', 'state'],
  ['lessons'],
  ['cli'],
  ['compare'],
  ['worker'],
  ['onnx'],
  ['rl'],
  ['agents'],
  ['envs'],
  ['models'],
  ['gpu', 'kernels'],
  ['ops'],
  ['util'],
];

/** Layer folders that may not import a folder further down, although it lies below them. */
const FORBIDDEN = { ui: ['rl'], state: ['rl'] };

/** @type {Map<string, number>} the rank of each folder: 0 at the top. */
const RANK = new Map(LAYERS.flatMap((folders, rank) => folders.map((f) => [f, rank])));

/**
 * The layer folder of a path relative to the repository root: 'src/<folder>/…', or 'kernels'
 * for the top-level kernels/ folder, or '' for src/main.ts and the like; undefined outside.
 * @param {string} relative
 * @returns {string | undefined}
 */
export function layerOf(relative) {
  const parts = relative.split(/[\\/]/);
  if (parts[0] === 'kernels') return 'kernels';
  if (parts[0] !== 'src') return undefined;
  return parts.length > 2 && RANK.has(parts[1] ?? '') ? parts[1] : '';
}

/**
 * Why `importer` may not import `target` (both relative to the root), or undefined when it may.
 * @param {string} importer
 * @param {string} target
 * @returns {string | undefined}
 */
export function layerViolation(importer, target) {
  const from = layerOf(importer);
  const to = layerOf(target);
  if (from === undefined || from === '' || to === undefined || to === '') return undefined;
  if (from === 'kernels' || from === to) return undefined;
  const fromRank = /** @type {number} */ (RANK.get(from));
  const toRank = /** @type {number} */ (RANK.get(to));
  const name = to === 'kernels' ? 'kernels/' : `src/${to}`;
  if (toRank < fromRank) return `src/${from} may not import ${name}: it is a layer above`;
  if (/** @type {Record<string, string[]>} */ (FORBIDDEN)[from]?.includes(to)) {
    return `src/${from} may not import src/${to} directly: go through src/worker`;
  }
  return undefined;
}

/** @type {import('eslint').Rule.RuleModule} */
const layersRule = {
  meta: {
    type: 'problem',
    docs: {
      description: 'imports point down the layer order of docs/architecture.md',
      url: 'docs/architecture.md#layers',
    },
    schema: [
      {
        type: 'object',
        properties: {
          allow: {
            type: 'array',
            items: {
              type: 'object',
              properties: { from: { type: 'string' }, to: { type: 'string' } },
              required: ['from', 'to'],
              additionalProperties: false,
            },
          },
        },
        additionalProperties: false,
      },
    ],
    messages: { up: "'{{source}}': {{why}} (the layers: docs/architecture.md)." },
  },
  create(context) {
    const root = context.cwd;
    const importer = path.relative(root, context.filename);
    if (layerOf(importer) === undefined) return {};
    /** @type {{ from: string, to: string }[]} exact importer → target files, root-relative */
    const allow = context.options[0]?.allow ?? [];
    /** @param {import('estree').Node | null | undefined} source */
    const check = (source) => {
      if (!source || source.type !== 'Literal' || typeof source.value !== 'string') return;
      const specifier = source.value;
      if (!specifier.startsWith('.')) return;
      const resolved = path.resolve(path.dirname(context.filename), specifier.split('?')[0] ?? '');
      const target = path.relative(root, resolved);
      if (allow.some((a) => a.from === importer && a.to === target)) return;
      const why = layerViolation(importer, target);
      if (why) context.report({ node: source, messageId: 'up', data: { source: specifier, why } });
    };
    return {
      ImportDeclaration: (node) => check(node.source),
      ExportNamedDeclaration: (node) => check(node.source),
      ExportAllDeclaration: (node) => check(node.source),
      ImportExpression: (node) => check(node.source),
    };
  },
};

export default { rules: { layers: layersRule } };
