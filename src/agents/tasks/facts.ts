/**
 * Search, then answer: "how deep is lake miro?" → 37. The facts exist only in the `search` tool's
 * small local collection (the offline stand-in for a web search), so the policy must search and
 * read the number off the result:
 *
 *   how deep is lake miro? <call>search(how deep is lake miro)</call>
 *                          <result>lake miro is 37 m deep</result><answer>37</answer>
 *
 * The demonstration searches with the question itself (a policy can learn to copy it); any query
 * that finds the document works. With useTools off the model must have memorised the facts.
 */
import { checkInt } from '../../ops/validate';
import { randomInt, withDefaults } from '../../envs/token-tasks/shared';
import type { TokenTaskSample } from '../../envs/token-tasks/types';
import { DOCUMENTS } from '../data/documents';
import {
  answerText,
  callText,
  DEFAULT_AGENT_ENV_OPTIONS,
  type AgentEnvOptions,
  type AgentTask,
} from '../agent-task';

export interface FactsOptions extends AgentEnvOptions {
  /** Questions are drawn about the first `documents` documents of the collection, 1–40. Default 40. */
  documents?: number;
}

export const DEFAULT_FACTS_OPTIONS: Readonly<Required<FactsOptions>> = Object.freeze({
  ...DEFAULT_AGENT_ENV_OPTIONS,
  documents: DOCUMENTS.length,
});

export const factsDifficultyLevels: readonly Readonly<Required<FactsOptions>>[] = [5, 10, 20, 40]
  .filter((n) => n <= DOCUMENTS.length)
  .map((documents) => ({ ...DEFAULT_FACTS_OPTIONS, documents }));

/** The search query a demonstration writes: the question without its question mark. */
export function factsQuery(question: string): string {
  return question.replace(/\?$/, '');
}

export function factsTask(options: FactsOptions = {}): AgentTask {
  const full = withDefaults(DEFAULT_FACTS_OPTIONS, options);
  checkInt('factsTask', 'documents', full.documents, 1, DOCUMENTS.length);
  const docs = DOCUMENTS.slice(0, full.documents);
  const byQuestion = new Map(docs.map((d) => [d.question, d]));
  const document = (prompt: string) => {
    const found = byQuestion.get(prompt);
    if (!found) throw new Error(`facts: no document asks '${prompt}'`);
    return found;
  };
  const demonstration = (sample: TokenTaskSample): string => {
    const d = document(sample.prompt);
    const call = full.useTools ? callText('search', factsQuery(d.question), d.text) : '';
    return call + answerText(d.answer);
  };
  return {
    kind: 'agent',
    name: `facts(${full.documents} documents${full.useTools ? '' : ', no tools'})`,
    tools: full.useTools ? ['search'] : [],
    env: full,
    // Exact: the longest question plus its demonstration, in characters.
    maxChars: Math.max(
      ...docs.map(
        (d) => d.question.length + demonstration({ prompt: d.question, answer: d.answer }).length,
      ),
    ),
    answerChars: '0123456789',
    sample(random: () => number): TokenTaskSample {
      const d = docs[randomInt(random, 0, docs.length - 1)]!;
      return { prompt: d.question, answer: d.answer };
    },
    demonstration,
    verify(sample: TokenTaskSample, answer: string): number {
      return answer === sample.answer ? 1 : 0;
    },
  };
}
