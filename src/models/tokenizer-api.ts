/**
 * What every tokenizer offers the rest of the lab: the tiny GPT's character tokenizer
 * (src/models/tokenizer.ts) is one implementation; a Hugging Face model's tokenizer.json with its
 * chat template is another (src/models/hf/). Trainers, tasks, the worker, checkpoints and run files
 * should ask for this interface, not for a concrete tokenizer.
 */

/** What a checkpoint or run file stores to rebuild (or find again) the tokenizer. */
export type TokenizerRecord =
  | {
      kind: 'char';
      version: 1;
      /** The ordinary characters, in id order. */
      chars: string;
    }
  | {
      kind: 'hf';
      version: 1;
      /** Where the files came from: a Hub model id or the name of the folder a user picked. */
      source: string;
      /** SHA-256 (hex) of tokenizer.json: the same source with other files is a different tokenizer. */
      sha256: string;
    };

/** One turn of a conversation, as chat templates read it. */
export interface ChatMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string;
  /** An assistant's tool calls (rendered in the format the template defines). */
  toolCalls?: readonly ToolCallMessage[];
}

export interface ToolCallMessage {
  name: string;
  /** The arguments as a JSON object. */
  arguments: Record<string, unknown>;
}

/** A tool as chat templates list it (the JSON-schema function format of OpenAI and Hugging Face). */
export interface ToolDefinition {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

export interface ChatTemplateOptions {
  /** Ends the text with the opening of an assistant turn, so that generation writes the answer. */
  addGenerationPrompt: boolean;
  tools?: readonly ToolDefinition[];
  /**
   * For templates with a thinking mode (Qwen3's `enable_thinking`): false asks the model to answer
   * without a reasoning block first; absent, the template's own default. Others ignore it.
   */
  thinking?: boolean;
}

export interface Tokenizer {
  /** What checkpoints and run files store for this tokenizer. */
  readonly spec: TokenizerRecord;
  /** Ids are integers in [0, vocabSize − 1]. */
  readonly vocabSize: number;
  /** The id that pads a batch's shorter sequences (never trained on, never generated). */
  readonly pad: number;
  /** The id a sequence starts with, where the model was trained with one. */
  readonly bos: number | undefined;
  /** The id that ends a sequence. */
  readonly eos: number;
  /** Ids whose generation ends a completion (eos and, for chat models, the end-of-turn token). */
  readonly stopIds: readonly number[];
  /** Text → ids; throws naming the index of what it cannot encode. */
  encode(text: string): Int32Array;
  /** Ids → text; `skipSpecial` leaves special tokens out. Throws naming a bad id's index. */
  decode(ids: ArrayLike<number>, options?: { skipSpecial?: boolean }): string;
  /** The text of one token, for showing tokens one by one (the inspector). */
  token(id: number): string;
  /** True for special tokens (padding, begin/end markers, chat roles). */
  isSpecial(id: number): boolean;
  /**
   * The conversation as the model's chat template writes it; absent where the tokenizer has no
   * template (the tiny GPT's tasks are plain text).
   */
  applyChatTemplate?(messages: readonly ChatMessage[], options: ChatTemplateOptions): string;
}
