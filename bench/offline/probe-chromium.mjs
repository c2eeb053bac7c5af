// Exit 0 only when the packed Chromium (CHROMIUM_PATH, flags from scripts/chromium.mjs with
// $CHROMIUM_EXTRA_ARGS) finds a hardware WebGPU adapter; prints what it found and chrome://gpu's
// feature status lines.
import { chromium } from 'playwright-core';
import { CHROMIUM_ARGS, findChromium } from '../../scripts/chromium.mjs';

const browser = await chromium.launch({
  executablePath: findChromium(),
  args: CHROMIUM_ARGS,
  headless: true,
});
try {
  const page = await browser.newPage();
  await page.goto('about:blank');
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
  const status = await page.evaluate(() => document.body.innerText.split('\n').slice(0, 40));
  console.log(
    status
      .filter((line) => /WebGPU|Vulkan|GL_RENDERER|Compositing|Rasterization/.test(line))
      .join('\n'),
  );
  const hardware =
    !found.error &&
    !found.fallback &&
    !/swiftshader|llvmpipe/i.test(`${found.description} ${found.architecture}`);
  process.exitCode = hardware ? 0 : 1;
} finally {
  await browser.close();
}
