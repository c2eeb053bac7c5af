// Finds the flags with which the packed Chromium (CHROMIUM_PATH) gets a hardware WebGPU adapter in
// headless mode: tries each set in $CHROMIUM_FLAG_SETS ('|'-separated; defaults below), prints
// what each found (the adapter, and chrome://gpu's WebGPU status and GL renderer), writes the first
// set that works to $PROBE_FLAGS_FILE (default /tmp/chromium-flags) and exits 0; exits 1 when none
// works.
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { chromium } from 'playwright-core';
import { chromiumArgs, findChromium } from '../../scripts/chromium.mjs';

// ANGLE and WebGPU on Vulkan, no window surface (nothing to present to in headless mode).
const HEADLESS_VULKAN =
  '--use-angle=vulkan --disable-vulkan-surface --ignore-gpu-blocklist --enable-features=Vulkan,VulkanFromANGLE,DefaultANGLEVulkan';
const DEFAULT_SETS = [
  HEADLESS_VULKAN,
  `${HEADLESS_VULKAN} --use-vulkan=native`,
  `${HEADLESS_VULKAN} --use-webgpu-adapter=default --disable-gpu-sandbox --enable-dawn-features=allow_unsafe_apis`,
];
const sets = process.env.CHROMIUM_FLAG_SETS?.split('|') ?? DEFAULT_SETS;

// navigator.gpu exists only in secure contexts: an empty page from 127.0.0.1 is one.
const server = createServer((_, response) => response.end('<!doctype html><title>probe</title>'));
await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)));
const address = server.address();
const url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/`;

/** @param {string} flags */
async function probe(flags) {
  const browser = await chromium.launch({
    executablePath: findChromium(),
    args: chromiumArgs(flags.split(' ').filter(Boolean)),
    headless: true,
  });
  try {
    const page = await browser.newPage();
    // Chromium says why it gives no adapter in the console (e.g. which flag WebGPU needs).
    const messages = [];
    page.on('console', (m) => messages.push(`${m.type()}: ${m.text()}`));
    await page.goto(url);
    const found = await page.evaluate(async () => {
      if (!('gpu' in navigator)) return { error: 'no navigator.gpu' };
      const adapter = await navigator.gpu.requestAdapter({ powerPreference: 'high-performance' });
      if (!adapter) return { error: 'no adapter' };
      const i = adapter.info;
      return {
        vendor: i.vendor,
        architecture: i.architecture,
        device: i.device,
        fallback: i.isFallbackAdapter,
      };
    });
    await page.goto('chrome://gpu');
    await page.waitForTimeout(1000); // the page fills itself in after load
    // The report lives in the shadow root of <info-view>; a few of its facts are enough here.
    const report = await page.evaluate(
      () => document.querySelector('info-view')?.shadowRoot?.textContent ?? document.body.innerText,
    );
    const renderer = /GL_RENDERER\s*:(.*?)GL_VERSION/s.exec(report)?.[1]?.trim();
    const webgpu = /WebGPU:\s*([^*]*)/.exec(report)?.[1]?.trim();
    console.log(`flags: ${flags}\n  adapter: ${JSON.stringify(found)}`);
    console.log(`  chrome://gpu: WebGPU ${webgpu ?? '?'}; GL_RENDERER ${renderer ?? '?'}`);
    const hardware =
      !found.error && !found.fallback && !/swiftshader|llvmpipe/i.test(`${found.architecture}`);
    if (!hardware)
      for (const m of messages.slice(0, 5)) console.log(`  console ${m.slice(0, 300)}`);
    return hardware;
  } finally {
    await browser.close();
  }
}

let winner;
for (const flags of sets) {
  try {
    if (await probe(flags)) {
      winner = flags;
      break;
    }
  } catch (error) {
    console.log(`flags: ${flags}\n  launch failed: ${String(error).slice(0, 300)}`);
  }
}
server.close();
if (winner) writeFileSync(process.env.PROBE_FLAGS_FILE ?? '/tmp/chromium-flags', winner);
process.exitCode = winner ? 0 : 1;
