/**
 * The Hugging Face fixtures in tests/fixtures/hf/ (written by scripts/reference/, see the README
 * there) are what the model loaders, tokenizer and forward passes are tested against, so this
 * file checks the fixtures themselves, with no lab code: every safetensors file parses by the
 * format's rules and holds exactly the tensors, shapes and dtype its config.json implies; the
 * sharded index agrees with its shards; each golden.json is internally consistent (shapes, and
 * log-probs = log-softmax of the stored logits); and the tokenizer golden ids decode back to
 * their text through tokenizer.json's own vocabulary. A regenerated or hand-edited fixture that
 * breaks any of this fails here before it misleads a parity test.
 */
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const root = new URL('../fixtures/hf/', import.meta.url);
const readJson = (path: string): unknown => JSON.parse(readFileSync(new URL(path, root), 'utf8'));

interface Config {
  model_type: 'llama' | 'qwen2' | 'qwen3';
  hidden_size: number;
  intermediate_size: number;
  num_hidden_layers: number;
  num_attention_heads: number;
  num_key_value_heads: number;
  head_dim?: number;
  vocab_size: number;
  tie_word_embeddings: boolean;
  torch_dtype: 'float32' | 'bfloat16' | 'float16';
  attention_bias?: boolean;
  mlp_bias?: boolean;
}

interface Golden {
  vocab_size: number;
  stored_dtype: string;
  weight_files: string[];
  sequences: { ids: number[]; logprobs: number[]; logits: number[][] }[];
  greedy: { prompt_ids: number[]; ids: number[]; logprobs: number[]; top2_margins: number[] };
  long_sequence: { ids: number[]; logprobs: number[]; last_logits: number[] };
  intermediates: Record<string, number[][]> & { ids: number[] };
}

interface TensorInfo {
  dtype: string;
  shape: number[];
  data_offsets: [number, number];
}

const MODELS = ['llama-tiny', 'qwen2-tiny', 'qwen3-tiny'] as const;
const DTYPE_OF: Record<Config['torch_dtype'], string> = {
  float32: 'F32',
  bfloat16: 'BF16',
  float16: 'F16',
};
const ITEM_BYTES: Record<string, number> = { F32: 4, F16: 2, BF16: 2 };

/** Tensor name -> shape ([out, in] for linear weights) as the architecture needs them. */
function expectedTensors(c: Config): Map<string, number[]> {
  const hd = c.head_dim ?? c.hidden_size / c.num_attention_heads;
  const [h, q, kv, inter] = [
    c.hidden_size,
    c.num_attention_heads * hd,
    c.num_key_value_heads * hd,
    c.intermediate_size,
  ];
  const t = new Map<string, number[]>([
    ['model.embed_tokens.weight', [c.vocab_size, h]],
    ['model.norm.weight', [h]],
  ]);
  if (!c.tie_word_embeddings) t.set('lm_head.weight', [c.vocab_size, h]);
  const qkvBias = c.model_type === 'qwen2' || c.attention_bias === true;
  for (let l = 0; l < c.num_hidden_layers; l++) {
    const p = `model.layers.${l}.`;
    t.set(`${p}input_layernorm.weight`, [h]);
    t.set(`${p}post_attention_layernorm.weight`, [h]);
    t.set(`${p}self_attn.q_proj.weight`, [q, h]);
    t.set(`${p}self_attn.k_proj.weight`, [kv, h]);
    t.set(`${p}self_attn.v_proj.weight`, [kv, h]);
    t.set(`${p}self_attn.o_proj.weight`, [h, q]);
    if (qkvBias) {
      t.set(`${p}self_attn.q_proj.bias`, [q]);
      t.set(`${p}self_attn.k_proj.bias`, [kv]);
      t.set(`${p}self_attn.v_proj.bias`, [kv]);
    }
    if (c.model_type !== 'qwen2' && c.attention_bias === true)
      t.set(`${p}self_attn.o_proj.bias`, [h]);
    if (c.model_type === 'qwen3') {
      t.set(`${p}self_attn.q_norm.weight`, [hd]);
      t.set(`${p}self_attn.k_norm.weight`, [hd]);
    }
    t.set(`${p}mlp.gate_proj.weight`, [inter, h]);
    t.set(`${p}mlp.up_proj.weight`, [inter, h]);
    t.set(`${p}mlp.down_proj.weight`, [h, inter]);
  }
  return t;
}

/** One safetensors file: 8-byte LE header length, JSON header, data (offsets from its start). */
function parseSafetensors(bytes: Buffer): {
  tensors: Map<string, TensorInfo>;
  data: Buffer;
  headerLength: number;
  meta: unknown;
} {
  const n = Number(bytes.readBigUInt64LE(0));
  const header = JSON.parse(bytes.subarray(8, 8 + n).toString('utf8')) as Record<string, unknown>;
  const meta = header.__metadata__;
  delete header.__metadata__;
  return {
    tensors: new Map(Object.entries(header as Record<string, TensorInfo>)),
    data: bytes.subarray(8 + n),
    headerLength: n,
    meta,
  };
}

/** IEEE half -> number, from its 16 bits. */
function halfToNumber(bits: number): number {
  const sign = bits & 0x8000 ? -1 : 1;
  const exp = (bits >> 10) & 0x1f;
  const frac = bits & 0x3ff;
  if (exp === 0) return sign * frac * 2 ** -24;
  if (exp === 31) return frac ? NaN : sign * Infinity;
  return sign * (1 + frac / 1024) * 2 ** (exp - 15);
}

function decodeTensor(data: Buffer, info: TensorInfo): number[] {
  const [begin, end] = info.data_offsets;
  const out: number[] = [];
  const f32 = new DataView(new ArrayBuffer(4));
  for (let o = begin; o < end; o += ITEM_BYTES[info.dtype] ?? 0) {
    if (info.dtype === 'F32') out.push(data.readFloatLE(o));
    else if (info.dtype === 'F16') out.push(halfToNumber(data.readUInt16LE(o)));
    else {
      f32.setUint32(0, data.readUInt16LE(o) << 16); // bf16 = the top half of an f32
      out.push(f32.getFloat32(0));
    }
  }
  return out;
}

function logSoftmaxAt(row: number[], i: number): number {
  const m = Math.max(...row);
  const lse = m + Math.log(row.reduce((s, v) => s + Math.exp(v - m), 0));
  return (row[i] ?? NaN) - lse;
}

describe.each(MODELS)('fixture %s', (model) => {
  const config = readJson(`${model}/config.json`) as Config;
  const golden = readJson(`${model}/golden.json`) as Golden;

  it('has the Hugging Face files, and weights whose names, shapes and dtype follow config.json', () => {
    for (const f of [
      'config.json',
      'generation_config.json',
      'tokenizer.json',
      'tokenizer_config.json',
    ]) {
      expect(existsSync(new URL(`${model}/${f}`, root)), f).toBe(true);
    }
    const want = expectedTensors(config);
    const seen = new Map<string, { file: string; info: TensorInfo; data: Buffer }>();
    let dataBytes = 0;
    for (const file of golden.weight_files) {
      const { tensors, data, headerLength, meta } = parseSafetensors(
        readFileSync(new URL(`${model}/${file}`, root)),
      );
      expect(headerLength % 8).toBe(0);
      expect(meta).toEqual({ format: 'pt' });
      let covered = 0;
      for (const [name, info] of [...tensors].sort(
        (a, b) => a[1].data_offsets[0] - b[1].data_offsets[0],
      )) {
        expect(info.dtype, name).toBe(DTYPE_OF[config.torch_dtype]);
        expect(info.data_offsets[0], `${name} starts where the previous tensor ended`).toBe(
          covered,
        );
        const count = info.shape.reduce((a, b) => a * b, 1);
        expect(info.data_offsets[1] - info.data_offsets[0], name).toBe(
          count * (ITEM_BYTES[info.dtype] ?? 0),
        );
        covered = info.data_offsets[1];
        seen.set(name, { file, info, data });
      }
      expect(covered, `${file}: tensors cover the data exactly`).toBe(data.length);
      dataBytes += covered;
    }
    expect([...seen.keys()].sort()).toEqual([...want.keys()].sort());
    for (const [name, shape] of want) expect(seen.get(name)?.info.shape, name).toEqual(shape);

    if (golden.weight_files.length > 1) {
      const index = readJson(`${model}/model.safetensors.index.json`) as {
        metadata: { total_size: number };
        weight_map: Record<string, string>;
      };
      expect(index.metadata.total_size).toBe(dataBytes);
      expect(Object.keys(index.weight_map).sort()).toEqual([...seen.keys()].sort());
      for (const [name, file] of Object.entries(index.weight_map))
        expect(seen.get(name)?.file, name).toBe(file);
    }

    // the norm weights were drawn around 1 and the matrices around 0: a wrong decode shows here
    const norm = decodeTensor(
      seen.get('model.norm.weight')!.data,
      seen.get('model.norm.weight')!.info,
    );
    const mean = norm.reduce((a, b) => a + b, 0) / norm.length;
    expect(mean).toBeGreaterThan(0.85);
    expect(mean).toBeLessThan(1.15);
    const embed = seen.get('model.embed_tokens.weight')!;
    const e = decodeTensor(embed.data, embed.info);
    const rms = Math.sqrt(e.reduce((a, b) => a + b * b, 0) / e.length);
    expect(rms).toBeGreaterThan(0.25);
    expect(rms).toBeLessThan(0.35);
  });

  it('has golden logits of shape [n, vocab] and log-probs that are their log-softmax at the next id', () => {
    expect(golden.vocab_size).toBe(config.vocab_size);
    expect(golden.sequences.map((s) => s.ids.length)).toEqual([1, 7, 24]);
    for (const { ids, logits, logprobs } of golden.sequences) {
      expect(logits.length).toBe(ids.length);
      for (const row of logits) expect(row.length).toBe(config.vocab_size);
      expect(logprobs.length).toBe(ids.length - 1);
      for (let t = 1; t < ids.length; t++) {
        // logits are stored to 9 significant digits, log-probs in full: they agree to ~1e-8
        expect(Math.abs(logSoftmaxAt(logits[t - 1]!, ids[t]!) - logprobs[t - 1]!)).toBeLessThan(
          1e-6,
        );
      }
    }
    const long = golden.long_sequence;
    expect([long.ids.length, long.logprobs.length, long.last_logits.length]).toEqual([
      100,
      99,
      config.vocab_size,
    ]);
    expect(Math.max(...long.ids)).toBeLessThan(config.vocab_size);
    expect(golden.greedy.ids).toHaveLength(8);
    for (const m of golden.greedy.top2_margins) expect(m).toBeGreaterThan(1e-6);
    for (const lp of golden.greedy.logprobs) expect(lp).toBeLessThan(0);
  });

  it('has per-layer intermediates for the 7-token sequence with the widths the shapes imply', () => {
    const hd = config.head_dim ?? config.hidden_size / config.num_attention_heads;
    const { ids, ...values } = golden.intermediates;
    expect(ids).toEqual(golden.sequences[1]!.ids);
    const widths: Record<string, number> = { final_norm: config.hidden_size };
    for (let l = 0; l < config.num_hidden_layers; l++) {
      widths[`layers.${l}.q`] = config.num_attention_heads * hd;
      widths[`layers.${l}.k`] = config.num_key_value_heads * hd;
      widths[`layers.${l}.attn`] = config.num_attention_heads * hd;
      widths[`layers.${l}.out`] = config.hidden_size;
    }
    expect(Object.keys(values).sort()).toEqual(Object.keys(widths).sort());
    for (const [key, rows] of Object.entries(values)) {
      expect(rows.length, key).toBe(ids.length);
      for (const row of rows) expect(row.length, key).toBe(widths[key]);
    }
    // final_norm rows are RMS-normalized then scaled by norm weights near 1: their RMS is near 1
    for (const row of values.final_norm!) {
      const rms = Math.sqrt(row.reduce((a, b) => a + b * b, 0) / row.length);
      expect(rms).toBeGreaterThan(0.7);
      expect(rms).toBeLessThan(1.3);
    }
  });
});

describe('tokenizer fixture', () => {
  const tokenizer = readJson('llama-tiny/tokenizer.json') as {
    added_tokens: { id: number; content: string; special: boolean }[];
    model: { type: string; vocab: Record<string, number>; merges: string[] };
  };
  const golden = readJson('tokenizer_golden.json') as {
    vocab_size: number;
    special_token_ids: Record<string, number>;
    strings: { text: string; ids: number[]; decoded: string }[];
    chats: { text: string; ids: number[] }[];
  };

  it('is the same tokenizer.json in every model folder', () => {
    const text = readFileSync(new URL('llama-tiny/tokenizer.json', root), 'utf8');
    for (const m of MODELS)
      expect(readFileSync(new URL(`${m}/tokenizer.json`, root), 'utf8')).toBe(text);
  });

  it('decodes every golden id list back to its text through tokenizer.json alone', () => {
    // GPT-2's byte <-> printable character table, from its definition
    const printable = (b: number): boolean =>
      (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
    const charToByte = new Map<string, number>();
    let extra = 0;
    for (let b = 0; b < 256; b++)
      charToByte.set(String.fromCodePoint(printable(b) ? b : 256 + extra++), b);
    const idToToken = new Map<number, string>();
    for (const [tok, id] of Object.entries(tokenizer.model.vocab)) idToToken.set(id, tok);
    for (const a of tokenizer.added_tokens) idToToken.set(a.id, a.content);
    expect(tokenizer.model.type).toBe('BPE');
    expect(idToToken.size).toBe(golden.vocab_size);
    expect(Object.keys(tokenizer.model.vocab).length).toBe(256 + tokenizer.model.merges.length);
    for (const [content, id] of Object.entries(golden.special_token_ids))
      expect(idToToken.get(id)).toBe(content);

    const decode = (ids: number[]): string => {
      const bytes: number[] = [];
      for (const id of ids)
        for (const ch of idToToken.get(id) ?? '\u{FFFF}') bytes.push(charToByte.get(ch) ?? -1);
      expect(bytes.every((b) => b >= 0)).toBe(true);
      return new TextDecoder().decode(Uint8Array.from(bytes));
    };
    for (const s of golden.strings) expect(decode(s.ids)).toBe(s.decoded);
    for (const c of golden.chats) expect(decode(c.ids)).toBe(c.text);
  });
});
