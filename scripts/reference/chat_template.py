"""A ChatML chat template (Jinja) with tools and tool results, and its rendering by Python jinja2.

The conversation format follows the one Qwen2.5's template produces (the text here is our own):
  <|im_start|>system\n{system, or a default}{tool block if tools}<|im_end|>\n
  <|im_start|>user\n{content}<|im_end|>\n
  <|im_start|>assistant\n{content}<|im_end|>\n
  an assistant turn with tool_calls: content (if any) then, per call,
    \n<tool_call>\n{"name": NAME, "arguments": ARGS_JSON}\n</tool_call>
  consecutive "tool" messages are grouped into ONE user turn of
    \n<tool_response>\n{content}\n</tool_response> blocks
  add_generation_prompt appends <|im_start|>assistant\n

Rendering uses the environment Hugging Face transformers documents for chat templates: a
sandboxed jinja2 environment with trim_blocks and lstrip_blocks, loop controls, a `tojson`
filter that is json.dumps(x, ensure_ascii=False) (no HTML escaping, keys in insertion order,
separators ", " and ": "), a raise_exception global, and the special tokens passed as variables.
"""

import json

import jinja2
import jinja2.ext
from jinja2.sandbox import ImmutableSandboxedEnvironment

DEFAULT_SYSTEM = "You are a helpful assistant."

TOOLS_INTRO = (
    "\\n\\n# Tools\\n\\nYou may call one or more functions to assist with the user query.\\n\\n"
    "You are provided with function signatures within <tools></tools> XML tags:\\n<tools>"
)
TOOLS_OUTRO = (
    "\\n</tools>\\n\\nFor each function call, return a json object with function name and "
    'arguments within <tool_call></tool_call> XML tags:\\n<tool_call>\\n{"name": <function-name>, '
    '"arguments": <args-json-object>}\\n</tool_call>'
)

CHAT_TEMPLATE = (
    "{%- if messages[0].role == 'system' %}\n"
    "    {%- set system_text = messages[0].content %}\n"
    "{%- else %}\n"
    "    {%- set system_text = '" + DEFAULT_SYSTEM + "' %}\n"
    "{%- endif %}\n"
    "{{- '<|im_start|>system\\n' + system_text }}\n"
    "{%- if tools %}\n"
    "    {{- '" + TOOLS_INTRO + "' }}\n"
    "    {%- for tool in tools %}\n"
    "        {{- '\\n' + (tool | tojson) }}\n"
    "    {%- endfor %}\n"
    "    {{- '" + TOOLS_OUTRO + "' }}\n"
    "{%- endif %}\n"
    "{{- '<|im_end|>\\n' }}\n"
    "{%- for message in messages %}\n"
    "    {%- if message.role == 'system' %}\n"
    "        {%- if not loop.first %}\n"
    "            {{- raise_exception('a system message may only come first') }}\n"
    "        {%- endif %}\n"
    "    {%- elif message.role == 'user' or (message.role == 'assistant' and not message.tool_calls) %}\n"
    "        {{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>\\n' }}\n"
    "    {%- elif message.role == 'assistant' %}\n"
    "        {{- '<|im_start|>assistant' }}\n"
    "        {%- if message.content %}\n"
    "            {{- '\\n' + message.content }}\n"
    "        {%- endif %}\n"
    "        {%- for call in message.tool_calls %}\n"
    "            {%- if call.function is defined %}\n"
    "                {%- set call = call.function %}\n"
    "            {%- endif %}\n"
    "            {{- '\\n<tool_call>\\n{\"name\": \"' + call.name + '\", \"arguments\": ' }}\n"
    "            {%- if call.arguments is string %}\n"
    "                {{- call.arguments }}\n"
    "            {%- else %}\n"
    "                {{- call.arguments | tojson }}\n"
    "            {%- endif %}\n"
    "            {{- '}\\n</tool_call>' }}\n"
    "        {%- endfor %}\n"
    "        {{- '<|im_end|>\\n' }}\n"
    "    {%- elif message.role == 'tool' %}\n"
    "        {%- if loop.first or messages[loop.index0 - 1].role != 'tool' %}\n"
    "            {{- '<|im_start|>user' }}\n"
    "        {%- endif %}\n"
    "        {{- '\\n<tool_response>\\n' + message.content + '\\n</tool_response>' }}\n"
    "        {%- if loop.last or messages[loop.index0 + 1].role != 'tool' %}\n"
    "            {{- '<|im_end|>\\n' }}\n"
    "        {%- endif %}\n"
    "    {%- else %}\n"
    "        {{- raise_exception('role must be system, user, assistant or tool, got ' + message.role) }}\n"
    "    {%- endif %}\n"
    "{%- endfor %}\n"
    "{%- if add_generation_prompt %}\n"
    "    {{- '<|im_start|>assistant\\n' }}\n"
    "{%- endif %}\n"
)


def _tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


def _raise(message):
    raise jinja2.exceptions.TemplateError(message)


def render(template, messages, tools=None, add_generation_prompt=False, special_tokens=None):
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[jinja2.ext.loopcontrols])
    env.filters["tojson"] = _tojson
    env.globals["raise_exception"] = _raise
    compiled = env.from_string(template)
    return compiled.render(
        messages=messages, tools=tools, add_generation_prompt=add_generation_prompt, **(special_tokens or {})
    )
