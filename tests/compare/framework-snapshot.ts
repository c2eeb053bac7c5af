/**
 * Checks exported files against tests/fixtures/framework-snapshot.json: TRL's config classes and
 * verl's trainer config at the pinned releases, extracted from their sources by
 * scripts/framework-snapshot/extract.py. The checks read the files as a user gets them (the
 * script text, the command line), not the tables that made them.
 */
import { readFileSync } from 'node:fs';

interface TrlField {
  type: string;
  default: unknown;
  choices?: string[];
}
interface VerlKey {
  /** From the YAML default (which writes some floats as integers). */
  type: string;
  /** The config dataclass's annotation, where the section names its class. */
  annotation?: string;
  default?: unknown;
  read: boolean;
  choices?: string[];
}
export interface Snapshot {
  trl: {
    release: string;
    commit: string;
    modules: Record<string, string[]>;
    classes: Record<string, { module: string; fields: Record<string, TrlField> }>;
  };
  verl: {
    release: string;
    commit: string;
    keys: Record<string, VerlKey>;
    added_keys: Record<string, VerlKey>;
  };
}

export const snapshot = JSON.parse(
  readFileSync(new URL('../fixtures/framework-snapshot.json', import.meta.url), 'utf8'),
) as Snapshot;

type PyValue = null | boolean | number | string | PyValue[];

/** A Python literal as the exports write them (None, True, 1.0, "text", [1.0, 2.0]). */
export function parsePython(text: string): PyValue {
  const t = text.trim();
  if (t === 'None') return null;
  if (t === 'True' || t === 'False') return t === 'True';
  if (/^-?\d+(\.\d+)?(e-?\d+)?$/i.test(t)) return Number(t);
  if (t.startsWith('"')) return JSON.parse(t) as string;
  if (t.startsWith('[') && t.endsWith(']')) {
    const inner = t.slice(1, -1).trim();
    return inner ? inner.split(',').map(parsePython) : [];
  }
  throw new Error(`not a Python literal the exports write: ${text}`);
}

export interface TrlScript {
  /** `from <module> import <cls>, <trainer>` */
  imports: { module: string; names: string[] }[];
  cls: string;
  kwargs: Map<string, string>;
}

/** The imports and the `config = Class(...)` block of an exported TRL script. */
export function parseTrlScript(text: string): TrlScript {
  const imports = [...text.matchAll(/^from ([\w.]+) import (.+)$/gm)].map((m) => ({
    module: m[1]!,
    names: m[2]!.split(',').map((n) => n.trim()),
  }));
  const block = /^config = (\w+)\(\n((?: {4}.*\n)*)\)$/m.exec(text);
  if (!block) throw new Error('no "config = Class(...)" block');
  const kwargs = new Map<string, string>();
  for (const line of block[2]!.split('\n').filter(Boolean)) {
    const m = /^ {4}(\w+)=(.*),$/.exec(line);
    if (!m) throw new Error(`not a keyword argument line: ${line}`);
    if (kwargs.has(m[1]!)) throw new Error(`${m[1]} is set twice`);
    kwargs.set(m[1]!, m[2]!);
  }
  return { imports, cls: block[1]!, kwargs };
}

function pythonTypeOk(value: PyValue, type: string): boolean {
  if (value === null) return /\bNone\b/.test(type);
  if (typeof value === 'boolean') return /\bbool\b/.test(type);
  if (typeof value === 'number') {
    return Number.isInteger(value) ? /\b(int|float)\b/.test(type) : /\bfloat\b/.test(type);
  }
  if (typeof value === 'string') return /\bstr\b|Literal/.test(type);
  return /\b(list|tuple)\b/.test(type);
}

/** Problems of a TRL script against the snapshot (empty when every import and argument is valid). */
export function trlProblems(text: string): string[] {
  const script = parseTrlScript(text);
  const problems: string[] = [];
  for (const { module, names } of script.imports) {
    const exported = snapshot.trl.modules[module];
    if (!exported) continue; // not TRL (datasets, transformers)
    for (const name of names) {
      if (!exported.includes(name)) problems.push(`${module} does not export ${name}`);
    }
  }
  const cls = snapshot.trl.classes[script.cls];
  if (!cls) return [...problems, `no TRL config class ${script.cls}`];
  if (!script.imports.some((i) => i.module === cls.module && i.names.includes(script.cls))) {
    problems.push(`${script.cls} is not imported from ${cls.module}`);
  }
  for (const [name, text] of script.kwargs) {
    const field = cls.fields[name];
    if (!field) {
      problems.push(`${script.cls} has no field ${name}`);
      continue;
    }
    const value = parsePython(text);
    if (!pythonTypeOk(value, field.type)) {
      problems.push(`${script.cls}.${name}: ${text} is not a ${field.type}`);
    }
    // A str given for list[str] is wrapped in a list by the config's __post_init__.
    if (field.choices && typeof value === 'string' && !field.choices.includes(value)) {
      problems.push(`${script.cls}.${name}: "${value}" is not one of ${field.choices.join(', ')}`);
    }
  }
  return problems;
}

export interface VerlOverride {
  added: boolean;
  key: string;
  /** The value with its shell quotes removed. */
  value: string;
}

/** The `key=value` arguments of the exported verl command. */
export function parseVerlCommand(text: string): VerlOverride[] {
  const start = text.indexOf('python3 -m verl.trainer.main_ppo');
  if (start < 0) throw new Error('no verl command');
  const lines = text.slice(start).split(' \\\n').slice(1);
  return lines.map((raw) => {
    const m = /^ {4}(\+?)([\w.]+)=(.*?)\n?$/.exec(raw.split('\n')[0]!);
    if (!m) throw new Error(`not an override: ${raw}`);
    const value = m[3]!.replace(/^"(.*)"$/, '$1').replace(/^'(.*)'$/, '$1');
    return { added: m[1] === '+', key: m[2]!, value };
  });
}

/** The default a launch script gives a shell placeholder (VAR="${VAR:-default}"). */
export function shellDefault(text: string, variable: string): string | undefined {
  return new RegExp(`^${variable}="\\$\\{${variable}:-([^}]*)\\}"`, 'm').exec(text)?.[1];
}

/** The YAML-default kind a dataclass annotation stands for (the annotation wins when there is one). */
function annotationKind(annotation: string | undefined, yamlType: string): string {
  if (!annotation) return yamlType;
  if (/\b(list|List|tuple|dict|Any)\b/.test(annotation)) return 'any';
  if (/\bfloat\b/.test(annotation)) return 'float';
  if (/\bint\b/.test(annotation)) return 'int';
  if (/\bbool\b/.test(annotation)) return 'bool';
  if (/\bstr\b/.test(annotation)) return 'str';
  return 'any';
}

function verlTypeOk(value: string, entry: VerlKey): boolean {
  const type = annotationKind(entry.annotation, entry.type);
  if (value === 'null')
    return /Optional|None/.test(entry.annotation ?? '') || entry.type === 'null';
  if (value.startsWith('$'))
    return type === 'str' || type === 'null' || type === 'any' || type === 'interpolation';
  switch (type) {
    case 'bool':
      return value === 'True' || value === 'False';
    case 'int':
      return /^-?\d+$/.test(value);
    case 'float':
      return /^-?\d+(\.\d+)?(e-?\d+)?$/i.test(value);
    case 'list':
      return value.startsWith('[') && value.endsWith(']');
    case 'str':
      return !/^(True|False|null)$/.test(value);
    default: // null or an interpolation: any value
      return true;
  }
}

/** Problems of a verl launch script against the snapshot (empty when every key and value is valid). */
export function verlProblems(text: string): string[] {
  const overrides = parseVerlCommand(text);
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const { added, key, value } of overrides) {
    if (seen.has(key)) problems.push(`${key} is set twice`);
    seen.add(key);
    const declared = snapshot.verl.keys[key];
    const extra = snapshot.verl.added_keys[key];
    if (!declared && !extra) {
      problems.push(`verl has no key ${key}`);
      continue;
    }
    if (declared && added) problems.push(`${key} is declared: '+${key}' would fail`);
    if (!declared && !added)
      problems.push(`${key} is not declared: it needs '+' (Hydra struct mode)`);
    const entry = (declared ?? extra)!;
    if (!entry.read) problems.push(`${key} is declared but nothing in verl reads it`);
    if (!verlTypeOk(value, entry)) {
      problems.push(`${key}=${value} is not a ${entry.annotation ?? entry.type}`);
    }
    const choice = value.startsWith('$') ? shellDefault(text, value.slice(1)) : value;
    if (entry.choices && choice !== undefined && !entry.choices.includes(choice)) {
      problems.push(`${key}=${choice} is not one of ${entry.choices.join(', ')}`);
    }
  }
  const rewardModel = overrides.some(
    (o) => o.key === 'reward.reward_model.enable' && o.value === 'True',
  );
  for (const [key, entry] of Object.entries(snapshot.verl.keys)) {
    // '???' is OmegaConf's "must be set"; the reward model's engine only matters with one.
    const needed = rewardModel || !key.startsWith('reward.reward_model.');
    if (entry.default === '???' && !seen.has(key) && needed) {
      problems.push(`${key} is required and not set`);
    }
  }
  return problems;
}
