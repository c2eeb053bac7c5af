/**
 * docs/ops.md is the index from each op to all its parts (spec, kernels, GPU wrapper, tests).
 * These tests keep it true: every file it names exists, every file of the op trees is listed once,
 * and every file in an op's row carries the op's name, so one op has one name in every tree.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const INDEX = 'docs/ops.md';

/** The trees an op's parts live in; `deep` walks subfolders (nn/, lib/) too. */
const TREES: readonly { dir: string; ext: string; deep: boolean }[] = [
  { dir: 'src/ops', ext: '.ts', deep: true },
  { dir: 'kernels', ext: '.wgsl', deep: true },
  { dir: 'src/gpu/kernels', ext: '.ts', deep: true },
  { dir: 'tests/ops', ext: '.ts', deep: true },
  // tests/gpu/models and tests/gpu/cli test models and the CLI, not ops.
  { dir: 'tests/gpu', ext: '.ts', deep: false },
  { dir: 'tests/gpu/nn', ext: '.ts', deep: true },
];

/** A row of one of the index's tables: its cells and the paths (backticked, with a '/') in each. */
interface Row {
  line: number;
  cells: string[];
  paths: string[][];
  /** 'op' for the op tables, 'file' for the table of shared parts. */
  table: string;
}

function parseIndex(text: string): Row[] {
  const rows: Row[] = [];
  let table = '';
  text.split('\n').forEach((raw, i) => {
    if (!raw.startsWith('|')) {
      table = '';
      return;
    }
    const cells = raw
      .slice(1, raw.lastIndexOf('|'))
      .split('|')
      .map((c) => c.trim());
    if (/^-+$/.test(cells[0]!)) return;
    if (table === '') {
      table = cells[0]!;
      return;
    }
    const paths = cells.map((c) => [...c.matchAll(/`([^`\s]+\/[^`\s]+\.\w+)`/g)].map((m) => m[1]!));
    rows.push({ line: i + 1, cells, paths, table });
  });
  return rows;
}

function filesOf(dir: string, ext: string, deep: boolean): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = `${dir}/${name}`;
    if (statSync(path).isDirectory()) return deep ? filesOf(path, ext, deep) : [];
    return name.endsWith(ext) ? [path] : [];
  });
}

/** A file's name without its folder and its extensions: `tests/gpu/kl.gpu.test.ts` → `kl`. */
function stem(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1).replace(/(\.gpu)?(\.test)?\.(ts|wgsl)$/, '');
}

/**
 * Why `path` does not belong to op `op` ('nn/layer-norm'), or undefined when it does: it lies in
 * the op's sub-folder of its tree, and its name is the op's name or starts with it and a part
 * (`layer-norm`, `layer-norm-…`; in WGSL `layer_norm`, `layer_norm_…`).
 */
function misnamed(op: string, path: string): string | undefined {
  const slash = op.lastIndexOf('/');
  const folder = op.slice(0, slash + 1);
  const name = op.slice(slash + 1);
  const tree = TREES.map((t) => t.dir).find((d) => path.startsWith(`${d}/${folder}`));
  if (!tree || path.slice(tree.length + 1 + folder.length).includes('/')) {
    return `${path} is not in the ${folder || 'top'} folder of an op tree`;
  }
  const words = path.endsWith('.wgsl') ? name.replaceAll('-', '_') : name;
  const sep = path.endsWith('.wgsl') ? '_' : '-';
  const s = stem(path);
  return s === words || s.startsWith(words + sep) ? undefined : `${path} is not named ${words}`;
}

describe('the op index (docs/ops.md)', () => {
  const rows = parseIndex(readFileSync(INDEX, 'utf8'));
  const listed = rows.flatMap((r) => r.paths.flat());

  it('has op rows and shared rows to check', () => {
    expect(rows.filter((r) => r.table === 'op').length).toBeGreaterThan(20);
    expect(rows.filter((r) => r.table === 'file').length).toBeGreaterThan(10);
  });

  it('names only files that exist', () => {
    expect(listed.filter((p) => !existsSync(p))).toEqual([]);
  });

  it('lists every spec, kernel, wrapper and op test exactly once', () => {
    const all = TREES.flatMap((t) => filesOf(t.dir, t.ext, t.deep));
    expect(all.length).toBeGreaterThan(100);
    expect(all.filter((f) => !listed.includes(f))).toEqual([]);
    expect(listed.filter((p, i) => listed.indexOf(p) !== i)).toEqual([]);
  });

  it("names every part in an op's row after the op, in the column of its tree", () => {
    const columns = ['src/ops/', 'kernels/', 'src/gpu/kernels/', 'tests/'];
    const problems = rows
      .filter((r) => r.table === 'op')
      .flatMap((r) => {
        const op = r.cells[0]!;
        return columns.flatMap((prefix, c) =>
          r.paths[c + 1]!.flatMap((p) => {
            if (!p.startsWith(prefix)) return [`${INDEX}:${r.line}: ${p} in the ${prefix} column`];
            const why = misnamed(op, p);
            return why ? [`${INDEX}:${r.line}: ${why}`] : [];
          }),
        );
      });
    expect(problems).toEqual([]);
  });

  it('gives every op with kernels its CPU spec and its GPU wrapper', () => {
    const missing = rows
      .filter((r) => r.table === 'op' && r.paths[2]!.length > 0)
      .filter((r) => r.paths[1]!.length === 0 || r.paths[3]!.length === 0)
      .map((r) => r.cells[0]);
    expect(missing).toEqual([]);
  });
});

describe('misnamed', () => {
  it.each([
    ['policy-loss', 'src/ops/policy-loss.ts'],
    ['policy-loss', 'kernels/policy_loss.wgsl'],
    ['token-logprobs', 'src/gpu/kernels/token-logprobs-backward.ts'],
    ['nn/matmul', 'kernels/nn/matmul_column_sums.wgsl'],
    ['nn/matmul', 'tests/gpu/nn/matmul.gpu.test.ts'],
  ])('accepts %s ↔ %s', (op, path) => {
    expect(misnamed(op, path)).toBeUndefined();
  });

  it.each([
    ['policy-loss', 'kernels/pg_loss.wgsl'],
    ['reinforce-pp', 'kernels/returns.wgsl'],
    ['broadcast', 'kernels/sum_tokens.wgsl'],
    ['nn/matmul', 'kernels/nn/column_sums.wgsl'],
    ['nn/matmul', 'src/ops/matmul.ts'],
    ['nn/add', 'kernels/nn/addition.wgsl'],
  ])('refuses %s ↔ %s', (op, path) => {
    expect(misnamed(op, path)).toBeDefined();
  });
});

describe('stem', () => {
  it('strips the folders and the test suffixes', () => {
    expect(stem('tests/gpu/kl.gpu.test.ts')).toBe('kl');
    expect(stem('tests/ops/nn/layer-norm.test.ts')).toBe('layer-norm');
    expect(stem('kernels/nn/layer_norm_backward.wgsl')).toBe('layer_norm_backward');
  });
});
