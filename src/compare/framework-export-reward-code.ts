/**
 * The reward of a run's token task as Python: the task's verifier (src/envs/token-tasks/*.ts,
 * src/agents/tasks/*.ts), the format check and the length terms with this run's weights
 * (src/envs/token-tasks/rewards.ts). The TRL script wraps it as a reward function, verl loads it
 * as its custom reward function. DAPO's overlong term is left to the frameworks' own
 * implementations (TRL's get_soft_overlong_punishment, verl's dapo reward manager).
 *
 * Lengths: this lab's tokenizer has one token per character, so the Python counts characters of
 * the decoded completion; with a subword tokenizer that is a different length.
 */
import { pythonFloat, pythonString } from './python-literal';
import type { Settings } from './run-record';

/** Tasks whose verifier is an exact match with the reference answer. */
const EXACT = new Set(['copy', 'reverse', 'sort', 'addition', 'multiply', 'shopping', 'facts']);
/** Tasks that use tools in this lab: the exported reward scores the final answer only. */
const AGENT = new Set(['multiply', 'shopping', 'facts']);

export const REWARD_TASKS: readonly string[] = [...EXACT, 'countdown', 'wordproblem'];

const COUNTDOWN = `_COUNTDOWN_PROMPT = re.compile(r"([0-9]+(?: [0-9]+)*)>([0-9]+):")
_OPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv}


def _countdown_value(node, used):
    """Exact value of + - * / over integer literals; anything else is not an answer."""
    if isinstance(node, ast.Constant) and type(node.value) is int:
        used.append(node.value)
        return Fraction(node.value)
    if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
        left, right = _countdown_value(node.left, used), _countdown_value(node.right, used)
        if isinstance(node.op, ast.Div) and right == 0:
            raise ValueError("division by zero")
        return _OPS[type(node.op)](left, right)
    raise ValueError("not an arithmetic expression")


def verify(prompt, answer, completion):
    """1.0 when the expression uses only the given numbers (each at most as often as given) and
    equals the target exactly, else 0.0. Parsed with ast, never evaluated as code."""
    match = _COUNTDOWN_PROMPT.fullmatch(prompt.strip())
    if not match:
        return 0.0
    numbers = Counter(int(n) for n in match.group(1).split(" "))
    target = int(match.group(2))
    used = []
    try:
        value = _countdown_value(ast.parse(completion.strip(), mode="eval").body, used)
    except (SyntaxError, ValueError):
        return 0.0
    if any(count > numbers[n] for n, count in Counter(used).items()):
        return 0.0
    return 1.0 if value == target else 0.0
`;

/** The rules of lastNumber() in src/envs/token-tasks/word-problems.ts, with ASCII digits only. */
const WORD_PROBLEM = `_NUMBER = re.compile(r"(?:(?<![0-9])(-))?([0-9]{1,3}(?:,[0-9]{3})+(?![0-9])|[0-9]+)(?:\\.([0-9]+))?")


def _last_number(text):
    """The last number in the text (sign, thousands commas, a zero decimal part allowed), or None
    when there is none or it is not whole. A '.' with no digit after it ends a sentence."""
    last = None
    for last in _NUMBER.finditer(text):
        pass
    if last is None:
        return None
    sign, digits, fraction = last.groups()
    if fraction is not None and fraction.strip("0"):
        return None
    value = int(digits.replace(",", ""))
    return -value if sign else value


def verify(prompt, answer, completion):
    """1.0 when the last number written in the completion equals the answer (GSM8K's rule), else 0.0."""
    if not re.fullmatch(r"[0-9]+", answer):
        raise ValueError(f"answer must be a whole number written in digits, got {answer!r}")
    return 1.0 if _last_number(completion) == int(answer) else 0.0
`;

const EXACT_VERIFY = `def verify(prompt, answer, completion):
    """1.0 when the completion is exactly the reference answer, else 0.0."""
    return 1.0 if completion == answer else 0.0
`;

/** A Python string literal. */
function py(text: string): string {
  return pythonString(text);
}

/** Python source split so a script can put every import first. */
export interface RewardCode {
  imports: string[];
  /** Constants, verify() and lab_reward(prompt, answer, completion) → {"score", "acc"}. */
  body: string;
}

/**
 * The reward code for `task` (answer characters from the task as built for this run) and the
 * reward settings of `config`. Throws naming the task when it has no exported verifier.
 */
export function rewardCode(task: string, answerChars: string, config: Settings): RewardCode {
  if (!REWARD_TASKS.includes(task)) {
    throw new RangeError(
      `framework export: task must be one of ${REWARD_TASKS.join(', ')}, got '${task}'`,
    );
  }
  const prefix = config.verifierMatch === 'prefix';
  const imports =
    task === 'countdown'
      ? [
          'import ast',
          'import operator',
          'import re',
          'from collections import Counter',
          'from fractions import Fraction',
        ]
      : task === 'wordproblem'
        ? ['import re']
        : [];
  const lines = [
    `# The reward of the lab's '${task}' task with this run's reward settings.`,
    `ANSWER_CHARS = ${py(answerChars)}`,
    `CORRECT_WEIGHT = ${pythonFloat(Number(config.correctWeight ?? 1))}`,
    `FORMAT_WEIGHT = ${pythonFloat(Number(config.formatWeight ?? 0))}`,
    `LENGTH_PENALTY = ${pythonFloat(Number(config.lengthPenalty ?? 0))}`,
    `LENGTH_TARGET = ${Number(config.lengthTarget ?? 0)}`,
    `LENGTH_BONUS = ${pythonFloat(Number(config.lengthBonus ?? 0))}`,
    ...(AGENT.has(task)
      ? ['# This task calls tools before it answers; the reward scores the final answer only.']
      : []),
    '',
    '',
    (task === 'countdown'
      ? COUNTDOWN
      : task === 'wordproblem'
        ? WORD_PROBLEM
        : EXACT_VERIFY
    ).trimEnd(),
    '',
    '',
    'def lab_reward(prompt, answer, completion):',
    '    """The total reward and the verifier\'s 0/1 score ("acc", which verl\'s dynamic sampling reads).',
    "    Surrounding whitespace is stripped (a subword tokenizer's leading space); the format check",
    '    cannot see whether generation stopped at the end-of-sequence token, which the lab also asks."""',
    '    completion = completion.strip()',
    ...(prefix
      ? [
          "    # verifierMatch='prefix': the lab's deliberately flawed verifier reads only the first len(answer) characters.",
          '    acc = verify(prompt, answer, completion[: len(answer)])',
        ]
      : ['    acc = verify(prompt, answer, completion)']),
    '    well_formed = all(c in ANSWER_CHARS for c in completion)',
    '    length = len(completion)',
    '    score = (',
    '        CORRECT_WEIGHT * acc',
    '        + FORMAT_WEIGHT * (1.0 if well_formed else 0.0)',
    '        - LENGTH_PENALTY * max(0, length - LENGTH_TARGET)',
    '        + LENGTH_BONUS * length',
    '    )',
    '    return {"score": score, "acc": acc}',
  ];
  return { imports, body: lines.join('\n') };
}
