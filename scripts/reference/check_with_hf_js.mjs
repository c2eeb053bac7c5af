// Cross-checks the fixture tokenizer against the JavaScript libraries that read Hugging Face
// files: @huggingface/tokenizers must give the same ids as the Python encoder for every string
// and chat text in tokenizer_golden.json (and decode them back), and @huggingface/jinja must
// render the chat template to the same text as Python's jinja2.
//
//   node scripts/reference/check_with_hf_js.mjs tests/fixtures/hf
//
// Run it where both packages resolve (the project's node_modules once they are dependencies,
// or a scratch folder with `npm install @huggingface/tokenizers @huggingface/jinja`).
import fs from 'node:fs';

// Imported by a name held in a variable: neither package need be a dependency of this project.
const tokenizersPackage = '@huggingface/tokenizers';
const jinjaPackage = '@huggingface/jinja';
const { Tokenizer } = await import(tokenizersPackage);
const { Template } = await import(jinjaPackage);

const dir = process.argv[2] ?? 'tests/fixtures/hf';
/** @type {{
 *   strings: { text: string, ids: number[], decoded: string }[],
 *   chats: { name: string, text: string, ids: number[], messages: unknown[], tools: unknown, add_generation_prompt: boolean }[]
 * }} */
const golden = JSON.parse(fs.readFileSync(`${dir}/tokenizer_golden.json`, 'utf8'));
let bad = 0;
for (const model of ['llama-tiny', 'qwen2-tiny', 'qwen3-tiny']) {
  const tokJson = JSON.parse(fs.readFileSync(`${dir}/${model}/tokenizer.json`, 'utf8'));
  const tokConfig = JSON.parse(fs.readFileSync(`${dir}/${model}/tokenizer_config.json`, 'utf8'));
  const tok = new Tokenizer(tokJson, tokConfig);
  const cases = [
    ...golden.strings.map((s) => ({ text: s.text, ids: s.ids, decoded: s.decoded })),
    ...golden.chats.map((c) => ({ text: c.text, ids: c.ids, decoded: c.text })),
  ];
  for (const { text, ids, decoded } of cases) {
    const plain = tok.encode(text, { add_special_tokens: false }).ids;
    const dflt = tok.encode(text).ids;
    // decode([]) throws in @huggingface/tokenizers 0.2.0, so the empty string is skipped there
    const back = ids.length ? tok.decode(ids) : '';
    const same =
      JSON.stringify(plain) === JSON.stringify(ids) && JSON.stringify(dflt) === JSON.stringify(ids);
    if (!same || back !== decoded) {
      bad++;
      console.log(model, 'encode/decode differs', JSON.stringify({ text, ids, plain, dflt, back }));
    }
  }
  const template = new Template(tokConfig.chat_template);
  for (const chat of golden.chats) {
    const text = template.render({
      messages: chat.messages,
      tools: chat.tools,
      add_generation_prompt: chat.add_generation_prompt,
      bos_token: tokConfig.bos_token,
      eos_token: tokConfig.eos_token,
      pad_token: tokConfig.pad_token,
    });
    if (text !== chat.text) {
      bad++;
      console.log(
        model,
        'template differs',
        chat.name,
        JSON.stringify({ js: text, python: chat.text }),
      );
    }
  }
}
console.log(
  bad === 0 ? 'tokenizers and jinja agree with the Python reference' : `${bad} differences`,
);
process.exit(bad === 0 ? 0 : 1);
