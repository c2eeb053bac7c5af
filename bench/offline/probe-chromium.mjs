// Exit 0 only when the packed Chromium (CHROMIUM_PATH, flags from scripts/chromium.mjs with
// $CHROMIUM_EXTRA_ARGS) finds a hardware WebGPU adapter; prints what it found and chrome://gpu's
// feature status lines.
import { createServer } from 'node:http';
import { chromium } from 'playwright-core';
import { CHROMIUM_ARGS, findChromium } from '../../scripts/chromium.mjs';

// navigator.gpu exists only in secure contexts: an empty page from 127.0.0.1 is one.
const server = createServer((_, response) => response.end('<!doctype html><title>probe</title>'));
await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)));
const address = server.address();
const url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/`;
const browser = await chromium.launch({
  executablePath: findChromium(),
  args: CHROMIUM_ARGS,
  headless: true,
});
try {
  const page = await browser.newPage();
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
      description: i.description,
      fallback: i.isFallbackAdapter,
    };
  });
  console.log(JSON.stringify(found));
  await page.goto('chrome://gpu');
  await page.waitForTimeout(1000); // the page fills itself in after load
  // The report lives in the shadow root of <info-view>; two of its facts are enough here.
  const report = await page.evaluate(
    () => document.querySelector('info-view')?.shadowRoot?.textContent ?? document.body.innerText,
  );
  const renderer = /GL_RENDERER\s*:(.*?)GL_VERSION/s.exec(report)?.[1]?.trim();
  const webgpu = /WebGPU:\s*([^*]*)/.exec(report)?.[1]?.trim();
  console.log(`chrome://gpu: WebGPU ${webgpu ?? '?'}; GL_RENDERER ${renderer ?? '?'}`);
  const hardware =
    !found.error &&
    !found.fallback &&
    !/swiftshader|llvmpipe/i.test(`${found.description} ${found.architecture}`);
  process.exitCode = hardware ? 0 : 1;
} finally {
  await browser.close();
  server.close();
}
