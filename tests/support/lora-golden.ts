/**
 * The LoRA fixture's golden values (tests/fixtures/hf/llama-tiny-lora/golden.json, written by the
 * float64 reference scripts/reference/make_lora_fixture.py) as the CPU and GPU model tests read
 * them, and the shift of its rows into next-token inputs and targets.
 */
export interface LoraGolden {
  score: { ids: number[]; logprobs: number[]; base_logprobs: number[] }[];
  grpo: {
    ids: number[][];
    mask: number[][];
    advantages: number[];
    loss: number;
    adamw: { lr: number; betas: [number, number]; eps: number; weight_decay: number };
    updated: Record<string, number[]>;
    logprobs_after: number[][];
  };
}

/** (B, T) rows → inputs (B, T − 1) and next-token targets (B, T − 1). */
export function shifted(rows: number[][]): { tokens: Int32Array; targets: Int32Array } {
  return {
    tokens: Int32Array.from(rows.flatMap((r) => r.slice(0, -1))),
    targets: Int32Array.from(rows.flatMap((r) => r.slice(1))),
  };
}
