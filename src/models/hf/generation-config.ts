/**
 * A Hugging Face generation_config.json: the special token ids and the sampling defaults the
 * model's authors chose. Every key is optional; a present key with a bad value is refused by name.
 */
import { OpInputError } from '../../ops/errors';
import { describeValue } from '../../util/json-checks';

const FILE = 'generation_config.json';

export interface GenerationDefaults {
  bos?: number;
  /** Every id that ends a completion (eos_token_id may be one id or a list). */
  eos: number[];
  pad?: number;
  /** Sample (true) or decode greedily (false). */
  doSample?: boolean;
  temperature?: number;
  topK?: number;
  topP?: number;
  repetitionPenalty?: number;
}

const MAX_ID = (1 << 20) - 1;

function id(value: unknown, key: string): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > MAX_ID) {
    throw new OpInputError(
      FILE,
      key,
      `must be a token id in [0, ${MAX_ID}], got ${describeValue(value)}`,
    );
  }
  return value;
}

function number(value: unknown, key: string, min: number, max: number): number {
  if (typeof value !== 'number' || !(value >= min && value <= max)) {
    throw new OpInputError(
      FILE,
      key,
      `must be a number in [${min}, ${max}], got ${describeValue(value)}`,
    );
  }
  return value;
}

export function readGenerationConfig(json: unknown): GenerationDefaults {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    throw new OpInputError(FILE, '(file)', `must be a JSON object, got ${describeValue(json)}`);
  }
  const c = json as Record<string, unknown>;
  const present = (key: string) => c[key] !== undefined && c[key] !== null;
  const out: GenerationDefaults = { eos: [] };
  if (present('bos_token_id')) out.bos = id(c.bos_token_id, 'bos_token_id');
  if (present('eos_token_id')) {
    const eos = c.eos_token_id;
    if (Array.isArray(eos)) {
      if (eos.length > 64)
        throw new OpInputError(FILE, 'eos_token_id', `must list at most 64 ids, got ${eos.length}`);
      out.eos = eos.map((v, i) => id(v, `eos_token_id[${i}]`));
    } else out.eos = [id(eos, 'eos_token_id')];
  }
  if (present('pad_token_id')) out.pad = id(c.pad_token_id, 'pad_token_id');
  if (present('do_sample')) {
    if (typeof c.do_sample !== 'boolean') {
      throw new OpInputError(
        FILE,
        'do_sample',
        `must be true or false, got ${describeValue(c.do_sample)}`,
      );
    }
    out.doSample = c.do_sample;
  }
  if (present('temperature')) out.temperature = number(c.temperature, 'temperature', 0, 100);
  if (present('top_k')) {
    const k = number(c.top_k, 'top_k', 0, MAX_ID + 1);
    if (!Number.isInteger(k)) throw new OpInputError(FILE, 'top_k', `must be an integer, got ${k}`);
    out.topK = k;
  }
  if (present('top_p')) out.topP = number(c.top_p, 'top_p', 0, 1);
  if (present('repetition_penalty')) {
    out.repetitionPenalty = number(c.repetition_penalty, 'repetition_penalty', 0, 100);
  }
  return out;
}
