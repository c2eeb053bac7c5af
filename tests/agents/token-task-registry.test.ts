import { describe, expect, it } from 'vitest';
import {
  createTokenTask,
  createTokenTaskAtLevel,
  TOKEN_TASK_NAMES,
  TOKEN_TASKS,
  type TokenTaskDefinition,
} from '../../src/agents/token-task-registry';
import { CharTokenizer } from '../../src/models/tokenizer';
import { OpInputError } from '../../src/ops/errors';
import { checkConfig, configFromFlags } from '../../src/util/hyperparams';
import { seededRandom } from '../../src/util/random';

const tok = CharTokenizer.createDefault();
const any = (name: keyof typeof TOKEN_TASKS) =>
  TOKEN_TASKS[name] as TokenTaskDefinition<Record<string, unknown>>;

describe('TOKEN_TASKS', () => {
  it('lists the six single-turn and three agent tasks, each under its own name', () => {
    expect([...TOKEN_TASK_NAMES].sort()).toEqual(Object.keys(TOKEN_TASKS).sort());
    expect([...TOKEN_TASK_NAMES].sort()).toEqual(
      [
        'addition',
        'copy',
        'countdown',
        'reverse',
        'sort',
        'wordproblem',
        'multiply',
        'shopping',
        'facts',
      ].sort(),
    );
    for (const name of TOKEN_TASK_NAMES) expect(TOKEN_TASKS[name].name).toBe(name);
  });

  describe.each(TOKEN_TASK_NAMES)('%s', (name) => {
    const def = any(name);

    it('has a start made for RL, or says before Create what its defaults do', () => {
      const { start, expect: expectation } = def.recommended ?? {};
      // A task without a start says so; one whose start does not rise visibly says that too.
      expect(start !== undefined || expectation !== undefined).toBe(true);
      if (expectation !== undefined) expect(expectation).toMatch(/seeds? \d/); // measured
    });

    it('has a spec entry with a doc for exactly the option fields, and valid defaults', () => {
      expect(Object.keys(def.spec).sort()).toEqual(Object.keys(def.defaults).sort());
      for (const field of Object.values(def.spec)) expect(field.doc.length).toBeGreaterThan(5);
      expect(() => checkConfig(name, def.spec, def.defaults)).not.toThrow();
      expect(def.doc.length).toBeGreaterThan(5);
    });

    it('builds the default task, which verifies its own worked example', () => {
      const task = def.create();
      expect(task.verify(def.example, def.example.answer)).toBe(1);
      expect(task.verify(def.example, `${def.example.answer}0`)).toBe(0);
      // The example is written in the default tokenizer's alphabet and in the answer charset.
      expect(() => tok.encode(def.example.prompt + def.example.answer)).not.toThrow();
      for (const c of def.example.answer) expect(task.answerChars).toContain(c);
    });

    it('has at least 3 curriculum levels that validate, fit a 256 context and grow', () => {
      expect(def.difficultyLevels.length).toBeGreaterThanOrEqual(3);
      let previous = 0;
      def.difficultyLevels.forEach((options, level) => {
        expect(() => checkConfig(name, def.spec, options)).not.toThrow();
        const task = createTokenTaskAtLevel(name, level);
        expect(task.maxChars + 2).toBeLessThanOrEqual(256); // <bos> prompt answer <eos>
        expect(task.maxChars).toBeGreaterThanOrEqual(previous);
        previous = task.maxChars;
        // Samples encode with the default tokenizer and fit maxChars.
        const random = seededRandom(level + 1);
        for (let i = 0; i < 50; i++) {
          const s = task.sample(random);
          expect(tok.encode(s.prompt + s.answer).length).toBeLessThanOrEqual(task.maxChars);
          expect(task.verify(s, s.answer)).toBe(1);
        }
      });
      expect(() => createTokenTaskAtLevel(name, def.difficultyLevels.length)).toThrow(
        new RegExp(`level must be an integer in \\[0, ${def.difficultyLevels.length - 1}\\]`),
      );
    });

    it('gives the same samples for the same seed', () => {
      const draw = (seed: number) => {
        const task = createTokenTask(name);
        const random = seededRandom(seed);
        return Array.from({ length: 10 }, () => task.sample(random));
      };
      expect(draw(8)).toEqual(draw(8));
    });

    it('refuses unknown options and out-of-range values, naming the field', () => {
      expect(() => createTokenTask(name, { colour: 'red' })).toThrow(OpInputError);
      expect(() => createTokenTask(name, { colour: 'red' })).toThrow(
        new RegExp(`task ${name}: colour is not a setting of task ${name}`),
      );
      const [field, spec] = Object.entries(def.spec)[0]!;
      const bad = spec.kind === 'choice' ? 'nope' : spec.kind === 'boolean' ? 3 : 1e6;
      expect(() => createTokenTask(name, { [field]: bad })).toThrow(
        new RegExp(`task ${name}: ${field} must be`),
      );
    });
  });

  it('builds tasks from plain options and CLI flags', () => {
    const task = createTokenTask('countdown', { maxCount: 4, operators: '+-' });
    expect(task.name).toBe('countdown(3–4 numbers ≤ 9, target ≤ 50, +-)');
    const flags = new Map([
      ['min-digits', '3'],
      ['max-digits', '4'],
      ['reverse-answer', 'true'],
      ['unrelated', 'x'],
    ]);
    const options = configFromFlags('addition', TOKEN_TASKS.addition.spec, flags);
    expect(options).toEqual({ minDigits: 3, maxDigits: 4, reverseAnswer: true });
    expect(TOKEN_TASKS.addition.create(options).name).toBe('addition(3–4 digits, reversed)');
    expect(TOKEN_TASKS.sort.create({ alphabet: '0123456789' }).answerChars).toBe('0123456789');
  });

  it('passes cross-field checks on to the task (minLength ≤ maxLength, maxTarget ≥ maxValue, maxAnswer ≥ maxNumber)', () => {
    expect(() => createTokenTask('copy', { minLength: 9, maxLength: 4 })).toThrow(
      /copyTask: minLength must be an integer in \[1, 4\], got 9/,
    );
    expect(() => createTokenTask('countdown', { maxValue: 99, maxTarget: 50 })).toThrow(
      /countdownTask: maxTarget must be an integer in \[99, 999\], got 50/,
    );
    expect(() => createTokenTask('wordproblem', { minSteps: 3 })).toThrow(
      /wordProblemTask: minSteps must be an integer in \[1, 2\], got 3/,
    );
    expect(() => createTokenTask('wordproblem', { maxNumber: 50, maxAnswer: 40 })).toThrow(
      /wordProblemTask: maxAnswer must be an integer in \[50, 9999\], got 40/,
    );
  });

  it('names the known tasks for an unknown one', () => {
    expect(() => createTokenTask('divide')).toThrow(
      /createTokenTask: name must be one of 'copy', 'reverse', 'sort', 'addition', 'countdown', 'wordproblem', 'multiply', 'shopping', 'facts', got 'divide'/,
    );
    expect(() => createTokenTask('toString')).toThrow(OpInputError);
    expect(() => createTokenTask('__proto__')).toThrow(OpInputError);
  });
});
