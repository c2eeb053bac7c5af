/**
 * A tool task's verl export: the lab's tools for verl's tool agent loop. verl runs multi-turn
 * rollouts where a tool config (multi_turn.tool_config_path) names a BaseTool class and the
 * OpenAI-style schema of each tool; the chat template lists the schemas, the rollout parses the
 * model's calls (multi_turn.format, hermes: <tool_call>{JSON}</tool_call>, as Qwen2.5's and Qwen3's
 * templates write them), runs the class's execute() and feeds its text back as a tool message.
 *
 * What the files hold:
 *   lab_tools.py    the tools' Python (framework-export-tools.ts: the same results and error texts
 *                   as the lab's tools) and LabTool, the BaseTool that runs them: a call's
 *                   arguments read as the lab reads them (chatToolArgs: exactly the tool's one
 *                   parameter), a failure shown as the lab shows it ("error: <detail>"), clipped
 *                   to the lab's result length.
 *   lab_tools.yaml  one entry per tool: class lab_tools.LabTool, its schema (chatToolDefinitions).
 *                   Written as JSON, which YAML reads.
 * The launch script turns multi-turn on with the task's turn budget, one call a turn, and the tool
 * agent loop for every prompt; the reward scores the episode's last assistant message
 * (VERL_FINAL_ANSWER), as the TRL export scores its last message.
 *
 * Checked against verl's configuration at the pinned release (tests/fixtures/framework-snapshot.json)
 * and run against stand-ins for verl's BaseTool and ToolResponse (tests/compare/).
 */
import { chatToolDefinitions, CHAT_TOOL_SCHEMAS } from '../agents/chat-tools';
import type { ToolName } from '../agents/tools';
import { MAX_TOOL_RESULT_CHARS } from '../agents/tools/tool';
import type { ExportFile, ExportTools } from './framework-export-files';
import type { Line } from './framework-export-table';
import { pythonString } from './python-literal';

/** The tool config's file name, beside the launch script. */
const VERL_TOOL_CONFIG = 'lab_tools.yaml';
/** The module LabTool lives in (on PYTHONPATH: the launch script adds its own folder). */
const TOOL_MODULE = 'lab_tools';

/** The launch script's multi-turn settings for a tool task. */
export function verlToolLines(tools: ExportTools): Line[] {
  return [
    { name: 'actor_rollout_ref.rollout.multi_turn.enable', value: true },
    { name: 'actor_rollout_ref.rollout.multi_turn.tool_config_path', value: '$TOOL_CONFIG' },
    { name: 'actor_rollout_ref.rollout.multi_turn.format', value: 'hermes' },
    // The lab's turns: every assistant message, the answer's included.
    { name: 'actor_rollout_ref.rollout.multi_turn.max_assistant_turns', value: tools.turns },
    // The lab runs one call a turn.
    { name: 'actor_rollout_ref.rollout.multi_turn.max_parallel_calls', value: 1 },
    {
      name: 'actor_rollout_ref.rollout.multi_turn.max_tool_response_length',
      value: MAX_TOOL_RESULT_CHARS,
    },
    { name: 'actor_rollout_ref.rollout.agent.default_agent_loop', value: 'tool_agent' },
  ];
}

/** The launch script's lines that set up the tools: their config's path, LabTool importable. */
export function verlToolShellLines(): string[] {
  return [
    `TOOL_CONFIG="\${TOOL_CONFIG:-$PWD/${VERL_TOOL_CONFIG}}"`,
    `export PYTHONPATH="$PWD\${PYTHONPATH:+:$PYTHONPATH}"  # ${TOOL_MODULE}.py, for verl's workers`,
  ];
}

/** What the launch script notes about the tools. */
export function verlToolNotes(tools: ExportTools): string[] {
  const names = tools.names.join(', ');
  const notes = [
    `the lab's episodes call ${names} before they answer; verl runs them through its tool agent loop (${TOOL_MODULE}.py, ${VERL_TOOL_CONFIG}): the model's chat template lists them and must write calls in the hermes format, <tool_call>{"name": ..., "arguments": ...}</tool_call> (Qwen2.5, Qwen3)`,
    "maxNewTokens counts one turn's tokens in the lab; verl's data.max_response_length counts the whole multi-turn response (calls, tool results and answer): raise it to about max_assistant_turns times as much",
  ];
  if (tools.iterations < tools.turns - 1) {
    notes.push(
      `the lab answers a call past its budget of ${tools.iterations} with an error; verl has no call budget, only max_assistant_turns=${tools.turns}`,
    );
  }
  return notes;
}

/** lab_tools.py and lab_tools.yaml. */
export function verlToolFiles(tools: ExportTools, release: string): ExportFile[] {
  const names = tools.names as readonly ToolName[];
  const parameters = names.map(
    (n) => `    ${pythonString(n)}: ${pythonString(CHAT_TOOL_SCHEMAS[n].parameter)},`,
  );
  const python = [
    `# The lab's agent tools for verl ${release}'s tool agent loop (${VERL_TOOL_CONFIG} names LabTool).`,
    ...tools.python.imports,
    '',
    'from verl.tools.base_tool import BaseTool',
    'from verl.tools.schemas import ToolResponse',
    '',
    tools.python.body,
    '',
    '',
    `_TOOLS = {${names.map((n) => `${pythonString(n)}: ${n}`).join(', ')}}`,
    "# Each tool's one parameter: a call must give exactly it, as in the lab.",
    `_PARAMETERS = {\n${parameters.join('\n')}\n}`,
    '',
    '',
    'def _clip(text):',
    '    """The lab\'s clip of what a tool shows the model: its first _MAX_RESULT_CHARS UTF-16 code units."""',
    '    units = text.encode("utf-16-le", "surrogatepass")',
    '    if len(units) <= 2 * _MAX_RESULT_CHARS:',
    '        return text',
    '    return units[: 2 * _MAX_RESULT_CHARS].decode("utf-16-le", "surrogatepass")',
    '',
    '',
    'class LabTool(BaseTool):',
    '    """One of the lab\'s tools, the one its schema names. A call\'s arguments must hold exactly the',
    '    tool\'s parameter; a failed call shows the model "error: <detail>", as the lab does."""',
    '',
    '    async def execute(self, instance_id, parameters, **kwargs):',
    '        parameter = _PARAMETERS[self.name]',
    '        if not isinstance(parameters, dict) or set(parameters) != {parameter}:',
    '            text = f\'error: {self.name} takes one argument, "{parameter}"\'',
    '        else:',
    '            try:',
    '                text = _TOOLS[self.name](parameters[parameter])',
    '            except ValueError as error:',
    '                text = f"error: {error}"',
    '        return ToolResponse(text=_clip(text)), 0.0, {}',
    '',
  ];
  const config = {
    tools: chatToolDefinitions(names).map((definition) => ({
      class_name: `${TOOL_MODULE}.LabTool`,
      config: { type: 'native' },
      tool_schema: { type: 'function', function: definition },
    })),
  };
  const yaml = [
    `# verl ${release} tool config (multi_turn.tool_config_path): the lab's ${names.join(', ')}.`,
    '# Written as JSON, which YAML reads.',
    JSON.stringify(config, null, 2),
    '',
  ];
  return [
    { name: `${TOOL_MODULE}.py`, text: python.join('\n') },
    { name: VERL_TOOL_CONFIG, text: yaml.join('\n') },
  ];
}

/**
 * Python: the last assistant message of a verl multi-turn response. verl decodes the whole
 * response — the model's calls and the tool results between its turns — so the answer is what
 * follows the last tool result, less the role line the template opens the next turn with and any
 * special token left in; an episode whose last turn is a call has none.
 */
export const VERL_FINAL_ANSWER = `def _final_answer(response):
    """The text after the last </tool_response>, its role line and special tokens dropped; "" when
    the last turn is a call (the episode never answered)."""
    text = re.sub(r"<\\|[^|]*\\|>", "", response.rsplit("</tool_response>", 1)[-1]).strip()
    if text == "assistant" or text.startswith("assistant\\n"):
        text = text[len("assistant"):]
    return "" if "<tool_call>" in text else text`;
