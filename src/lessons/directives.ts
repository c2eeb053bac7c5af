/**
 * Lesson directives: one per line, `::name{key="value" other="value"}` (braces optional when
 * there are no attributes). Values are double-quoted; `\"` and `\\` escape inside them. The
 * grammar is tiny on purpose: directives are data the reader's page renders, never code.
 *
 * Which directives exist and which attributes each takes is declared once, in DIRECTIVES;
 * anything else is a LessonError naming the file and line.
 */
import { LessonError } from './errors';

export interface DirectiveSchema {
  required: readonly string[];
  optional: readonly string[];
}

export const DIRECTIVES = {
  /** A preset run with some settings locked and an optional check that marks the step done. */
  widget: { required: ['preset'], optional: ['locked', 'check', 'label'] },
  /**
   * Several presets side by side over several seeds each (`presets="a,b" seeds="1,2,3"`): every
   * preset × seed run, one chart of each preset's mean ± std over its seeds, and a table of what
   * it took each to pass its check. `metric` defaults to the presets' shared key metric, `check`
   * to each preset's own.
   */
  seeds: { required: ['presets', 'seeds'], optional: ['metric', 'check', 'label'] },
  /** Predict-then-reveal: the answer stays hidden until the reader commits to a guess. */
  predict: { required: ['question', 'answer'], optional: [] },
  /**
   * A source view: the lines of a named region of an allow-listed file (TypeScript or WGSL),
   * between its `// #region name` and `// #endregion name` markers (src/lessons/source-views.ts).
   * A region, not a line range, so that edits elsewhere in the file leave the excerpt as it is.
   */
  source: { required: ['file', 'region'], optional: ['caption'] },
  /** The PPO clipped objective against the ratio, computed by the real policy-loss op. */
  'clip-plot': { required: [], optional: [] },
  /** GAE advantages on one fixed trajectory with γ and λ sliders, computed by the real gae op. */
  'gae-plot': { required: [], optional: [] },
  /** GRPO's difficulty bias (std on/off) and length bias (loss aggregation), from the real ops. */
  'group-bias': { required: [], optional: [] },
  /** KL estimators k1/k2/k3 against the log-ratio, and their bias and spread when sampled. */
  'kl-plot': { required: [], optional: [] },
  /** One preference pair's DPO / cDPO / IPO loss and gradient weight, from the real dpoLoss op. */
  'dpo-plot': { required: [], optional: [] },
  /** A rare right answer's probability over GRPO updates for ε_high choices, from the real ops. */
  'clip-higher-plot': { required: [], optional: [] },
  /** LoRA-GRPO on the lab's own tiny chat model beside its lr 1e-9 control, in workers. */
  'lora-run': { required: [], optional: [] },
} as const satisfies Record<string, DirectiveSchema>;

export type DirectiveName = keyof typeof DIRECTIVES;

export interface Directive {
  name: DirectiveName;
  attrs: Record<string, string>;
  /** 1-based line in the lesson file. */
  line: number;
}

/** Whether a line is meant as a directive (then it must parse, or the lesson fails). */
export function isDirectiveLine(line: string): boolean {
  return /^::[A-Za-z]/.test(line.trim());
}

/**
 * Walks a lesson body line by line and says which lines are directives: a `::` line inside a
 * ``` or ~~~ code fence is code, not a directive. `firstLine` is the body's first file line;
 * an unclosed fence is a LessonError at the body's last line.
 */
export function scanBody(
  file: string,
  body: string,
  firstLine: number,
  visit: (text: string, line: number, isDirective: boolean) => void,
): void {
  const lines = body.split('\n');
  let fence: string | undefined;
  lines.forEach((text, index) => {
    const fenceMark = /^\s*(```|~~~)/.exec(text)?.[1];
    if (fenceMark && (fence === undefined || fence === fenceMark)) {
      fence = fence === undefined ? fenceMark : undefined;
    }
    visit(text, firstLine + index, fence === undefined && !fenceMark && isDirectiveLine(text));
  });
  if (fence !== undefined)
    throw new LessonError(file, firstLine + lines.length - 1, `code fence ${fence} is not closed`);
}

export function parseDirective(file: string, lineNumber: number, text: string): Directive {
  const fail = (reason: string): never => {
    throw new LessonError(file, lineNumber, reason);
  };
  const source = text.trim();
  const head = /^::([a-z][a-z-]*)/.exec(source);
  if (!head) return fail(`a directive starts with '::name', got '${source}'`);
  const name = head[1]!;
  if (name === 'kernel') {
    // The old name, whose line ranges shifted with every edit above them.
    fail(
      '\'::kernel{file lines first last}\' is now \'::source{file="…" region="…"}\': mark the lines ' +
        "in the file with '// #region name' and '// #endregion name' (src/lessons/source-views.ts)",
    );
  }
  if (!(name in DIRECTIVES)) {
    fail(`unknown directive '${name}' (known: ${Object.keys(DIRECTIVES).join(', ')})`);
  }
  const schema: DirectiveSchema = DIRECTIVES[name as DirectiveName];
  let i = head[0].length;
  const attrs: Record<string, string> = {};
  if (i < source.length) {
    if (source[i] !== '{') fail(`expected '{' after '::${name}', got '${source[i]}'`);
    i += 1;
    for (;;) {
      while (source[i] === ' ' || source[i] === '\t') i += 1;
      if (source[i] === '}') {
        i += 1;
        break;
      }
      if (i >= source.length) fail(`'::${name}{' is not closed by '}'`);
      const key = /^[a-zA-Z][a-zA-Z0-9-]*/.exec(source.slice(i))?.[0];
      if (!key) fail(`expected an attribute name at column ${i + 1}`);
      i += key!.length;
      if (source.slice(i, i + 2) !== '="')
        fail(`attribute '${key}' must be written ${key}="value"`);
      i += 2;
      let value = '';
      for (;;) {
        const ch = source[i];
        if (ch === undefined) fail(`attribute '${key}' has no closing quote`);
        if (ch === '\\') {
          const next = source[i + 1];
          if (next !== '"' && next !== '\\') fail(`only \\" and \\\\ may be escaped in '${key}'`);
          value += next;
          i += 2;
          continue;
        }
        i += 1;
        if (ch === '"') break;
        value += ch;
      }
      if (!schema.required.includes(key!) && !schema.optional.includes(key!)) {
        const known = [...schema.required, ...schema.optional].join(', ') || 'none';
        fail(`unknown attribute '${key}' of '${name}' (known: ${known})`);
      }
      if (key! in attrs) fail(`duplicate attribute '${key}' of '${name}'`);
      attrs[key!] = value;
    }
    if (i !== source.length) fail(`unexpected text after '}': '${source.slice(i)}'`);
  }
  for (const key of schema.required) {
    if (!(key in attrs)) fail(`'${name}' needs the attribute '${key}'`);
  }
  return { name: name as DirectiveName, attrs, line: lineNumber };
}
